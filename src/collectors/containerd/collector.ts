// containerd's image-pull and cgroup settings from its config.toml and the files it imports:
// parallel layer downloads per image (max_concurrent_downloads, read where this containerd's pull
// path reads it: pull-path.ts), the snapshotter (lazy-pulling ones start containers before the whole
// image is there) and the runc cgroup driver (SystemdCgroup), which must match the kubelet's.
// Defaults are containerd's: 3 downloads, overlayfs, cgroupfs (docs/cri/config.md).
import path from 'node:path';
import type { Collector } from '../collector.ts';
import type { FactSet } from '../../facts/fact-set.ts';
import type { HostRoot } from '../../host/host-root.ts';
import type { WorkloadSnapshot } from '../../workload/snapshot.ts';
import { listProcesses } from '../../host/processes.ts';
import { detectRancher } from '../rancher.ts';
import { dpkgVersion } from '../kubelet/version.ts';
import { fileSettings, mergeSettings, parseToml, TomlProblem, type FileSettings } from './settings.ts';
import { containerdVersionOf, pullPath, type ContainerdVersion } from './pull-path.ts';

const FACTS = ['containerd.present', 'containerd.configFile', 'containerd.pullPath', 'containerd.maxConcurrentDownloads', 'containerd.snapshotter', 'containerd.cgroupDriver', 'containerd.cgroupDriverMatchesKubelet'];
const DEFAULTS = { snapshotter: 'overlayfs', cgroupDriver: 'cgroupfs' };
const LAZY_SNAPSHOTTERS = ['stargz', 'soci', 'nydus', 'overlaybd'];
const MARKERS = ['/usr/bin/containerd', '/usr/local/bin/containerd', '/etc/systemd/system/containerd.service', '/usr/lib/systemd/system/containerd.service', '/lib/systemd/system/containerd.service',
  '/run/containerd/containerd.sock'];
const MAX_CONFIG_BYTES = 1024 * 1024;
const MAX_FILES = 32;

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

/** An import as containerd resolves it (relative to the importing file; `*` matched in the last component). */
async function resolveImport(host: HostRoot, parent: string, entry: string): Promise<string[] | string> {
  const full = path.posix.normalize(path.posix.isAbsolute(entry) ? entry : path.posix.join(path.posix.dirname(parent), entry));
  if (!full.includes('*')) return [full];
  const dir = path.posix.dirname(full);
  if (dir.includes('*')) return `${parent} imports ${entry.slice(0, 80)}, a pattern over directories, which is not followed`;
  const pattern = new RegExp(`^${path.posix.basename(full).replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*')}$`);
  const listing = await host.listDir(dir);
  if (!listing.ok) return listing.code === 'ENOENT' ? [] : `${listing.reason}; ${parent} imports ${entry.slice(0, 80)} from it`;
  return listing.entries.filter((name) => pattern.test(name)).sort().map((name) => `${dir}/${name}`);
}

/** The main file and its imports in containerd's load order, or why they cannot all be read. */
async function loadAll(host: HostRoot, main: string, mainText: string): Promise<{ files: string[]; settings: FileSettings } | { unknown: string }> {
  const loaded = new Set<string>();
  const pending: { file: string; text?: string }[] = [{ file: main, text: mainText }];
  const parsed: FileSettings[] = [];
  while (pending.length > 0) {
    const { file, text } = pending.shift() as { file: string; text?: string };
    if (loaded.has(file)) continue;
    if (loaded.size >= MAX_FILES) return { unknown: `${main} imports more than ${MAX_FILES} files; not read` };
    const read = text === undefined ? await host.readText(file, { maxBytes: MAX_CONFIG_BYTES }) : { ok: true as const, text };
    if (!read.ok) return { unknown: `${read.reason}; containerd loads it (an import), and refuses to start without it` };
    let settings: FileSettings;
    try {
      settings = fileSettings(await parseToml(read.text));
    } catch (error) {
      const message = error instanceof TomlProblem ? error.message : (error as Error).message;
      return { unknown: `${file} is not valid TOML (${message}); containerd would refuse it — fix the file` };
    }
    if (parsed.length > 0 && settings.version > (parsed[0] as FileSettings).version) {
      return { unknown: `${file} (version ${settings.version}) is imported by ${main} (version ${(parsed[0] as FileSettings).version}); containerd refuses an import of a higher version` };
    }
    parsed.push(settings);
    loaded.add(file);
    for (const entry of settings.imports) {
      const resolved = await resolveImport(host, file, entry);
      if (typeof resolved === 'string') return { unknown: resolved };
      pending.push(...resolved.map((f) => ({ file: f })));
    }
  }
  return { files: [...loaded], settings: mergeSettings(parsed) };
}

