// Where etcd keeps its data and serves its metrics, from the sources an installer leaves behind:
// the running process (cmdline and environment), kubeadm's and rke2's static pod manifests (with
// the container path mapped through the hostPath volume), kubespray's /etc/etcd.env and systemd
// unit, and k3s's embedded etcd.
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import type { HostRoot } from '../host/host-root.ts';
import { argsFrom, parseFlags as parsePflags, readProcessTable } from '../host/processes.ts';
import { realHostPath } from '../host/block-device.ts';

export const KUBEADM_MANIFEST = '/etc/kubernetes/manifests/etcd.yaml';
export const RKE2_MANIFEST = '/var/lib/rancher/rke2/agent/pod-manifests/etcd.yaml';
export const KUBESPRAY_ENV = '/etc/etcd.env';
export const KUBESPRAY_UNIT = '/etc/systemd/system/etcd.service';
export const K3S_ETCD_DIR = '/var/lib/rancher/k3s/server/db/etcd';
export const K3S_CONFIG = '/etc/rancher/k3s/config.yaml';

export type EtcdSetup = 'process' | 'kubeadm' | 'rke2' | 'kubespray' | 'k3s';

export interface EtcdDiscovery {
  setup: EtcdSetup;
  /** Where the data dir was read: a file, or /proc/<pid>/cmdline. */
  source: string;
  /** The data dir as a host path (mapped through hostPath when etcd runs in a pod). */
  dataDir: string;
  /** How the path was found or mapped, for the fact's detail. */
  detail: string;
  metricsUrl: string | null;
  metricsSource: string;
  pid: number | null;
  /** The data dir as the etcd process sees it (differs from dataDir inside a container). */
  processDataDir: string | null;
}

export type Flags = Map<string, string>;

/** ["etcd", "--data-dir=/x", "--name", "m1"] → {data-dir: /x, name: m1}. Go's flag package accepts - and --. */
export function parseFlags(args: readonly string[]): Flags {
  // The pflag parser every collector uses, without the per-flag origins etcd's discovery does not need.
  return new Map([...parsePflags(argsFrom([...args], ''))].map(([name, flag]) => [name, flag.value]));
}

/** KEY=value lines of an EnvironmentFile or a NUL-separated /proc/<pid>/environ; quotes removed. */
export function parseEnv(text: string): Map<string, string> {
  const env = new Map<string, string>();
  for (const raw of text.split(/[\0\n]/)) {
    const match = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(raw);
    if (!match) continue;
    env.set(match[1] as string, (match[2] as string).trim().replace(/^"(.*)"$/, '$1').replace(/^'(.*)'$/, '$1'));
  }
  return env;
}

