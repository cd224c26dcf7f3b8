import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HostRoot } from '../../src/host/host-root.ts';
import { tempHost } from '../helpers/fixtures.ts';

test('readTail returns the last bytes, the offset they start at and the file size', async (t) => {
  const host = new HostRoot(await tempHost(t, { '/var/log/a.log': 'line1\nline2\nline3\n' }));
  const tail = await host.readTail('/var/log/a.log', { maxBytes: 6 });
  assert.ok(tail.ok);
  assert.equal(tail.data.toString(), 'line3\n');
  assert.equal(tail.start, 12);
  assert.equal(tail.size, 18);
});

test('readTail with an end offset reads the chunk before it, and never before byte 0', async (t) => {
  const host = new HostRoot(await tempHost(t, { '/var/log/a.log': 'line1\nline2\nline3\n' }));
  const middle = await host.readTail('/var/log/a.log', { maxBytes: 6, end: 12 });
  assert.ok(middle.ok);
  assert.equal(middle.data.toString(), 'line2\n');
  const head = await host.readTail('/var/log/a.log', { maxBytes: 100, end: 6 });
  assert.ok(head.ok);
  assert.equal(head.data.toString(), 'line1\n');
  assert.equal(head.start, 0);
});

test('readTail reports a missing file and a directory as failures, not exceptions', async (t) => {
  const host = new HostRoot(await tempHost(t, { '/var/log/pods/x': 'y' }));
  const missing = await host.readTail('/var/log/none.log', { maxBytes: 10 });
  assert.equal(missing.ok, false);
  assert.equal(!missing.ok && missing.code, 'ENOENT');
  const dir = await host.readTail('/var/log/pods', { maxBytes: 10 });
  assert.equal(!dir.ok && dir.code, 'EISDIR');
});

test('readTail follows a symlink inside the root (Docker json-file logs behind /var/log/pods)', async (t) => {
  const host = new HostRoot(await tempHost(t, { '/var/lib/docker/c/c-json.log': '{"log":"x"}\n', '/var/log/pods/p/c/0.log': '->/var/lib/docker/c/c-json.log' }));
  const tail = await host.readTail('/var/log/pods/p/c/0.log', { maxBytes: 100 });
  assert.ok(tail.ok);
  assert.equal(tail.data.toString(), '{"log":"x"}\n');
});

test('readLink gives the link text without following it', async (t) => {
  const host = new HostRoot(await tempHost(t, { '/proc/42/cwd': '->/etc/kubernetes' }));
  const link = await host.readLink('/proc/42/cwd');
  assert.ok(link.ok);
  assert.equal(link.text, '/etc/kubernetes');
  assert.equal((await host.readLink('/proc/43/cwd')).ok, false);
});
