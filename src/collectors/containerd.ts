// containerd's image-pull and cgroup settings from its config.toml: parallel layer downloads per image
// (max_concurrent_downloads), the snapshotter (lazy-pulling ones start containers before the whole
// image is there) and the runc cgroup driver (SystemdCgroup), which must match the kubelet's.
// Config version 2 (containerd 1.x) keeps them under plugins."io.containerd.grpc.v1.cri", version 3
// (2.x) under plugins.'io.containerd.cri.v1.images' / 'io.containerd.cri.v1.runtime'. Defaults are
// containerd's: 3 downloads, overlayfs, cgroupfs (docs/cri/config.md).
import type { Collector } from './collector.ts';
import type { FactSet } from '../facts/fact-set.ts';
import type { HostRoot } from '../host/host-root.ts';
import { listProcesses } from '../host/processes.ts';
import { detectRancher } from './rancher.ts';
import { firstLines } from '../text/lines.ts';

const FACTS = ['containerd.present', 'containerd.configFile', 'containerd.maxConcurrentDownloads', 'containerd.snapshotter', 'containerd.cgroupDriver', 'containerd.cgroupDriverMatchesKubelet'];
const DEFAULTS = { maxConcurrentDownloads: 3, snapshotter: 'overlayfs', cgroupDriver: 'cgroupfs' };
const LAZY_SNAPSHOTTERS = ['stargz', 'soci', 'nydus', 'overlaybd'];
const MARKERS = ['/usr/bin/containerd', '/usr/local/bin/containerd', '/etc/systemd/system/containerd.service', '/usr/lib/systemd/system/containerd.service', '/lib/systemd/system/containerd.service',
  '/run/containerd/containerd.sock'];
const MAX_CONFIG_BYTES = 1024 * 1024;

export type TomlValue = string | number | boolean | string[];

/**
 * The scalar `key = value` pairs of a TOML file by their full dotted table path
 * (`plugins.io.containerd.grpc.v1.cri.containerd.snapshotter`); quoted segments unquoted. Arrays of
 * strings on one line are kept; inline tables and multi-line values are skipped. Throws on a line
 * that is neither, as containerd would refuse the file.
 */
export function tomlScalars(text: string): Map<string, TomlValue> {
  const values = new Map<string, TomlValue>();
  let table: string[] = [];
  for (const [index, raw] of firstLines(text, 20_000).entries()) {
    const line = stripComment(raw).trim();
    if (line === '') continue;
    const header = /^\[\[?(.+?)\]\]?$/.exec(line);
    if (header) {
      table = splitKey(header[1] as string);
      continue;
    }
    const eq = line.indexOf('=');
    if (eq <= 0) throw new Error(`line ${index + 1} is not "key = value"`);
    const value = parseValue(line.slice(eq + 1).trim());
    if (value !== undefined) values.set([...table, ...splitKey(line.slice(0, eq))].join('.'), value);
  }
  return values;
}

function stripComment(line: string): string {
  let quote = '';
  for (let i = 0; i < line.length; i++) {
    const c = line[i] as string;
    if (quote) {
      if (c === quote) quote = '';
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '#') return line.slice(0, i);
  }
  return line;
}

function splitKey(key: string): string[] {
  return (key.trim().match(/"[^"]*"|'[^']*'|[^.\s]+/g) ?? []).map((part) => part.replace(/^["']|["']$/g, ''));
}

function parseValue(raw: string): TomlValue | undefined {
  if (/^"[^"]*"$|^'[^']*'$/.test(raw)) return raw.slice(1, -1);
  if (raw === 'true' || raw === 'false') return raw === 'true';
  if (/^[+-]?\d+$/.test(raw)) return Number(raw);
  if (/^\[.*\]$/.test(raw)) return [...raw.matchAll(/"([^"]*)"|'([^']*)'/g)].map((m) => (m[1] ?? m[2]) as string);
  return undefined;
}

interface ContainerdSettings { maxConcurrentDownloads?: number; snapshotter?: string; systemdCgroup?: boolean; imports: string[] }

/** The settings the CRI plugin uses, from a parsed config of version 2 or 3. */
export function containerdSettings(values: Map<string, TomlValue>): ContainerdSettings {
  const v3 = values.get('version') === 3;
  const cri = 'plugins.io.containerd.grpc.v1.cri';
  const images = v3 ? 'plugins.io.containerd.cri.v1.images' : cri;
  const runtime = v3 ? 'plugins.io.containerd.cri.v1.runtime.containerd' : `${cri}.containerd`;
  const defaultRuntime = values.get(`${runtime}.default_runtime_name`);
  const runtimeName = typeof defaultRuntime === 'string' && defaultRuntime !== '' ? defaultRuntime : 'runc';
  const downloads = values.get(`${images}.max_concurrent_downloads`);
  const snapshotter = values.get(v3 ? `${images}.snapshotter` : `${runtime}.snapshotter`);
  const systemd = values.get(`${runtime}.runtimes.${runtimeName}.options.SystemdCgroup`);
  const imports = values.get('imports');
  return {
    ...(typeof downloads === 'number' ? { maxConcurrentDownloads: downloads } : {}),
    ...(typeof snapshotter === 'string' && snapshotter !== '' ? { snapshotter } : {}),
    ...(typeof systemd === 'boolean' ? { systemdCgroup: systemd } : {}),
    imports: Array.isArray(imports) ? imports : [],
  };
}

async function configPath(host: HostRoot): Promise<string> {
  const rancher = await detectRancher(host);
  if (rancher) {
    const own = `${rancher.dataDir}/agent/etc/containerd/config.toml`;
    if (await host.exists(own)) return own;
  }
  return '/etc/containerd/config.toml';
}

