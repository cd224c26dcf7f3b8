// A running etcd, taken into account only when it can be trusted: root's (or the advisor user's)
// process whose /proc/<pid>/exe is an etcd binary, or a process in a system service whose root-owned
// unit starts etcd (its cgroup says which; only systemd can put it there). A process that is merely
// named etcd — `exec -a etcd` by any user, a tenant's container — never picks the directory the fsync
// probe writes to or the URL the agent fetches.
//
// In the DaemonSet the agent is UID 0 without CAP_SYS_PTRACE: /proc/<pid>/exe, environ and cwd of
// root's processes are closed to it, so a static-pod etcd cannot be verified as a process and its
// manifest (root-owned, mounted read-only) is used instead; a systemd etcd is still verified through
// its cgroup and unit.
import path from 'node:path';
import type { HostRoot } from '../../host/host-root.ts';
import { readProcessTable } from '../../host/processes.ts';
import { reconstructUnitCommand, UNIT_DIRS, type EnvValue, type UnitCommand } from '../../host/systemd-unit.ts';
import { filesTrust, pathChainTrust, processExe, processRunsBinary, systemServiceOf } from '../../host/trust.ts';
import { vouchingUnit } from '../../host/component-process.ts';

export interface EtcdProcess {
  pid: number;
  argv: string[];
  /** How the process was verified. */
  trust: string;
  /** The systemd unit that runs it, when one was found (cgroup, or the unit whose ExecStart is its binary). */
  unit?: { name: string; command: UnitCommand; supervisor?: boolean };
}

export interface EtcdProcesses {
  trusted: EtcdProcess[];
  /** Processes named etcd that were not used, with why. */
  ignored: string[];
  procReadable: boolean;
}

const isNamedEtcd = (argv0: string, comm: string): boolean => path.posix.basename(argv0) === 'etcd' || comm === 'etcd';
const startsEtcd = (command: UnitCommand | undefined): boolean => path.posix.basename(command?.args[0]?.text ?? '') === 'etcd';

async function trustedUnit(host: HostRoot, name: string): Promise<EtcdProcess['unit'] | string> {
  const command = await reconstructUnitCommand(host, name);
  if (!command) return `${name} has no unit file with an ExecStart`;
  if (!startsEtcd(command)) {
    // k0s: root's k0scontroller.service runs `k0s controller`, which starts etcd as the user etcd.
    const supervisor = await vouchingUnit(host, name, ['etcd']);
    return supervisor.trusted ? { name, command, supervisor: true } : supervisor.why;
  }
  const trust = await filesTrust(host, command.files);
  return trust.trusted ? { name, command } : trust.why;
}

/** A supervised etcd (another user's) must run a root-owned etcd binary in root-owned directories. */
async function supervisedBinary(host: HostRoot, pid: number, argv: string[]): Promise<string | undefined> {
  const exe = await processExe(host, pid);
  const binary = 'path' in exe ? exe.path : argv[0] ?? '';
  if (path.posix.basename(binary) !== 'etcd' || !path.posix.isAbsolute(binary)) return `PID ${pid} runs ${binary || 'an unknown binary'}, not a root-owned etcd`;
  const chain = await pathChainTrust(host, binary);
  return chain.trusted ? undefined : `PID ${pid} runs ${binary}: ${chain.why}`;
}

/** The unit its cgroup puts the process in; `readable` false when the cgroup file is missing (a snapshot). */
async function unitOfCgroup(host: HostRoot, pid: number): Promise<{ unit?: EtcdProcess['unit']; why: string; readable: boolean }> {
  const cgroup = await host.readText(`/proc/${pid}/cgroup`, { maxBytes: 64 * 1024 });
  if (!cgroup.ok) return { why: cgroup.reason, readable: false };
  const service = systemServiceOf(cgroup.text);
  if (!service) return { why: `PID ${pid} is not in a system service's cgroup`, readable: true };
  const unit = await trustedUnit(host, service);
  return typeof unit === 'string' || !unit ? { why: unit ?? `${service} not found`, readable: true } : { unit, why: '', readable: true };
}

/** The unit whose ExecStart runs `binary` (when the cgroup names none, e.g. a unit run by hand). */
async function unitStarting(host: HostRoot, binary: string): Promise<EtcdProcess['unit'] | undefined> {
  for (const dir of UNIT_DIRS) {
    const listing = await host.listDir(dir);
    for (const name of listing.ok ? listing.entries.filter((entry) => entry.endsWith('.service')) : []) {
      const text = await host.readText(`${dir}/${name}`, { maxBytes: 64 * 1024 });
      if (!text.ok || !text.text.includes(path.posix.basename(binary))) continue;
      const unit = await trustedUnit(host, name);
      if (typeof unit !== 'string' && unit?.command.args[0]?.text === binary) return unit;
    }
  }
  return undefined;
}

