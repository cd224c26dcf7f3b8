// Issue 17 item 3: --host-root is a boundary. A relative symlink through a missing component and
// then ".." (`ln -s 'nope/../../../../outside/file' TREE/etc/tuned/active_profile`) must not open a
// file outside the root, and what such a file holds must reach no fact, annotation, Event or metric.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { HostRoot } from '../../src/host/host-root.ts';
import { runScan } from '../../src/scan.ts';
import { renderAnnotations } from '../../src/wire/annotations.ts';
import { transitions, eventObject } from '../../src/publish/events.ts';
import { createAgentMetrics } from '../../src/publish/metrics.ts';

const SECRET = 'outside-secret-profile';

async function escapeTree(t: { after(fn: () => Promise<void>): void }): Promise<{ tree: string; outside: string }> {
  const base = await mkdtemp(path.join(os.tmpdir(), 'nta-escape-'));
  t.after(() => rm(base, { recursive: true, force: true }));
  // base/tree is the host root; base/outside/file is what etc/tuned/nope/../../../../outside/file
  // names when ".." is applied to the text instead of to the directories that exist.
  const tree = path.join(base, 'tree');
  const outside = path.join(base, 'outside');
  await mkdir(path.join(tree, 'etc', 'tuned'), { recursive: true });
  await mkdir(outside, { recursive: true });
  await writeFile(path.join(outside, 'file'), `${SECRET}\n`);
  await writeFile(path.join(tree, 'etc', 'hostname'), 'escape-node\n');
  await writeFile(path.join(tree, 'etc', 'tuned', 'tuned-main.conf'), 'daemon = 1\n');
  await symlink('nope/../../../../outside/file', path.join(tree, 'etc', 'tuned', 'active_profile'));
  return { tree, outside };
}

test('a symlink through a missing component and ".." is not followed out of the host root', async (t) => {
  const { tree } = await escapeTree(t);
  const host = new HostRoot(tree);
  const read = await host.readText('/etc/tuned/active_profile');
  assert.equal(read.ok, false, `read ${read.ok ? JSON.stringify(read.text) : ''} through the symlink`);
  assert.equal(!read.ok && read.code, 'ENOENT', 'the kernel says ENOENT: "nope" does not exist, whatever follows it');
  const where = await host.realPath('/etc/tuned/active_profile');
  assert.equal(where.ok, false);
  assert.equal(await host.exists('/etc/tuned/active_profile'), false);
});

test('the outside file reaches no fact, annotation, Event or metric label of a scan', async (t) => {
  const { tree } = await escapeTree(t);
  const report = await runScan({ hostRoot: tree, nodeName: 'escape-node' });
  const leaks = (what: string, text: string) => assert.ok(!text.includes(SECRET), `the outside file's content is in the ${what}`);
  leaks('report', JSON.stringify(report));
  leaks('annotations', JSON.stringify(renderAnnotations(report)));
  leaks('Events', JSON.stringify(transitions(new Map(), report).map((tr) => eventObject(tr, { name: 'escape-node', uid: 'u' }, new Date(0), 'x'))));
  const metrics = createAgentMetrics('test');
  metrics.setReport(report, 1, Date.now());
  leaks('metrics', await metrics.registry.metrics());
});

test('a FIFO or a device in the host tree is refused before it is opened (no hang, no side effect)', async (t) => {
  const base = await mkdtemp(path.join(os.tmpdir(), 'nta-fifo-'));
  t.after(() => rm(base, { recursive: true, force: true }));
  await mkdir(path.join(base, 'etc', 'tuned'), { recursive: true });
  execFileSync('mkfifo', [path.join(base, 'etc', 'tuned', 'active_profile')]);
  for (const host of [new HostRoot(base), new HostRoot('/')]) {
    const hostPath = host.isRealRoot ? path.join(base, 'etc', 'tuned', 'active_profile') : '/etc/tuned/active_profile';
    const read = await host.readText(hostPath);
    assert.deepEqual(!read.ok && [read.code, read.reason], ['ENOTREG', `${hostPath} is a FIFO, not a regular file: not read`]);
    const tail = await host.readTail(hostPath, { maxBytes: 10 });
    assert.equal(!tail.ok && tail.code, 'ENOTREG');
  }
  const device = await new HostRoot('/').readText('/dev/zero');
  assert.equal(!device.ok && device.code, 'ENOTREG');
});

test('a host root reached through a symlink (or with a trailing slash) still reads inside itself', async (t) => {
  const base = await mkdtemp(path.join(os.tmpdir(), 'nta-rootlink-'));
  t.after(() => rm(base, { recursive: true, force: true }));
  await mkdir(path.join(base, 'real', 'etc'), { recursive: true });
  await writeFile(path.join(base, 'real', 'etc', 'hostname'), 'linked\n');
  await symlink('real', path.join(base, 'link'));
  for (const root of [path.join(base, 'link'), `${path.join(base, 'real')}/`]) {
    const host = new HostRoot(root);
    const read = await host.readText('/etc/hostname');
    assert.equal(read.ok && read.text, 'linked\n', root);
    const listing = await host.listDir('/etc');
    assert.deepEqual(listing.ok && listing.entries, ['hostname']);
  }
});