async function installed(host: HostRoot): Promise<string | undefined> {
  for (const marker of MARKERS) if (await host.exists(marker)) return marker;
  const process = (await listProcesses(host)).find((p) => p.comm === 'containerd');
  return process ? `/proc/${process.pid}/comm` : undefined;
}

/** Why containerd's settings are unknown when its config file is absent under a host root that is not /. */
async function absentUnderRoot(host: HostRoot, file: string, marker: string): Promise<string> {
  const dir = file.slice(0, file.lastIndexOf('/'));
  if (file === '/etc/containerd/config.toml' && !(await host.exists(dir))) {
    return `${dir} is not mounted under the host root ${host.root}: containerd's settings cannot be read (the DaemonSet's no-containerd-config component drops that mount, or a copy left it out; containerd is here: ${marker})`;
  }
  return `no ${file} under the host root ${host.root}: on the host containerd would run on its defaults (3 downloads, overlayfs, cgroupfs), but a host root that does not hold the file (a partial copy) cannot tell; run \`scan\` on the node`;
}

function setAll(facts: FactSet, file: string, settings: ContainerdSettings): void {
  const where = (set: boolean) => (set ? file : 'default');
  const note = (what: string, set: boolean) => (set ? `${what} in ${file}` : `not set in ${file}: containerd's default`);
  facts.set('containerd.maxConcurrentDownloads', settings.maxConcurrentDownloads ?? DEFAULTS.maxConcurrentDownloads, where(settings.maxConcurrentDownloads !== undefined),
    `layers containerd downloads at once per image (max_concurrent_downloads); ${note('set', settings.maxConcurrentDownloads !== undefined)}`);
  const snapshotter = settings.snapshotter ?? DEFAULTS.snapshotter;
  facts.set('containerd.snapshotter', snapshotter, where(settings.snapshotter !== undefined),
    `the CRI snapshotter${LAZY_SNAPSHOTTERS.includes(snapshotter) ? ' (lazy pulling: containers start before every layer is fetched)' : ' (whole images are fetched before a container starts)'}; ${note('set', settings.snapshotter !== undefined)}`);
  const driver = settings.systemdCgroup === undefined ? DEFAULTS.cgroupDriver : settings.systemdCgroup ? 'systemd' : 'cgroupfs';
  facts.set('containerd.cgroupDriver', driver, where(settings.systemdCgroup !== undefined),
    `the runc cgroup driver of containerd's default runtime (SystemdCgroup = ${settings.systemdCgroup ?? false}); ${note('SystemdCgroup', settings.systemdCgroup !== undefined)}`);
}

const containerdCollector: Collector = {
  name: 'containerd',
  provides: FACTS,
  reads: ['kubelet.cgroupDriver'],
  async collect({ host, facts }) {
    const file = await configPath(host);
    const text = await host.readText(file, { maxBytes: MAX_CONFIG_BYTES });
    const marker = text.ok ? file : await installed(host);
    facts.set('containerd.present', marker !== undefined, marker ?? [file, ...MARKERS].join(', '), marker ? 'containerd is the node\'s container runtime' : 'no containerd config, binary, unit, socket or process');
    if (!marker) return;
    if (!text.ok) {
      if (text.code !== 'ENOENT') return FACTS.slice(1).forEach((key) => facts.unknown(key, `${text.reason}; containerd's settings cannot be read`));
      if (!host.isRealRoot) {
        // Under another root (a pod, a copy) an absent file may be a mount or copy that left it out:
        // absent there proves nothing about the host, though containerd is here (found by its marker).
        const reason = await absentUnderRoot(host, file, marker);
        return FACTS.slice(1).forEach((key) => facts.unknown(key, reason));
      }
      facts.set('containerd.configFile', null, file, 'no config file: containerd runs on its defaults');
      setAll(facts, file, { imports: [] });
      return recordDriverMatch(facts);
    }
    facts.set('containerd.configFile', file, file, "containerd's config file");
    let settings: ContainerdSettings;
    try {
      settings = containerdSettings(tomlScalars(text.text));
    } catch (error) {
      return FACTS.slice(2).forEach((key) => facts.unknown(key, `${file} is not valid TOML (${(error as Error).message}); containerd would refuse it — fix the file`));
    }
    if (settings.imports.length > 0) {
      const reason = `${file} imports ${settings.imports.slice(0, 4).join(', ')}, whose settings override it; imported files are not read`;
      return FACTS.slice(2).forEach((key) => facts.unknown(key, reason));
    }
    setAll(facts, file, settings);
    recordDriverMatch(facts);
  },
};

/** Runs after the kubelet collector: whether its cgroupDriver and containerd's agree. */
function recordDriverMatch(facts: FactSet): void {
  const ours = facts.get('containerd.cgroupDriver');
  const kubelet = facts.get('kubelet.cgroupDriver');
  const key = 'containerd.cgroupDriverMatchesKubelet';
  if (!ours || ours.unknown) return facts.unknown(key, `containerd's cgroup driver is unknown${ours?.unknown ? `: ${ours.unknown}` : ''}`);
  if (!kubelet || kubelet.unknown) return facts.unknown(key, `the kubelet's cgroupDriver is unknown${kubelet?.unknown ? `: ${kubelet.unknown}` : ''}`);
  facts.set(key, ours.value === kubelet.value, 'inferred', `whether the kubelet (cgroupDriver ${String(kubelet.value)}, ${kubelet.source}) and containerd (${String(ours.value)}, ${ours.source}) use the same cgroup driver`);
}

export default containerdCollector;