async function containerdVersion(host: HostRoot, cluster: WorkloadSnapshot | undefined): Promise<{ version?: ContainerdVersion; why: string }> {
  const runtime = cluster?.containerRuntimeVersion;
  if (runtime?.startsWith('containerd://')) {
    const version = containerdVersionOf(runtime, 'api:Node.status.nodeInfo.containerRuntimeVersion');
    if (version) return { version, why: '' };
  }
  const status = await host.readText('/var/lib/dpkg/status', { maxBytes: 16 * 1024 * 1024 });
  for (const pkg of ['containerd.io', 'containerd']) {
    const found = status.ok ? dpkgVersion(status.text, pkg) : undefined;
    const version = found ? containerdVersionOf(found, `/var/lib/dpkg/status (${pkg})`) : undefined;
    if (version) return { version, why: '' };
  }
  const node = cluster ? 'its Node reports no containerd runtime version' : 'no Node to read (scan)';
  return { why: `${node} and no containerd package in /var/lib/dpkg/status; the binary is never run to ask` };
}

function setAll(facts: FactSet, files: string[], settings: FileSettings, version: { version?: ContainerdVersion; why: string }): void {
  const [main] = files;
  const where = (set: boolean) => (set ? files.join(', ') : 'default');
  const note = (set: boolean) => (set ? `set in ${files.length > 1 ? `${main} or its imports (${files.slice(1).join(', ')})` : main}` : `not set in ${main}: containerd's default`);
  const pull = pullPath(settings, version.version, version.why);
  if ('unknown' in pull) {
    facts.unknown('containerd.pullPath', pull.unknown, main);
    facts.unknown('containerd.maxConcurrentDownloads', pull.unknown, main);
  } else {
    facts.set('containerd.pullPath', pull.path, version.version?.source ?? 'inferred', pull.why);
    facts.set('containerd.maxConcurrentDownloads', pull.downloads, where(pull.set), `layers containerd downloads at once per image: ${pull.why}; ${note(pull.set)}`);
  }
  const snapshotter = settings.snapshotter !== undefined && settings.snapshotter !== '' ? settings.snapshotter : DEFAULTS.snapshotter;
  const snapshotterSet = snapshotter === settings.snapshotter;
  facts.set('containerd.snapshotter', snapshotter, where(snapshotterSet),
    `the CRI snapshotter${LAZY_SNAPSHOTTERS.includes(snapshotter) ? ' (lazy pulling: containers start before every layer is fetched)' : ' (whole images are fetched before a container starts)'}; ${note(snapshotterSet)}`);
  const runtime = settings.defaultRuntime !== undefined && settings.defaultRuntime !== '' ? settings.defaultRuntime : 'runc';
  const systemd = settings.systemdCgroup[runtime];
  const driver = systemd === undefined ? DEFAULTS.cgroupDriver : systemd ? 'systemd' : 'cgroupfs';
  facts.set('containerd.cgroupDriver', driver, where(systemd !== undefined),
    `the runc cgroup driver of containerd's default runtime ${runtime} (SystemdCgroup = ${systemd ?? false}); ${note(systemd !== undefined)}`);
}

const containerdCollector: Collector = {
  name: 'containerd',
  provides: FACTS,
  reads: ['kubelet.cgroupDriver'],
  async collect({ host, facts, cluster }) {
    const file = await configPath(host);
    const text = await host.readText(file, { maxBytes: MAX_CONFIG_BYTES });
    const marker = text.ok ? file : await installed(host);
    facts.set('containerd.present', marker !== undefined, marker ?? [file, ...MARKERS].join(', '), marker ? 'containerd is the node\'s container runtime' : 'no containerd config, binary, unit, socket or process');
    if (!marker) return;
    const version = await containerdVersion(host, cluster);
    if (!text.ok) {
      if (text.code !== 'ENOENT') return FACTS.slice(1).forEach((key) => facts.unknown(key, `${text.reason}; containerd's settings cannot be read`));
      if (!host.isRealRoot) {
        // Under another root (a pod, a copy) an absent file may be a mount or copy that left it out:
        // absent there proves nothing about the host, though containerd is here (found by its marker).
        const reason = await absentUnderRoot(host, file, marker);
        return FACTS.slice(1).forEach((key) => facts.unknown(key, reason));
      }
      facts.set('containerd.configFile', null, file, 'no config file: containerd runs on its defaults');
      setAll(facts, [file], mergeSettings([]), version);
      return recordDriverMatch(facts);
    }
    facts.set('containerd.configFile', file, file, "containerd's config file");
    const loaded = await loadAll(host, file, text.text);
    if ('unknown' in loaded) return FACTS.slice(2).forEach((key) => facts.unknown(key, loaded.unknown));
    setAll(facts, loaded.files, loaded.settings, version);
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
