// Which process is a Kubernetes component (kubelet, kube-scheduler, kube-controller-manager,
// kube-apiserver, kubelite), judged as etcd is: any user can start a process with that name — `exec -a`,
// a symlink named kubelet to another binary — and, after PID wrap, with a lower PID than the real one.
// - verified: root runs it and its /proc/<pid>/exe (the kernel's, not argv) is a root-owned file in
//   root-owned directories; or its cgroup puts it in a system service whose root-owned unit runs as root
//   and starts this binary or a known supervisor (k0s starts etcd and the control plane as other users).
// - inferred: only the name, and root as its owner (or no owner to read: a snapshot) — the agent without
//   CAP_SYS_PTRACE cannot read other processes' exe; the reasoning goes with the fact.
// - refused: another user's process outside such a unit, or a binary others could have replaced.
import path from 'node:path';
import type { HostRoot } from './host-root.ts';
import type { HostProcess } from './processes.ts';
import { findProcesses } from './processes.ts';
import { reconstructUnitCommand } from './systemd-unit.ts';
import { filesTrust, pathChainTrust, processExe, processUids, systemServiceOf, type Trust } from './trust.ts';
import { trustedUids } from './owner-mode.ts';

export interface JudgedProcess {
  process: HostProcess;
  level: 'verified' | 'inferred';
  why: string;
  /** The system service its cgroup names, when that unit vouches for it. */
  unit?: string;
  /** The binary it runs was replaced or removed on disk since it started: it runs the old one until restarted. */
  replaced?: { path: string };
}

export interface ComponentProcesses {
  chosen?: JudgedProcess;
  /** Processes with the name that were not used, each with why. */
  refused: string[];
}

/** Units whose root process starts components as children (the unit's binary name → its subcommands). */
const SUPERVISORS: Record<string, string[]> = { k0s: ['controller', 'server', 'worker'] };

/** A root-run system service whose root-owned unit starts one of `names` or a supervisor. */
export async function vouchingUnit(host: HostRoot, service: string, names: string[]): Promise<Trust> {
  const command = await reconstructUnitCommand(host, service);
  if (!command) return { trusted: false, why: `${service} has no unit file with an ExecStart` };
  if (command.user && command.user !== 'root' && command.user !== '0') return { trusted: false, why: `${service} runs as ${command.user}, not root` };
  const binary = command.args[0]?.text ?? '';
  const base = path.posix.basename(binary);
  const supervises = SUPERVISORS[base]?.includes(command.args[1]?.text ?? '') ?? false;
  if (!names.includes(base) && !supervises) return { trusted: false, why: `${service} starts ${binary || 'nothing'}, not ${names.join(' or ')}` };
  const files = await filesTrust(host, command.files);
  if (!files.trusted) return files;
  if (path.posix.isAbsolute(binary)) {
    const chain = await pathChainTrust(host, binary);
    if (!chain.trusted) return chain;
  }
  return { trusted: true, why: `${service}, a root-owned unit run by root, starts ${supervises ? `${binary} ${command.args[1]?.text}, which supervises it` : binary}` };
}

async function cgroupUnit(host: HostRoot, pid: number, names: string[]): Promise<{ service?: string; trust?: Trust }> {
  const cgroup = await host.readText(`/proc/${pid}/cgroup`, { maxBytes: 64 * 1024 });
  const service = cgroup.ok ? systemServiceOf(cgroup.text) : undefined;
  return service ? { service, trust: await vouchingUnit(host, service, names) } : {};
}

const isRoot = (uids: { real: number; effective: number }): boolean => trustedUids().includes(uids.real) && trustedUids().includes(uids.effective);

