// A local user's side of a check-then-use race: processes as nobody (via setpriv) that swap a name
// the advisor reads, as fast as they can, between what the reader expects and a symlink to what it
// must never reach. Used by the tests under test/security/ that race root's reads.
import { spawn, type ChildProcess } from 'node:child_process';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { TestContext } from 'node:test';
import { requireTool } from './tools.ts';

export const NOBODY = 65534;

export function asNobody(setpriv: string, command: string[]): ChildProcess {
  return spawn(setpriv, ['--reuid', String(NOBODY), '--regid', String(NOBODY), '--clear-groups', '--', ...command], { stdio: ['ignore', 'pipe', 'ignore'] });
}

// Swaps `name` in `dir`. 'file': a regular file ↔ a symlink to `target` ↔ a symlink to /dev/ptmx
// (rename, atomic). 'directory': the directory `name` ↔ a symlink to `target`, a directory outside
// the host tree (a directory cannot be renamed over a symlink: unlink between). What the reader
// expects stays 0.1 ms, so that some reads get it.
const SWAPPER = `const fs = require('node:fs'); const [mode, dir, name, target] = process.argv.slice(1);
process.chdir(dir);
const linger = () => { const until = process.hrtime.bigint() + 100000n; while (process.hrtime.bigint() < until); };
for (;;) {
  if (mode === 'file') {
    fs.writeFileSync('r.tmp', 'a: 1\\n'); fs.renameSync('r.tmp', name); linger();
    fs.symlinkSync(target, 'f.tmp'); fs.renameSync('f.tmp', name);
    fs.symlinkSync('/dev/ptmx', 'p.tmp'); fs.renameSync('p.tmp', name);
  } else {
    fs.renameSync(name, 'd.tmp'); fs.symlinkSync(target, name);
    fs.unlinkSync(name); fs.renameSync('d.tmp', name); linger();
  }
}`;

export type SwapMode = 'file' | 'directory';

/** The swapper as nobody: `[mode, dir, name, target]` as above. */
export function startSwapper(setpriv: string, swap: [SwapMode, string, string, string]): ChildProcess {
  return asNobody(setpriv, [process.execPath, '-e', SWAPPER, ...swap]);
}

export function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

export interface Race {
  setpriv: string;
  /** A fresh directory others may enter. */
  base: string;
  /** Killed after the test, before `base` is removed. */
  own(child: ChildProcess): ChildProcess;
}

/** What a race needs, or undefined when the test cannot run here (skipped with the reason). */
export async function raceSetup(t: TestContext, prefix: string): Promise<Race | undefined> {
  const setpriv = requireTool(t, 'setpriv', 'util-linux');
  if (!setpriv) return undefined;
  if (process.getuid?.() !== 0) {
    t.skip('needs root: the attack is a root reader and files owned by nobody');
    return undefined;
  }
  const base = await mkdtemp(path.join(os.tmpdir(), prefix));
  await chmod(base, 0o755);
  const children: ChildProcess[] = [];
  t.after(async () => {
    for (const child of children) child.kill('SIGKILL');
    await Promise.all(children.map(exited));
    await rm(base, { recursive: true, force: true });
  });
  return { setpriv, base, own: (child) => (children.push(child), child) };
}
