// Issue 17 item 4: the fsync probe runs as root in a directory others may control. An unprivileged
// user who owns the directory swaps the probe file for a symlink to a root-only file as soon as it
// appears; the probe must not write through it (before: the root-only file became megabytes of "Z").
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmod, chown, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { runFsyncProbe } from '../../src/probe/fsync.ts';
import { requireTool } from '../helpers/tools.ts';

const NOBODY = 65534;
const VICTIM_TEXT = 'root-only secret\n';

async function tempDir(t: TestContext, prefix: string): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), prefix));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** A root-only file outside the probe directory. */
async function victim(t: TestContext): Promise<string> {
  const dir = await tempDir(t, 'nta-victim-');
  const file = path.join(dir, 'shadow');
  await writeFile(file, VICTIM_TEXT, { mode: 0o600 });
  return file;
}

/** As uid 65534: replace every probe file that appears in `dir` by a symlink to `target`, in a loop. */
function swapper(t: TestContext, setpriv: string, dir: string, target: string): void {
  const loop = `while :; do for f in '${dir}'/.nta-fsync-probe-*; do if [ -f "$f" ] && [ ! -L "$f" ]; then rm -f "$f" && ln -s '${target}' "$f"; fi; done; done`;
  const child = spawn(setpriv, ['--reuid', String(NOBODY), '--regid', String(NOBODY), '--clear-groups', '--', 'sh', '-c', loop], { stdio: 'ignore' });
  t.after(() => { child.kill('SIGKILL'); });
}

function needsRoot(t: TestContext): string | undefined {
  const setpriv = requireTool(t, 'setpriv', 'util-linux');
  if (!setpriv) return undefined;
  if (process.getuid?.() !== 0) { t.skip('needs root: the attack is a root probe in a directory another user controls'); return undefined; }
  return setpriv;
}

test('a directory owned by another user: the probe refuses it and the swapped-in symlink is never written', async (t) => {
  const setpriv = needsRoot(t);
  if (!setpriv) return;
  const target = await victim(t);
  const dir = await tempDir(t, 'nta-owned-');
  await chown(dir, NOBODY, NOBODY);
  await chmod(dir, 0o755);
  swapper(t, setpriv, dir, target);
  const result = await runFsyncProbe({ dir, sizeBytes: 1024 * 1024 });
  assert.equal(await readFile(target, 'utf8'), VICTIM_TEXT, 'the root-only file was overwritten through the symlink');
  assert.deepEqual(result.ok ? 'ran' : [result.code, result.reason.split(';')[0]], ['EUNSAFE', `${dir} is owned by uid ${NOBODY}: its owner could swap the probe file for a link to any file`]);
});

test('a world-writable directory without the sticky bit is refused', async (t) => {
  const dir = await tempDir(t, 'nta-open-');
  await chmod(dir, 0o777);
  const result = await runFsyncProbe({ dir, sizeBytes: 64 * 1024 });
  assert.equal(result.ok ? 'ran' : result.code, 'EUNSAFE');
  assert.match(result.ok ? '' : result.reason, /writable by everyone and has no sticky bit; not probed: probe a directory only root can change/);
});

test('a sticky world-writable directory (like /tmp): the probe runs, the swapper cannot touch its file', async (t) => {
  const setpriv = needsRoot(t);
  if (!setpriv) return;
  const target = await victim(t);
  const dir = await tempDir(t, 'nta-sticky-');
  await chmod(dir, 0o1777);
  swapper(t, setpriv, dir, target);
  const result = await runFsyncProbe({ dir, sizeBytes: 1024 * 1024 });
  assert.ok(result.ok, result.ok ? '' : result.reason);
  assert.equal(await readFile(target, 'utf8'), VICTIM_TEXT);
});