/** The first plain-HTTP URL of a comma list, with a wildcard host turned into loopback. */
export function pickMetricsUrl(urls: string | undefined): string | null {
  for (const url of (urls ?? '').split(',').map((u) => u.trim())) {
    if (!/^https?:\/\//.test(url)) continue;
    return url.replace('://0.0.0.0', '://127.0.0.1').replace('://[::]', '://[::1]').replace(/\/+$/, '');
  }
  return null;
}

function metricsFrom(flags: Flags, env: Map<string, string>): string | null {
  return (
    pickMetricsUrl(flags.get('listen-metrics-urls') ?? env.get('ETCD_LISTEN_METRICS_URLS')) ??
    pickMetricsUrl(flags.get('listen-client-urls') ?? env.get('ETCD_LISTEN_CLIENT_URLS') ?? 'http://localhost:2379')
  );
}

interface PodMapping {
  flags: Flags;
  /** Container mount path → host path. */
  mounts: { mountPath: string; hostPath: string }[];
}

type YamlMap = Record<string, unknown>;
const asList = (value: unknown): YamlMap[] => (Array.isArray(value) ? value.filter((v): v is YamlMap => typeof v === 'object' && v !== null) : []);

/** The etcd container's flags and its hostPath mounts, from a static pod manifest. */
export function parseEtcdManifest(text: string): PodMapping | undefined {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch {
    return undefined;
  }
  const spec = (doc as YamlMap | null)?.spec as YamlMap | undefined;
  const containers = asList(spec?.containers);
  const container = containers.find((c) => c.name === 'etcd') ?? containers[0];
  if (!container) return undefined;
  const listOf = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
  const args = [...listOf(container.command), ...listOf(container.args)].map(String);
  const volumes = new Map(asList(spec?.volumes).map((v) => [String(v.name), (v.hostPath as YamlMap | undefined)?.path]));
  const mounts = asList(container.volumeMounts)
    .map((m) => ({ mountPath: String(m.mountPath ?? ''), hostPath: volumes.get(String(m.name)) }))
    .filter((m): m is { mountPath: string; hostPath: string } => typeof m.hostPath === 'string' && m.mountPath.startsWith('/'));
  return { flags: parseFlags(args), mounts };
}

/** A container path mapped through the deepest hostPath mount that holds it. */
export function mapToHost(containerPath: string, mounts: PodMapping['mounts']): { hostPath: string; via: string } | undefined {
  const holding = mounts
    .filter((m) => containerPath === m.mountPath || containerPath.startsWith(m.mountPath.replace(/\/+$/, '') + '/'))
    .sort((a, b) => b.mountPath.length - a.mountPath.length)[0];
  if (!holding) return undefined;
  const rest = path.posix.relative(holding.mountPath, containerPath);
  return { hostPath: path.posix.join(holding.hostPath, rest), via: `hostPath ${holding.hostPath} mounted at ${holding.mountPath}` };
}

async function readManifest(host: HostRoot, file: string): Promise<PodMapping | undefined> {
  const read = await host.readText(file);
  return read.ok ? parseEtcdManifest(read.text) : undefined;
}

/** PIDs whose command is etcd, lowest first. */
export async function findEtcdProcesses(host: HostRoot): Promise<{ pids: number[]; procReadable: boolean }> {
  const table = await readProcessTable(host);
  const pids = table.processes.filter((p) => path.posix.basename(p.argv[0] ?? '') === 'etcd').map((p) => p.pid);
  return { pids: pids.sort((a, b) => a - b), procReadable: table.readable };
}

async function fromProcess(host: HostRoot, pid: number): Promise<EtcdDiscovery | undefined> {
  const cmdlinePath = `/proc/${pid}/cmdline`;
  const cmdline = await host.readText(cmdlinePath, { maxBytes: 64 * 1024 });
  if (!cmdline.ok) return undefined;
  const flags = parseFlags(cmdline.text.split('\0').slice(1).filter(Boolean));
  const environ = await host.readText(`/proc/${pid}/environ`, { maxBytes: 256 * 1024 });
  const env = environ.ok ? parseEnv(environ.text) : new Map<string, string>();
  let dataDir = flags.get('data-dir');
  let source = `${cmdlinePath} (--data-dir)`;
  if (!dataDir && env.has('ETCD_DATA_DIR')) {
    dataDir = env.get('ETCD_DATA_DIR') as string;
    source = `/proc/${pid}/environ (ETCD_DATA_DIR)`;
  }
  if (!dataDir) {
    dataDir = `${flags.get('name') ?? env.get('ETCD_NAME') ?? 'default'}.etcd`;
    source = `${cmdlinePath} (no --data-dir: etcd's default <name>.etcd)`;
  }
  let detail = `running etcd, PID ${pid}`;
  if (!dataDir.startsWith('/')) {
    const cwd = await realHostPath(host, `/proc/${pid}/cwd`);
    if (!cwd) return undefined;
    dataDir = path.posix.join(cwd, dataDir);
    detail += `, relative to its working directory ${cwd}`;
  }
  const processDataDir = dataDir;
  for (const manifest of [KUBEADM_MANIFEST, RKE2_MANIFEST]) {
    const pod = await readManifest(host, manifest);
    const mapped = pod && mapToHost(processDataDir, pod.mounts);
    if (mapped) {
      dataDir = mapped.hostPath;
      detail += `; in a static pod: ${mapped.via} (${manifest})`;
      break;
    }
  }
  return { setup: 'process', source, dataDir, detail, metricsUrl: metricsFrom(flags, env), metricsSource: cmdlinePath, pid, processDataDir };
}

async function fromManifest(host: HostRoot, file: string, setup: 'kubeadm' | 'rke2'): Promise<EtcdDiscovery | undefined> {
  const pod = await readManifest(host, file);
  if (!pod) return undefined;
  const containerDir = pod.flags.get('data-dir') ?? '/var/lib/etcd';
  const mapped = mapToHost(containerDir, pod.mounts);
  const detail = mapped ? `container path ${containerDir} through ${mapped.via}` : `container path ${containerDir}; no hostPath volume holds it, assumed to be the same on the host`;
  return {
    setup,
    source: file,
    dataDir: mapped?.hostPath ?? containerDir,
    detail,
    metricsUrl: metricsFrom(pod.flags, new Map()),
    metricsSource: file,
    pid: null,
    processDataDir: containerDir,
  };
}

async function fromKubespray(host: HostRoot): Promise<EtcdDiscovery | undefined> {
  const envFile = await host.readText(KUBESPRAY_ENV);
  const unit = await host.readText(KUBESPRAY_UNIT);
  if (!envFile.ok && !unit.ok) return undefined;
  const env = envFile.ok ? parseEnv(envFile.text) : new Map<string, string>();
  const execStart = unit.ok ? (/^ExecStart=(.*)$/m.exec(unit.text)?.[1] ?? '') : '';
  const flags = parseFlags(execStart.split(/\s+/).slice(1));
  const fromFlag = flags.get('data-dir');
  const dataDir = fromFlag ?? env.get('ETCD_DATA_DIR') ?? '/var/lib/etcd';
  const source = fromFlag ? KUBESPRAY_UNIT : env.has('ETCD_DATA_DIR') ? KUBESPRAY_ENV : 'default';
  const detail = source === 'default' ? `neither ${KUBESPRAY_ENV} nor ${KUBESPRAY_UNIT} sets it: etcd's packaged default` : 'kubespray host etcd (systemd)';
  return { setup: 'kubespray', source, dataDir, detail, metricsUrl: metricsFrom(flags, env), metricsSource: envFile.ok ? KUBESPRAY_ENV : KUBESPRAY_UNIT, pid: null, processDataDir: dataDir };
}

async function fromK3s(host: HostRoot): Promise<EtcdDiscovery | undefined> {
  if (!(await host.exists(`${K3S_ETCD_DIR}/member`)) && !(await host.exists(`${K3S_ETCD_DIR}/config`))) return undefined;
  const config = await host.readText(K3S_CONFIG);
  let exposed = false;
  try {
    const doc = config.ok ? (parseYaml(config.text) as YamlMap | null) : null;
    exposed = doc?.['etcd-expose-metrics'] === true || doc?.['etcd-expose-metrics'] === 'true';
  } catch {
    exposed = false;
  }
  return {
    setup: 'k3s',
    source: K3S_ETCD_DIR,
    dataDir: K3S_ETCD_DIR,
    detail: 'k3s embedded etcd',
    metricsUrl: exposed ? 'http://127.0.0.1:2381' : null,
    metricsSource: config.ok ? `${K3S_CONFIG} (etcd-expose-metrics)` : K3S_CONFIG,
    pid: null,
    processDataDir: K3S_ETCD_DIR,
  };
}

export interface DiscoveryResult {
  found: EtcdDiscovery | undefined;
  otherPids: number[];
  procReadable: boolean;
  /** Every place looked at, for the "not found" detail. */
  looked: string[];
}

export async function discoverEtcd(host: HostRoot): Promise<DiscoveryResult> {
  const looked = ['/proc/*/cmdline', KUBEADM_MANIFEST, RKE2_MANIFEST, KUBESPRAY_ENV, KUBESPRAY_UNIT, K3S_ETCD_DIR];
  const { pids, procReadable } = await findEtcdProcesses(host);
  for (const pid of pids) {
    const found = await fromProcess(host, pid);
    if (found) return { found, otherPids: pids.filter((p) => p !== pid), procReadable, looked };
  }
  const found =
    (await fromManifest(host, KUBEADM_MANIFEST, 'kubeadm')) ??
    (await fromManifest(host, RKE2_MANIFEST, 'rke2')) ??
    (await fromKubespray(host)) ??
    (await fromK3s(host));
  return { found, otherPids: [], procReadable, looked };
}
