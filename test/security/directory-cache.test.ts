// A scan's reads share the directory descriptors their walks opened (src/host/directory-cache.ts).
// What that must not change: a directory swapped for a symlink, or moved out of the root, between
// two reads of one scan never leads a read outside the root (the descriptor is the directory that
// was opened; every read checks the kernel's name for what it reached); answers with a warm cache
// are the answers of a fresh walk; nothing stays open after a scan, however many scans run; the
// descriptors held at once are bounded.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmod, chown, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { lstatSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync } from 'node:fs';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { HostRoot } from '../../src/host/host-root.ts';
import { MAX_ENTRIES } from '../../src/host/directory-cache.ts';
import { runScan } from '../../src/scan.ts';
import { fixtureHost, tempHost } from '../helpers/fixtures.ts';
import { requireTool } from '../helpers/tools.ts';

const DB = '/var/lib/etcd/member/snap/db';
const openDescriptors = (): number => readdirSync('/proc/self/fd').length;
const idle = (): Promise<void> => new Promise((resolve) => setImmediate(() => setImmediate(resolve)));

async function swapTree(t: { after(fn: () => Promise<void>): void }): Promise<{ root: string; outside: string; base: string }> {
  const base = await mkdtemp(path.join(os.tmpdir(), 'nta-dircache-'));
  t.after(() => rm(base, { recursive: true, force: true }));
  const root = path.join(base, 'root');
  const outside = path.join(base, 'outside');
  await mkdir(path.join(root, 'var/lib/etcd/member/snap'), { recursive: true });
  await writeFile(path.join(root, 'var/lib/etcd/member/snap/db'), 'inside\n');
  await mkdir(path.join(outside, 'member/snap'), { recursive: true });
  await writeFile(path.join(outside, 'member/snap/db'), 'OUTSIDE\n');
  return { root, outside, base };
}

// The swaps are synchronous: no turn of the event loop passes between the two reads, as inside a
// scan whose collector reads a file, something else swaps, and it reads again.
test('a cached directory moved out of the root and replaced by a symlink out: the second read is refused, not read outside', async (t) => {
  const { root, outside, base } = await swapTree(t);
  const host = new HostRoot(root);
  await host.sharingDirectories(async () => {
    const first = await host.readText(DB);
    assert.equal(first.ok && first.text, 'inside\n');
    assert.ok(host.heldDirectories >= 4, `the walk's directories are held for the scan (${host.heldDirectories})`);
    renameSync(path.join(root, 'var/lib/etcd'), path.join(base, 'moved-out'));
    symlinkSync(outside, path.join(root, 'var/lib/etcd'));
    const second = await host.readText(DB);
    assert.deepEqual(!second.ok && second.code, 'EXDEV', `read ${second.ok ? JSON.stringify(second.text) : ''}: the cached directory lies outside the root now`);
    const listing = await host.listDir('/var/lib/etcd/member');
    assert.equal(listing.ok, false, 'nor is the moved directory listed');
  });
  assert.equal(host.heldDirectories, 0, 'closed when the scan ends');
  const next = await host.readText(DB);
  assert.equal(next.ok, false, 'the next scan walks the symlink inside the root, where nothing is');
});

test('a cached directory renamed inside the root and replaced by a symlink out: reads stay on the directory opened, inside', async (t) => {
  const { root, outside } = await swapTree(t);
  const host = new HostRoot(root);
  await host.sharingDirectories(async () => {
    assert.equal((await host.readText(DB)).ok, true);
    renameSync(path.join(root, 'var/lib/etcd'), path.join(root, 'var/lib/etcd.old'));
    symlinkSync(outside, path.join(root, 'var/lib/etcd'));
    const second = await host.readText(DB);
    assert.equal(second.ok && second.text, 'inside\n', 'the descriptor names the directory that was opened, not the link');
    rmSync(path.join(root, 'var/lib/etcd.old'), { recursive: true });
    assert.equal((await host.readText(DB)).ok, false, 'deleted: nothing below it is found any more');
  });
});

