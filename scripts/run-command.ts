// A command run to its end with its output collected: exit code (127 when it cannot start, with why),
// stdout, stderr; `echo` also streams both to our stderr (a build's progress).
import { spawn } from 'node:child_process';

export interface CommandResult { code: number; stdout: string; stderr: string }

export interface CommandOptions { env?: NodeJS.ProcessEnv; input?: string; echo?: boolean; cwd?: string }

export function runCommand(binary: string, args: string[], opts: CommandOptions = {}): Promise<CommandResult> {
  return new Promise((resolve) => {
    const child = spawn(binary, args, { env: opts.env ?? process.env, cwd: opts.cwd, stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => { out.push(c); if (opts.echo) process.stderr.write(c); });
    child.stderr.on('data', (c: Buffer) => { err.push(c); if (opts.echo) process.stderr.write(c); });
    child.stdin.on('error', () => {});
    child.on('error', (e) => resolve({ code: 127, stdout: '', stderr: `${binary}: ${e.message}` }));
    child.on('close', (code) => resolve({ code: code ?? 1, stdout: Buffer.concat(out).toString(), stderr: Buffer.concat(err).toString() }));
    child.stdin.end(opts.input ?? '');
  });
}
