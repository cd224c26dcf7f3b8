// Host commands run only when the advisor looks at the machine it runs on (host root "/"): on a
// fake tree or a mounted host root, the binaries belong to someone else. And only from fixed system
// directories, when root owns the file and every directory above it and no one else can write them:
// never a path from the process table, PATH or a config file, so no other user chooses what root runs.
import { lstat, realpath } from 'node:fs/promises';
import path from 'node:path';
import type { HostRoot } from './host-root.ts';
import { ownerModeProblem, pathAndAncestors } from './owner-mode.ts';

/** Where host commands come from, in this order. PATH is never searched. */
export const SYSTEM_BIN_DIRS = ['/usr/sbin', '/usr/bin', '/sbin', '/bin'];

export type CommandResult =
  | { ok: true; stdout: string; exitCode: number; source: string }
  | { ok: false; reason: string; source: string };

export interface CommandOptions {
  timeoutMs?: number;
  /** Exit codes that still count as an answer (tuned-adm exits 1 for "not supported", for example). */
  acceptExitCodes?: number[];
}

export type TrustedCommand = { ok: true; path: string } | { ok: false; reason: string };

/** Why someone other than root could replace `file` (a path without symlinks), or undefined. */
async function replaceableBy(file: string): Promise<string | undefined> {
  const chain = pathAndAncestors(file);
  for (const [i, at] of chain.entries()) {
    const info = await lstat(at);
    // In a sticky directory (/tmp) others may add entries but cannot rename or remove root's.
    const problem = ownerModeProblem(info, { ownUid: 'none', rootGroupMayWrite: false, sticky: i < chain.length - 1 });
    if (problem?.kind === 'owner') return `${at} is owned by uid ${info.uid}, not root`;
    if (problem) return `${at} is writable by others than root (mode ${(info.mode & 0o7777).toString(8)})`;
  }
  return undefined;
}

/** The system directories only root can change: the PATH any command we start gets. */
export async function systemPath(): Promise<string> {
  const safe: string[] = [];
  for (const dir of SYSTEM_BIN_DIRS) {
    const real = await realpath(dir).catch(() => undefined);
    if (real && !(await replaceableBy(real).catch(() => 'unreadable'))) safe.push(dir);
  }
  return safe.join(':');
}

/**
 * Runs `work` with PATH limited to the system directories, for libraries that start commands by
 * name (systeminformation runs lscpu and dmidecode through a shell). Collectors run one at a time.
 */
export async function withSystemPath<T>(work: () => Promise<T>): Promise<T> {
  const saved = process.env.PATH;
  process.env.PATH = await systemPath();
  try {
    return await work();
  } finally {
    if (saved === undefined) delete process.env.PATH;
    else process.env.PATH = saved;
  }
}

/** The absolute path of a system command only root can have put or changed there, or why there is none. */
export async function trustedCommand(name: string, dirs: readonly string[] = SYSTEM_BIN_DIRS): Promise<TrustedCommand> {
  if (!/^[A-Za-z0-9][A-Za-z0-9._+-]*$/.test(name)) return { ok: false, reason: `"${name}" is not a command name` };
  for (const dir of dirs) {
    let real: string;
    try {
      real = await realpath(path.join(dir, name));
    } catch {
      continue;
    }
    const info = await lstat(real);
    if (!info.isFile() || (info.mode & 0o111) === 0) continue;
    const problem = await replaceableBy(real);
    if (problem) return { ok: false, reason: `${path.join(dir, name)} is not run: ${problem}` };
    return { ok: true, path: real };
  }
  return { ok: false, reason: `${name} is not installed (looked in ${dirs.join(', ')})` };
}

export async function runHostCommand(
  host: HostRoot,
  file: string,
  args: string[],
  options: CommandOptions = {},
): Promise<CommandResult> {
  const source = `command:${[file, ...args].join(' ')}`;
  if (!host.isRealRoot) return { ok: false, source, reason: `not run: --host-root ${host.root} is not this machine` };
  const command = await trustedCommand(file);
  if (!command.ok) return { ok: false, source, reason: command.reason };
  // Loaded on first use: the DaemonSet reads a mounted host root and never runs commands (~15 MiB RSS saved).
  const { execa } = await import('execa');
  const result = await execa(command.path, args, {
    reject: false,
    timeout: options.timeoutMs ?? 5000,
    stdin: 'ignore',
    maxBuffer: 4 * 1024 * 1024,
    extendEnv: false,
    env: { LC_ALL: 'C', PATH: await systemPath() },
  });
  if (result.timedOut) return { ok: false, source, reason: `${file} did not answer within ${options.timeoutMs ?? 5000} ms` };
  const accepted = [0, ...(options.acceptExitCodes ?? [])];
  if (result.exitCode === undefined || !accepted.includes(result.exitCode)) {
    return { ok: false, source, reason: `${file} failed: ${result.shortMessage ?? `exit ${result.exitCode}`}` };
  }
  return { ok: true, stdout: String(result.stdout), exitCode: result.exitCode, source };
}