async function verify(host: HostRoot, pid: number, argv: string[]): Promise<EtcdProcess | string> {
  const byExe = await processRunsBinary(host, pid, 'etcd');
  const byCgroup = await unitOfCgroup(host, pid);
  const { unit } = byCgroup;
  if (unit?.supervisor) {
    const refused = await supervisedBinary(host, pid, argv);
    if (refused) return `PID ${pid} named etcd is not used: ${refused}`;
    const starter = unit.command.args.slice(0, 2).map((a) => a.text).join(' ');
    return { pid, argv, trust: `runs in ${unit.name} (/proc/${pid}/cgroup), whose root-owned unit starts ${starter}, which supervises it; binary ${argv[0]} is root's`, unit };
  }
  if (unit) return { pid, argv, trust: `runs in ${unit.name}, whose root-owned unit starts ${unit.command.args[0]?.text} (/proc/${pid}/cgroup)`, unit };
  if (!byExe.trusted) return `PID ${pid} named etcd is not used: ${byExe.why}; ${byCgroup.why}`;
  // Without its cgroup (a snapshot), the unit whose ExecStart runs this very binary is the best evidence
  // of where its environment comes from; a readable cgroup outside any unit means it was started by hand.
  const exe = await processExe(host, pid);
  const started = !byCgroup.readable && 'path' in exe ? await unitStarting(host, exe.path) : undefined;
  return { pid, argv, trust: byExe.why, ...(started ? { unit: started } : {}) };
}

export async function findEtcdProcesses(host: HostRoot): Promise<EtcdProcesses> {
  const table = await readProcessTable(host);
  const named = table.processes.filter((p) => isNamedEtcd(p.argv[0] ?? '', p.comm)).sort((a, b) => a.pid - b.pid);
  const result: EtcdProcesses = { trusted: [], ignored: [], procReadable: table.readable };
  for (const process of named) {
    const verified = await verify(host, process.pid, process.argv);
    if (typeof verified === 'string') result.ignored.push(verified);
    else result.trusted.push(verified);
  }
  return result;
}

export type EnvironmentSource = { env: Map<string, EnvValue>; complete: true; source: string } | { env: Map<string, EnvValue>; complete: false; why: string };

/**
 * The environment etcd reads ETCD_* from: /proc/<pid>/environ when readable (the truth), else its
 * unit's Environment= and EnvironmentFile= (what systemd gave it), else nothing known.
 */
export async function environmentOf(host: HostRoot, process: EtcdProcess, parseEnv: (text: string) => Map<string, string>): Promise<EnvironmentSource> {
  const environ = await host.readText(`/proc/${process.pid}/environ`, { maxBytes: 256 * 1024 });
  if (environ.ok) {
    const env = new Map([...parseEnv(environ.text)].map(([key, value]) => [key, { value, origin: `/proc/${process.pid}/environ (${key})` }]));
    return { env, complete: true, source: `/proc/${process.pid}/environ` };
  }
  const unit = process.unit?.command;
  if (!unit) return { env: new Map(), complete: false, why: `${environ.reason}, and no systemd unit runs PID ${process.pid}` };
  // An optional EnvironmentFile that does not exist adds nothing; any other unreadable one hides variables.
  const missing = unit.unreadableEnvironmentFiles.filter((f) => !(f.optional && f.code === 'ENOENT')).map((f) => f.reason);
  if (missing.length > 0) {
    // kubespray's /etc/etcd.env: on the host it exists; in a pod it is there only when mounted.
    const absent = unit.unreadableEnvironmentFiles.filter((f) => f.code === 'ENOENT').map((f) => f.path);
    const hint = absent.length > 0 ? `; if the advisor runs in a pod (the DaemonSet), mount ${absent.join(', ')} read-only (hostPath) so the unit's environment can be read` : '';
    return { env: unit.environment, complete: false, why: `${environ.reason}; ${process.unit?.name}'s EnvironmentFile cannot be read (${missing.join('; ')})${hint}` };
  }
  return { env: unit.environment, complete: true, source: `${process.unit?.name} (${unit.files.join(', ')})` };
}
