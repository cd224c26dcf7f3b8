// Issue 17 item 1: host commands run only from fixed system directories, when root owns the file and
// every directory above it and no one else can write them. PATH, a path from the process table or
// from a config file never decides what root executes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { chmod, chown, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { HostRoot } from '../../src/host/host-root.ts';
import { runHostCommand, trustedCommand } from '../../src/host/exec.ts';
import inventory from '../../src/collectors/inventory.ts';
import { collectFacts } from '../../src/collectors/run.ts';

const NOBODY = 65534;

async function tempDir(t: { after(fn: () => Promise<void>): void }, prefix: string): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), prefix));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

async function plant(dir: string, name: string, marker: string): Promise<string> {
  const file = path.join(dir, name);
  await writeFile(file, `#!/bin/sh\ntouch ${marker}\necho planted\n`);
  await chmod(file, 0o755);
  return file;
}

test('a command planted first on PATH is not what runs', async (t) => {
  const dir = await tempDir(t, 'nta-path-');
  const marker = path.join(dir, 'ran');
  for (const name of ['journalctl', 'tuned-adm', 'ionice']) await plant(dir, name, marker);
  const saved = process.env.PATH;
  process.env.PATH = `${dir}:${saved}`;
  t.after(() => { process.env.PATH = saved; });
  for (const name of ['journalctl', 'tuned-adm', 'ionice']) {
    const result = await runHostCommand(new HostRoot('/'), name, ['--version']);
    assert.ok(!(result.ok && result.stdout.includes('planted')), `${name} from PATH ran`);
  }
  assert.equal(existsSync(marker), false, 'a planted command ran');
});

test('names with a path are refused: only a command name is looked up, in the system directories', async () => {
  for (const name of ['/tmp/x/kubelet', '../bin/sh', 'a/b', '', '-rf']) {
    const found = await trustedCommand(name);
    assert.equal(found.ok, false, name);
  }
  const sh = await trustedCommand('sh');
  assert.ok(sh.ok && ['/usr/bin/dash', '/usr/bin/bash', '/bin/dash', '/bin/bash'].includes(sh.path), JSON.stringify(sh));
});

test('a binary another user owns or can replace is not run', async (t) => {
  if (process.getuid?.() !== 0) return t.skip('needs root to give files to another user (uid 65534)');
  const base = await tempDir(t, 'nta-trust-');
  await chmod(base, 0o755);
  const dirs = { good: 'good', worldWritable: 'ww', nobodysDir: 'nd', nobodysFile: 'nf', groupWritableFile: 'gw' };
  for (const dir of Object.values(dirs)) await mkdir(path.join(base, dir), { mode: 0o755 });
  for (const dir of Object.values(dirs)) await plant(path.join(base, dir), 'tool', path.join(base, 'ran'));
  await chmod(path.join(base, dirs.worldWritable), 0o777);
  await chown(path.join(base, dirs.nobodysDir), NOBODY, NOBODY);
  await chown(path.join(base, dirs.nobodysFile, 'tool'), NOBODY, NOBODY);
  await chmod(path.join(base, dirs.groupWritableFile, 'tool'), 0o775);

  const good = await trustedCommand('tool', [path.join(base, dirs.good)]);
  assert.deepEqual(good, { ok: true, path: path.join(base, dirs.good, 'tool') }, 'root-owned, 0755 all the way (os.tmpdir() is sticky)');
  const refused = async (dir: string) => {
    const found = await trustedCommand('tool', [path.join(base, dir)]);
    assert.equal(found.ok, false, dir);
    return found.ok ? '' : found.reason;
  };
  assert.match(await refused(dirs.worldWritable), /ww is writable by others than root \(mode 777\)/);
  assert.match(await refused(dirs.nobodysDir), /nd is owned by uid 65534, not root/);
  assert.match(await refused(dirs.nobodysFile), /nf\/tool is owned by uid 65534, not root/);
  assert.match(await refused(dirs.groupWritableFile), /gw\/tool is writable by others than root \(mode 775\)/);
});

test('systeminformation\'s commands (lscpu, dmidecode) come from the system directories, not from PATH', async (t) => {
  const dir = await tempDir(t, 'nta-si-');
  const marker = path.join(dir, 'ran');
  for (const name of ['lscpu', 'dmidecode', 'cat', 'grep']) await plant(dir, name, marker);
  const saved = process.env.PATH;
  process.env.PATH = `${dir}:${saved}`;
  t.after(() => { process.env.PATH = saved; });
  const facts = await collectFacts(new HostRoot('/'), { collectors: [inventory] });
  assert.ok(facts.has('inventory.cpuBrand'));
  assert.equal(existsSync(marker), false, 'systeminformation ran a command planted on PATH');
  assert.equal(process.env.PATH, `${dir}:${saved}`, 'PATH is restored afterwards');
});