test('a remembered symlink that changes target in a scan still resolves inside the root', async (t) => {
  const root = await tempHost(t, { 'sys/a/value': 'a\n', 'sys/b/value': 'b\n' });
  const { base } = await swapTree(t);
  await writeFile(path.join(base, 'value'), 'OUTSIDE\n');
  symlinkSync('a', path.join(root, 'sys/link'));
  const host = new HostRoot(root);
  await host.sharingDirectories(async () => {
    const first = await host.readValue('/sys/link/value');
    assert.equal(first.ok && first.text, 'a');
    rmSync(path.join(root, 'sys/link'));
    symlinkSync(`../../../../../../..${base}`, path.join(root, 'sys/link'));
    const again = await host.readText('/sys/link/value');
    assert.equal(again.ok && again.text, 'a\n', 'the target read when the scan first walked it');
  });
  const fresh = await new HostRoot(root).readText('/sys/link/value');
  assert.equal(fresh.ok, false, 'a new scan reads the new target, with ".." clamped at the root');
});

test('repeated scans leave no descriptor open; reads outside a scan close theirs at the first idle turn', async (t) => {
  await runScan({ hostRoot: fixtureHost('rhel-hz1000-tuned-merged') }); // modules and rule files loaded
  await idle();
  const before = openDescriptors();
  for (let i = 0; i < 10; i++) await runScan({ hostRoot: fixtureHost('rhel-hz1000-tuned-merged') });
  await idle();
  assert.equal(openDescriptors(), before, 'descriptors after 10 scans');
  const root = await tempHost(t, { 'proc/1/stat': '1 (init) S\n', 'proc/2/stat': '2 (kthreadd) S\n' });
  const host = new HostRoot(root);
  assert.equal((await host.readText('/proc/1/stat')).ok, true);
  const [two, listing] = await Promise.all([host.readText('/proc/2/stat'), host.listDir('/proc')]);
  assert.ok(two.ok && listing.ok);
  assert.ok(host.heldDirectories > 0, 'back-to-back reads share the directories');
  await idle();
  assert.equal(host.heldDirectories, 0);
  assert.equal(openDescriptors(), before, 'descriptors after reads outside a scan');
});

test('a scan of more directories than the cache holds: bounded, every read right, all closed at the end', async (t) => {
  const count = MAX_ENTRIES + 100;
  const files: Record<string, string> = {};
  for (let i = 0; i < count; i++) files[`proc/${i}/comm`] = `p${i}\n`;
  const root = await tempHost(t, files);
  const before = openDescriptors();
  const host = new HostRoot(root);
  let most = 0;
  await host.sharingDirectories(async () => {
    const reads = await Promise.all(Array.from({ length: count }, async (_, i) => {
      const read = await host.readValue(`/proc/${i}/comm`);
      most = Math.max(most, host.heldDirectories);
      return read.ok && read.text;
    }));
    assert.deepEqual(reads, Array.from({ length: count }, (_, i) => `p${i}`));
  });
  assert.ok(most > 0 && most <= MAX_ENTRIES, `held at most ${most} directories`);
  assert.equal(openDescriptors(), before);
});

test('/proc and /sys files that report size 0 or 4096 are read to their end', async () => {
  const host = new HostRoot('/');
  for (const file of ['/proc/self/mountinfo', '/proc/self/status', '/sys/kernel/mm/transparent_hugepage/enabled']) {
    const read = await host.readText(file);
    if (!read.ok && read.code === 'ENOENT') continue;
    assert.ok(read.ok, file);
    const expected = readFileSync(file, 'utf8');
    assert.equal(read.text.split('\n')[0], expected.split('\n')[0], file);
    assert.ok(Math.abs(read.text.length - expected.length) < 256, `${file}: ${read.text.length} vs ${expected.length} characters`);
  }
});

