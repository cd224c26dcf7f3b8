// Host commands run only when the advisor looks at the machine it runs on (host root "/"): on a
// fake tree or a mounted host root, the binaries on PATH belong to someone else.
import type { HostRoot } from './host-root.ts';

export type CommandResult =
  | { ok: true; stdout: string; exitCode: number; source: string }
  | { ok: false; reason: string; source: string };

export interface CommandOptions {
  timeoutMs?: number;
  /** Exit codes that still count as an answer (tuned-adm exits 1 for "not supported", for example). */
  acceptExitCodes?: number[];
}

export async function runHostCommand(
  host: HostRoot,
  file: string,
  args: string[],
  options: CommandOptions = {},
): Promise<CommandResult> {
  const source = `command:${[file, ...args].join(' ')}`;
  if (!host.isRealRoot) return { ok: false, source, reason: `not run: --host-root ${host.root} is not this machine` };
  // Loaded on first use: the DaemonSet reads a mounted host root and never runs commands (~15 MiB RSS saved).
  const { execa } = await import('execa');
  const result = await execa(file, args, {
    reject: false,
    timeout: options.timeoutMs ?? 5000,
    stdin: 'ignore',
    maxBuffer: 4 * 1024 * 1024,
    env: { LC_ALL: 'C' },
  });
  if (result.timedOut) return { ok: false, source, reason: `${file} did not answer within ${options.timeoutMs ?? 5000} ms` };
  const code = (result as { code?: string }).code;
  if (code === 'ENOENT') return { ok: false, source, reason: `${file} is not installed (not on PATH)` };
  const accepted = [0, ...(options.acceptExitCodes ?? [])];
  if (result.exitCode === undefined || !accepted.includes(result.exitCode)) {
    return { ok: false, source, reason: `${file} failed: ${result.shortMessage ?? `exit ${result.exitCode}`}` };
  }
  return { ok: true, stdout: String(result.stdout), exitCode: result.exitCode, source };
}