/** One process with the component's name: verified, inferred, or the reason it is not used. */
export async function judgeProcess(host: HostRoot, process: HostProcess, names: string[], exeNames?: string[]): Promise<JudgedProcess | string> {
  const { pid } = process;
  const label = `PID ${pid} (${names[0]})`;
  const uids = await processUids(host, pid);
  const exe = await processExe(host, pid);
  const unit = await cgroupUnit(host, pid, exeNames ?? names);
  const byUnit = unit.service && unit.trust?.trusted ? { process, level: 'verified' as const, why: `${label} runs in ${unit.trust.why}`, unit: unit.service } : undefined;
  if ('path' in exe) {
    if (exeNames && !exeNames.includes(path.posix.basename(exe.path))) return `${label} runs ${exe.path}, not ${exeNames.join(' or ')}`;
    if (exe.deleted) return judgeReplaced(process, label, exe.path, uids, byUnit);
    const chain = await pathChainTrust(host, exe.path);
    if (!chain.trusted && !chain.missing) return `${label} runs ${exe.path}, which is not root's to vouch for: ${chain.why}`;
    if (!chain.trusted) {
      if (byUnit) return byUnit;
      if (uids && isRoot(uids)) return { process, level: 'inferred', why: `${label} is root's, but its binary ${exe.path} is not under the host root to check (${chain.why})` };
      return `${label} runs ${exe.path}, which is not under the host root to check, as ${uids ? `uid ${uids.effective}` : 'an owner that cannot be read'}`;
    }
    if (uids && isRoot(uids)) return { process, level: 'verified', why: `${label} is root's ${exe.path} (root-owned, in root-owned directories)` };
    if (byUnit) return byUnit;
    if (!uids) return { process, level: 'inferred', why: `${label} runs the root-owned ${exe.path}, but its owner cannot be read (/proc/${pid}/status)` };
    return `${label} runs ${exe.path} as uid ${uids.effective} outside a root-run unit: any user may start a root-owned binary with flags of their own`;
  }
  if (byUnit) return byUnit;
  if (!uids) return { process, level: 'inferred', why: `only the name matches: ${label}'s owner and binary cannot be read (no /proc/${pid}/status or exe on this host)` };
  if (isRoot(uids)) return { process, level: 'inferred', why: `only the name and owner match: ${label} is root's, its binary cannot be read (${exe.unreadable}; reading it needs CAP_SYS_PTRACE)` };
  return `${label} runs as uid ${uids.effective}, and neither its binary (${exe.unreadable}) nor a root-run unit${unit.trust ? ` (${unit.trust.why})` : ''} vouches for it`;
}

/**
 * Its binary is gone from its path (a package upgrade without a restart, or a removal): what the path
 * holds now says nothing about the process. Root started it, or a root-run unit vouches for it: still
 * the component, with a restart pending; anyone else's is not used.
 */
function judgeReplaced(
  process: HostProcess, label: string, binary: string, uids: { real: number; effective: number } | undefined, byUnit: JudgedProcess | undefined,
): JudgedProcess | string {
  const replaced = { path: binary };
  const pending = `its binary ${binary} was replaced or removed since it started (/proc/${process.pid}/exe: deleted): restart pending`;
  if (byUnit) return { ...byUnit, why: `${byUnit.why}; ${pending}`, replaced };
  if (!uids || isRoot(uids)) {
    const whose = uids ? `${label} is root's` : `${label}'s owner cannot be read`;
    return { process, level: 'inferred', why: `${whose}, but ${pending}`, replaced };
  }
  return `${label} runs as uid ${uids.effective} a binary since removed from ${binary}, outside a root-run unit`;
}

/** The best process named one of `names`: the lowest-PID verified one, else the lowest-PID inferred one. */
export async function pickComponentProcess(
  host: HostRoot, processes: HostProcess[], names: string[], options: { exeNames?: string[]; accept?: (p: HostProcess) => boolean } = {},
): Promise<ComponentProcesses> {
  const candidates = findProcesses(processes, names).filter(options.accept ?? (() => true)).sort((a, b) => a.pid - b.pid);
  const refused: string[] = [];
  let inferred: JudgedProcess | undefined;
  for (const candidate of candidates.slice(0, 64)) {
    const judged = await judgeProcess(host, candidate, names, options.exeNames);
    if (typeof judged === 'string') refused.push(judged);
    else if (judged.level === 'verified') return { chosen: judged, refused };
    else inferred ??= judged;
  }
  return { ...(inferred ? { chosen: inferred } : {}), refused };
}
