// Where etcd keeps its data and serves its metrics, from trusted sources only (see process.ts
// and host/trust.ts): a verified running etcd (cmdline, environ or its unit's environment), root's
// kubeadm and rke2 static pod manifests (the container path mapped through the hostPath volume),
// root's etcd unit (kubespray, Debian) with its EnvironmentFile, and k3s's embedded etcd. When nothing
// says where the data is, the data dir is unknown with the reason, never a default presented as found.
import path from 'node:path';
import type { HostRoot } from '../../host/host-root.ts';
import { argsFrom, listProcesses, parseFlags as parsePflags } from '../../host/processes.ts';
import { realHostPath } from '../../host/block-device.ts';
import { parseEnvironmentFile, reconstructUnitCommand } from '../../host/systemd-unit.ts';
import { fileTrust, filesTrust } from '../../host/trust.ts';
import { environmentOf, findEtcdProcesses, type EnvironmentSource, type EtcdProcess } from './process.ts';
import { detectRancher } from '../rancher.ts';
import { parseStaticPod, type StaticPod } from '../static-pod.ts';

export { findEtcdProcesses } from './process.ts';

export const KUBEADM_MANIFEST = '/etc/kubernetes/manifests/etcd.yaml';
export const RKE2_MANIFEST = '/var/lib/rancher/rke2/agent/pod-manifests/etcd.yaml';
export const KUBESPRAY_ENV = '/etc/etcd.env';
export const KUBESPRAY_UNIT = '/etc/systemd/system/etcd.service';
export const K3S_ETCD_DIR = '/var/lib/rancher/k3s/server/db/etcd';
export const K3S_CONFIG = '/etc/rancher/k3s/config.yaml';

export type EtcdSetup = 'process' | 'systemd' | 'kubeadm' | 'rke2' | 'kubespray' | 'k3s';
/** Units that run etcd on hosts: kubespray's and Debian's etcd.service, Flatcar's etcd-member. */
export const ETCD_UNITS = ['etcd.service', 'etcd-member.service'];

