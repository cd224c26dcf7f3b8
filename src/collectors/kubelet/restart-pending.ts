// Whether the running kubelet is not what its files and binary now say: a restart pending. Each part
// is decided by the strongest evidence this mode can read, and nothing is "no" on missing data:
// - configuration: the running values (/configz, agent with get nodes/configz) against the files,
//   else whether a file the kubelet reads was modified after it started (mtime against its start
//   time from /proc/<pid>/stat, readable without ptrace);
// - binary: /proc/<pid>/exe "(deleted)" (needs CAP_SYS_PTRACE for another process), else the binary's
//   ctime against the start time (a package upgrade renames a new file into place; dpkg keeps the
//   packaged mtime but not the ctime), else the version the kubelet reports on its Node against the
//   installed package's.
import type { FactSet } from '../../facts/fact-set.ts';
import type { HostRoot } from '../../host/host-root.ts';
import type { WorkloadSnapshot } from '../../workload/snapshot.ts';
import { processExe } from '../../host/trust.ts';
import { processStartedAt } from '../../host/process-start.ts';
import type { KubeletCommand } from './command.ts';
import { dpkgVersion } from './version.ts';

type Part = { value: boolean; source: string; detail: string; why: string[] } | { unknown: string };

/** Both parts' reason where no kubelet process runs (a snapshot, a stopped kubelet): said once. */
const NO_PROCESS = 'no running kubelet process to compare with';

const when = (ms: number): string => new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');

async function changedSince(host: HostRoot, files: string[], startedAt: number): Promise<{ changed: string[] } | { unknown: string }> {
  const changed: string[] = [];
  for (const file of [...new Set(files)].slice(0, 32)) {
    const info = await host.stat(file);
    if (!info.ok) {
      if (info.code === 'ENOENT') continue;
      return { unknown: `${info.reason}; whether it changed after the kubelet started cannot be told` };
    }
    if (info.info.mtimeMs > startedAt + 1000) changed.push(`${file} (modified ${when(info.info.mtimeMs)})`);
  }
  return { changed };
}

/** The configuration part: drift seen in /configz, else files modified after the start. */
export async function configPart(host: HostRoot, drift: string[] | { unknown: string }, files: string[], startedAt: number | undefined, source: string): Promise<Part> {
  if (Array.isArray(drift)) {
    return { value: drift.length > 0, source: 'running kubelet /configz', detail: drift.length > 0 ? drift.join('; ') : 'the running kubelet\'s values are what its files say', why: drift };
  }
  if (startedAt === undefined) return { unknown: source.startsWith('/proc/') ? `the kubelet's start time cannot be read (${source})` : NO_PROCESS };
  const changed = await changedSince(host, files, startedAt);
  if ('unknown' in changed) return { unknown: `${drift.unknown}; ${changed.unknown}` };
  const started = `the kubelet started ${when(startedAt)}`;
  if (changed.changed.length === 0) return { value: false, source, detail: `no file it reads changed since ${started} (its running values are not read: ${drift.unknown})`, why: [] };
  const why = changed.changed.map((c) => `${c} after ${started}: its running values may differ (not read: ${drift.unknown})`);
  return { value: true, source: 'inferred', detail: why.join('; '), why };
}

const release = (version: string): string => version.replace(/^v/, '').replace(/[-+~].*$/, '');

async function versionPart(host: HostRoot, cluster: WorkloadSnapshot | undefined): Promise<Part | undefined> {
  const reported = cluster?.kubeletVersion;
  if (!reported) return undefined;
  const status = await host.readText('/var/lib/dpkg/status', { maxBytes: 16 * 1024 * 1024 });
  const installed = status.ok ? dpkgVersion(status.text, 'kubelet') : undefined;
  if (!installed) return undefined;
  const same = release(reported) === release(installed);
  const detail = `the kubelet reports ${reported} on its Node; package kubelet ${installed} is installed (/var/lib/dpkg/status)`;
  return { value: !same, source: '/var/lib/dpkg/status', detail, why: same ? [] : [`${detail}: the binary on disk is another version than the running one`] };
}

/** The binary part: exe, else ctime against the start, else the versions. */
export async function binaryPart(host: HostRoot, command: KubeletCommand, startedAt: number | undefined, cluster: WorkloadSnapshot | undefined): Promise<Part> {
  if (command.via !== 'process' || command.pid === undefined) return { unknown: NO_PROCESS };
  const exe = await processExe(host, command.pid);
  const exeSource = `/proc/${command.pid}/exe`;
  if ('path' in exe) {
    return exe.deleted
      ? { value: true, source: exeSource, detail: `the running kubelet's binary ${exe.path} was replaced or removed since it started: it runs the old one until restarted (restart pending)`, why: [`binary ${exe.path} replaced since the kubelet started (${exeSource}: deleted)`] }
      : { value: false, source: exeSource, detail: `the running kubelet runs ${exe.path} as it is on disk`, why: [] };
  }
  const version = await versionPart(host, cluster);
  if (version && 'value' in version && version.value) return version;
  const binary = command.binary;
  const info = binary?.startsWith('/') ? await host.stat(binary) : undefined;
  if (info?.ok && startedAt !== undefined) {
    const replaced = info.info.ctimeMs > startedAt + 1000;
    const detail = `${binary} changed (ctime ${when(info.info.ctimeMs)}) ${replaced ? 'after' : 'before'} the kubelet started (${when(startedAt)}); ${exe.unreadable} (reading it needs CAP_SYS_PTRACE)`;
    return { value: replaced, source: 'inferred', detail, why: replaced ? [`binary ${binary} replaced after the kubelet started (ctime ${when(info.info.ctimeMs)})`] : [] };
  }
  if (version) return version;
  return { unknown: `${exe.unreadable} (reading it needs CAP_SYS_PTRACE), ${binary?.startsWith('/') ? `${binary} is not readable under the host root` : 'the command names no binary path'} and no Node version to set against an installed package` };
}

/** kubelet.binaryReplaced, kubelet.restartPending and kubelet.restartPendingWhy from the two parts (three-valued: unknown never reads as no). */
export function recordRestartPending(facts: FactSet, config: Part, binary: Part, restart: string): void {
  if ('unknown' in binary) facts.unknown('kubelet.binaryReplaced', binary.unknown);
  else facts.set('kubelet.binaryReplaced', binary.value, binary.source, binary.detail);
  if ('unknown' in config) facts.unknown('kubelet.configDrift', config.unknown);
  else facts.set('kubelet.configDrift', config.why, config.source, config.detail);
  const parts = [config, binary];
  const why = parts.flatMap((p) => ('unknown' in p ? [] : p.why));
  facts.set('kubelet.restartCommand', restart, 'inferred');
  if (why.length > 0) {
    const first = parts.find((p) => !('unknown' in p) && p.value) as { source: string };
    facts.set('kubelet.restartPending', true, first.source, why.join('; '));
    facts.set('kubelet.restartPendingWhy', why, 'inferred');
    return;
  }
  const unknown = [...new Set(parts.filter((p): p is { unknown: string } => 'unknown' in p).map((p) => p.unknown))];
  if (unknown.length > 0) {
    facts.unknown('kubelet.restartPending', unknown.join('; '));
    facts.unknown('kubelet.restartPendingWhy', unknown.join('; '));
    return;
  }
  facts.set('kubelet.restartPending', false, 'inferred', parts.map((p) => ('unknown' in p ? '' : p.detail)).join('; '));
  facts.set('kubelet.restartPendingWhy', [], 'inferred');
}

export { processStartedAt };