// Random trees of directories, files and symlinks (as test/property/host-root-forest.test.ts, whose
// fresh walks the kernel checks): the same queries, all in one scan, twice and concurrently, answer
// as a fresh HostRoot per query does.
const NAMES = ['a', 'b', 'c'];
const part = fc.constantFrom(...NAMES, '..', '.', 'nope');
const relative = fc.array(part, { minLength: 1, maxLength: 4 }).map((parts) => parts.join('/'));
const entry = fc.tuple(fc.constantFrom('dir', 'file', 'link'), fc.array(fc.constantFrom(...NAMES), { minLength: 1, maxLength: 3 }), fc.boolean(), relative);

/** Whether every existing directory above the entry is a plain directory: through a link made
 *  earlier (to "/a" or "../..") mkdir and writeFile would build the tree outside the root. */
function parentsInsideRoot(root: string, at: string[]): boolean {
  for (let depth = 1; depth < at.length; depth++) {
    try {
      if (!lstatSync(path.join(root, ...at.slice(0, depth))).isDirectory()) return false;
    } catch {
      return true; // missing: mkdir creates plain directories from here down
    }
  }
  return true;
}

test('random symlink trees: a scan with warm directories answers as fresh walks do', async (t) => {
  const base = await mkdtemp(path.join(os.tmpdir(), 'nta-dircache-forest-'));
  t.after(() => rm(base, { recursive: true, force: true }));
  let n = 0;
  await fc.assert(fc.asyncProperty(fc.array(entry, { minLength: 1, maxLength: 12 }), fc.array(relative, { minLength: 1, maxLength: 10 }), async (entries, queries) => {
    const root = path.join(base, `r${n++}`);
    await mkdir(root);
    for (const [kind, at, absolute, target] of entries) {
      const local = path.join(root, ...at);
      if (!parentsInsideRoot(root, at)) continue;
      try {
        await mkdir(path.dirname(local), { recursive: true });
        if (kind === 'dir') await mkdir(local);
        else if (kind === 'file') await writeFile(local, `${at.join('/')}\n`, { flag: 'wx' }); // never through a link at the last name
        else symlinkSync(`${absolute ? '/' : ''}${target}`, local);
      } catch {
        // a parent is a file, or the entry exists (as a link too): skipped
      }
    }
    const paths = queries.map((q) => `/${q}`);
    const answer = (r: Awaited<ReturnType<HostRoot['readText']>>): string => (r.ok ? `ok ${r.text}` : `fail ${r.code}`);
    const fresh: string[] = [];
    for (const p of paths) fresh.push(answer(await new HostRoot(root).readText(p)));
    const host = new HostRoot(root);
    const [inOrder, together] = await host.sharingDirectories(async () => {
      const seq: string[] = [];
      for (const p of [...paths, ...paths]) seq.push(answer(await host.readText(p)));
      return [seq, (await Promise.all(paths.map((p) => host.readText(p)))).map(answer)];
    });
    assert.deepEqual(inOrder, [...fresh, ...fresh]);
    assert.deepEqual(together, fresh);
    await rm(root, { recursive: true, force: true });
  }), { numRuns: 150 });
});

// The race, as test/security/open-race.test.ts plays it, against scans that keep their directories:
// a swapper as nobody moves conf.d out of the host tree and puts in its place a symlink to a
// directory outside whose config.yaml is a FIFO (or a decoy file), then moves conf.d back, while
// root's scans of 20 reads each run. A scan that cached conf.d while it was in place reads through
// that descriptor after it has moved out: refused (outside the root), never the decoy nor the FIFO.
const NOBODY = 65534;
const MOVER = `const fs = require('node:fs'); const [dir, out, fifoDir, decoyDir] = process.argv.slice(1);
process.chdir(dir);
const linger = () => { const until = process.hrtime.bigint() + 100000n; while (process.hrtime.bigint() < until); };
for (let i = 0; ; i++) {
  fs.renameSync('conf.d', out); fs.symlinkSync(i % 2 ? fifoDir : decoyDir, 'conf.d'); linger();
  fs.unlinkSync('conf.d'); fs.renameSync(out, 'conf.d'); linger();
}`;