export interface EtcdDiscovery {
  setup: EtcdSetup;
  /** Where the data dir was read: a file, or /proc/<pid>/cmdline. */
  source: string;
  /** The data dir as a host path (mapped through hostPath when etcd runs in a pod); null when nothing says. */
  dataDir: string | null;
  /** Why the data dir is not known, when it is not. */
  dataDirUnknown?: string;
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

/** The etcd container's flags and its hostPath mounts, from a static pod manifest (collectors/static-pod.ts). */
export function parseEtcdManifest(text: string): PodMapping | undefined {
  let pod: StaticPod;
  try {
    pod = parseStaticPod('', text, 'etcd');
  } catch {
    return undefined;
  }
  if (pod.error !== undefined) return undefined;
  return { flags: parseFlags(pod.args.map((arg) => arg.text)), mounts: pod.mounts.filter((m) => m.mountPath.startsWith('/')) };
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

async function readManifest(host: HostRoot, file: string, ignored: string[]): Promise<PodMapping | undefined> {
  const read = await host.readText(file);
  if (!read.ok) return undefined;
  const trust = await fileTrust(host, file);
  if (!trust.trusted) {
    ignored.push(`${file} is not used: ${trust.why}`);
    return undefined;
  }
  return parseEtcdManifest(read.text);
}

interface DataDir {
  dataDir: string | null;
  source: string;
  detail: string;
  /** Set when nothing says where the data is. */
  unknown?: string;
}

/**
 * --data-dir, else ETCD_DATA_DIR, else — only when the whole environment is known — etcd's own
 * default "<name>.etcd" in its working directory. Never a guess presented as found.
 */
function dataDirOf(flags: Flags, flagSource: string, env: EnvironmentSource, cwd: string | undefined): DataDir {
  const flag = flags.get('data-dir');
  if (flag) return { dataDir: flag, source: `${flagSource} (--data-dir)`, detail: '' };
  const fromEnv = env.env.get('ETCD_DATA_DIR');
  if (fromEnv) return { dataDir: fromEnv.value, source: fromEnv.origin, detail: '' };
  if (!env.complete) {
    const unknown = `no --data-dir on etcd's command line (${flagSource}), and its environment cannot be read: ${env.why}`;
    return { dataDir: null, source: flagSource, detail: '', unknown };
  }
  const name = flags.get('name') ?? env.env.get('ETCD_NAME')?.value ?? 'default';
  if (cwd === undefined) return { dataDir: null, source: flagSource, detail: '', unknown: `etcd uses its default ${name}.etcd in its working directory, which cannot be read` };
  return { dataDir: path.posix.join(cwd, `${name}.etcd`), source: 'default', detail: `neither --data-dir (${flagSource}) nor ETCD_DATA_DIR (${env.source}) is set: etcd's default <name>.etcd in its working directory ${cwd}` };
}

function envMap(env: EnvironmentSource): Map<string, string> {
  return new Map([...env.env].map(([key, value]) => [key, value.value]));
}

async function fromProcess(host: HostRoot, process: EtcdProcess, ignored: string[]): Promise<EtcdDiscovery> {
  const cmdlinePath = `/proc/${process.pid}/cmdline`;
  const flags = parseFlags(process.argv.slice(1));
  const env = await environmentOf(host, process);
  const relative = !(flags.get('data-dir') ?? env.env.get('ETCD_DATA_DIR')?.value ?? '/').startsWith('/');
  const cwd = (await realHostPath(host, `/proc/${process.pid}/cwd`)) ?? process.unit?.command.workingDirectory;
  const found = dataDirOf(flags, cmdlinePath, env, cwd);
  let detail = `running etcd, PID ${process.pid} (${process.trust})`;
  let dataDir = found.dataDir;
  if (dataDir && relative && found.source !== 'default') {
    if (!cwd) return { ...base(process, cmdlinePath, flags, env), dataDir: null, dataDirUnknown: `${dataDir} is relative and PID ${process.pid}'s working directory cannot be read`, source: found.source, detail };
    dataDir = path.posix.join(cwd, dataDir);
    detail += `, relative to its working directory ${cwd}`;
  }
  if (found.detail) detail += `; ${found.detail}`;
  const processDataDir = dataDir;
  for (const manifest of dataDir ? [KUBEADM_MANIFEST, RKE2_MANIFEST] : []) {
    const pod = await readManifest(host, manifest, ignored);
    const mapped = pod && mapToHost(processDataDir as string, pod.mounts);
    if (mapped) {
      dataDir = mapped.hostPath;
      detail += `; in a static pod: ${mapped.via} (${manifest})`;
      break;
    }
  }
  return {
    ...base(process, cmdlinePath, flags, env), source: found.source, dataDir, detail, processDataDir,
    ...(found.unknown ? { dataDirUnknown: found.unknown } : {}),
  };
}

function base(process: EtcdProcess, cmdlinePath: string, flags: Flags, env: EnvironmentSource) {
  return { setup: (process.unit ? 'systemd' : 'process') as EtcdSetup, metricsUrl: metricsFrom(flags, envMap(env)), metricsSource: cmdlinePath, pid: process.pid, processDataDir: null };
}

async function fromManifest(host: HostRoot, file: string, setup: 'kubeadm' | 'rke2', ignored: string[]): Promise<EtcdDiscovery | undefined> {
  const pod = await readManifest(host, file, ignored);
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

/** etcd as a systemd service that is not running (a snapshot): its unit's ExecStart and environment. */
async function fromUnit(host: HostRoot, ignored: string[]): Promise<EtcdDiscovery | undefined> {
  for (const name of ETCD_UNITS) {
    const command = await reconstructUnitCommand(host, name);
    if (!command || path.posix.basename(command.args[0]?.text ?? '') !== 'etcd') continue;
    const trust = await filesTrust(host, command.files);
    if (!trust.trusted) {
      ignored.push(`${name} is not used: ${trust.why}`);
      continue;
    }
    const unit = command.files[0] as string;
    const flags = parseFlags(command.args.slice(1).map((arg) => arg.text));
    const missing = command.unreadableEnvironmentFiles.filter((f) => !(f.optional && f.code === 'ENOENT')).map((f) => f.reason);
    const env: EnvironmentSource = missing.length > 0
      ? { env: command.environment, complete: false, why: `its EnvironmentFile cannot be read (${missing.join('; ')})` }
      : { env: command.environment, complete: true, source: command.files.join(', ') };
    const found = dataDirOf(flags, unit, env, command.workingDirectory);
    const kubespray = command.files.includes(KUBESPRAY_ENV) || command.unreadableEnvironmentFiles.some((f) => f.path === KUBESPRAY_ENV);
    const detail = `${kubespray ? 'kubespray host etcd' : 'etcd'} run by ${name} (not running here)${found.detail ? `; ${found.detail}` : ''}`;
    return {
      setup: kubespray ? 'kubespray' : 'systemd', source: found.source, dataDir: found.dataDir, detail,
      metricsUrl: metricsFrom(flags, envMap(env)), metricsSource: unit, pid: null, processDataDir: found.dataDir,
      ...(found.unknown ? { dataDirUnknown: found.unknown } : {}),
    };
  }
  return undefined;
}

/** kubespray's /etc/etcd.env without its unit (a partial copy): the data dir it names, if any. */
async function fromKubesprayEnv(host: HostRoot, ignored: string[]): Promise<EtcdDiscovery | undefined> {
  const envFile = await host.readText(KUBESPRAY_ENV);
  // Empty: the kubespray overlay's FileOrCreate mount on a node without one (a worker), not an etcd.
  if (!envFile.ok || envFile.text.trim() === '') return undefined;
  const trust = await fileTrust(host, KUBESPRAY_ENV);
  if (!trust.trusted) {
    ignored.push(`${KUBESPRAY_ENV} is not used: ${trust.why}`);
    return undefined;
  }
  const env = parseEnvironmentFile(envFile.text);
  const dataDir = env.get('ETCD_DATA_DIR') ?? null;
  return {
    setup: 'kubespray', source: KUBESPRAY_ENV, dataDir, detail: `kubespray host etcd (${KUBESPRAY_ENV}, no etcd unit found)`,
    metricsUrl: metricsFrom(new Map(), env), metricsSource: KUBESPRAY_ENV, pid: null, processDataDir: dataDir,
    ...(dataDir ? {} : { dataDirUnknown: `${KUBESPRAY_ENV} sets no ETCD_DATA_DIR and no etcd unit says where the data is` }),
  };
}

async function fromK3s(host: HostRoot): Promise<EtcdDiscovery | undefined> {
  const rancher = await detectRancher(host);
  const dataRoot = rancher?.distro === 'k3s' ? rancher.dataDir : '/var/lib/rancher/k3s';
  const dir = `${dataRoot}/server/db/etcd`;
  if (!(await host.exists(`${dir}/member`)) && !(await host.exists(`${dir}/config`))) return undefined;
  // --etcd-expose-metrics from config.yaml, its drop-ins, the unit's ExecStart or the running process: the last wins.
  const flag = rancher?.distro === 'k3s' ? parsePflags(rancher.args).get('etcd-expose-metrics') : undefined;
  const exposed = flag !== undefined && flag.value !== 'false';
  return {
    setup: 'k3s',
    source: dir,
    dataDir: dir,
    detail: 'k3s embedded etcd',
    metricsUrl: exposed ? 'http://127.0.0.1:2381' : null,
    metricsSource: flag ? `${flag.origin} (etcd-expose-metrics)` : K3S_CONFIG,
    pid: null,
    processDataDir: dir,
  };
}

export interface DiscoveryResult {
  found: EtcdDiscovery | undefined;
  otherPids: number[];
  procReadable: boolean;
  /** Processes and files that look like etcd's but were not trusted, with why. */
  ignored: string[];
  /** Every place looked at, for the "not found" detail. */
  looked: string[];
}

export async function discoverEtcd(host: HostRoot): Promise<DiscoveryResult> {
  const looked = ['/proc/*/cmdline', KUBEADM_MANIFEST, RKE2_MANIFEST, ...ETCD_UNITS, KUBESPRAY_ENV, K3S_ETCD_DIR];
  const processes = await findEtcdProcesses(host);
  const ignored = [...processes.ignored];
  const [first, ...others] = processes.trusted;
  if (first) return { found: await fromProcess(host, first, ignored), otherPids: others.map((p) => p.pid), procReadable: processes.procReadable, ignored, looked };
  const found =
    (await fromManifest(host, KUBEADM_MANIFEST, 'kubeadm', ignored)) ??
    (await fromManifest(host, RKE2_MANIFEST, 'rke2', ignored)) ??
    (await fromUnit(host, ignored)) ??
    (await fromKubesprayEnv(host, ignored)) ??
    (await fromK3s(host));
  return { found, otherPids: [], procReadable: processes.procReadable, ignored, looked };
}