test('a directory moved out and back while scans hold it: never the FIFO, never a file outside', { timeout: 120_000 }, async (t) => {
  const setpriv = requireTool(t, 'setpriv', 'util-linux');
  if (!setpriv) return;
  if (process.getuid?.() !== 0) return t.skip('needs root: the attack is a root reader and a directory owned by nobody');
  const base = await mkdtemp(path.join(os.tmpdir(), 'nta-dircache-race-'));
  await chmod(base, 0o755);
  const kubelet = path.join(base, 'tree/var/lib/kubelet');
  const [outside, fifoDir, decoyDir] = ['outside', 'outside/fifo', 'outside/decoy'].map((d) => path.join(base, d)) as [string, string, string];
  for (const dir of [path.join(kubelet, 'conf.d'), fifoDir, decoyDir]) await mkdir(dir, { recursive: true });
  await writeFile(path.join(kubelet, 'conf.d/config.yaml'), 'a: 1\n');
  await writeFile(path.join(decoyDir, 'config.yaml'), 'OUTSIDE\n');
  execFileSync('mkfifo', [path.join(fifoDir, 'config.yaml')]);
  for (const owned of [kubelet, path.join(kubelet, 'conf.d'), outside, fifoDir, path.join(fifoDir, 'config.yaml')]) await chown(owned, NOBODY, NOBODY);
  const nobody = (command: string[]): ChildProcess =>
    spawn(setpriv, ['--reuid', String(NOBODY), '--regid', String(NOBODY), '--clear-groups', '--', ...command], { stdio: ['ignore', 'pipe', 'ignore'] });
  const writer = nobody(['bash', '-c', 'exec 3>"$1"; echo OPENED', 'x', path.join(fifoDir, 'config.yaml')]);
  let opened = false;
  writer.stdout?.on('data', () => { opened = true; });
  const mover = nobody([process.execPath, '-e', MOVER, kubelet, path.join(outside, 'moved'), fifoDir, decoyDir]);
  t.after(async () => {
    for (const child of [mover, writer]) {
      child.kill('SIGKILL');
      if (child.exitCode === null && child.signalCode === null) await new Promise((resolve) => child.once('exit', resolve));
    }
    await rm(base, { recursive: true, force: true });
  });
  await new Promise((resolve) => setTimeout(resolve, 300));
  const codes = new Map<string, number>();
  let most = 0;
  const scans = async (): Promise<void> => {
    for (let scan = 0; scan < 15 && !opened; scan++) {
      const host = new HostRoot(path.join(base, 'tree'));
      await host.sharingDirectories(async () => {
        for (let i = 0; i < 20; i++) {
          const read = await host.readText('/var/lib/kubelet/conf.d/config.yaml', { maxBytes: 4096 });
          if (read.ok) assert.equal(read.text, 'a: 1\n', 'only the file inside the tree is ever read');
          const code = read.ok ? 'read' : read.code;
          codes.set(code, (codes.get(code) ?? 0) + 1);
          most = Math.max(most, host.heldDirectories);
        }
      });
    }
  };
  await Promise.all([scans(), scans(), scans(), scans()]);
  await new Promise((resolve) => setTimeout(resolve, 100));
  const seen = JSON.stringify(Object.fromEntries(codes));
  assert.equal(opened, false, `the FIFO was opened for reading (${seen})`);
  assert.ok((codes.get('read') ?? 0) > 0 && codes.size > 1, `the moves raced the reads both ways: ${seen}`);
  assert.ok(most > 0, 'the scans held their directories');
  t.diagnostic(`answers: ${seen}`);
});
