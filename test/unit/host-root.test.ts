import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import { rm, symlink } from 'node:fs/promises';
import path from 'node:path';
import fc from 'fast-check';
import { HostRoot, naturalCompare } from '../../src/host/host-root.ts';
import { tempHost } from '../helpers/fixtures.ts';

test('absolute symlinks resolve inside the host root, never outside it', async (t) => {
  const root = await tempHost(t, {
    'etc/tuned/active_profile': '->/etc/tuned/real_profile',
    'etc/tuned/real_profile': 'inside-root\n',
    'etc/escape': '->../../../../../../etc/hostname',
    'etc/hostname': 'fixture-host\n',
  });
  const host = new HostRoot(root);
  const viaAbsolute = await host.readText('/etc/tuned/active_profile');
  assert.ok(viaAbsolute.ok);
  assert.equal(viaAbsolute.text, 'inside-root\n');
  // ".." past the root stops at the root, as it does at the real "/".
  const viaDots = await host.readText('/etc/escape');
  assert.ok(viaDots.ok);
  assert.equal(viaDots.text, 'fixture-host\n');
});

test('relative symlinks such as sysfs cpuN/cpufreq -> ../cpufreq/policyN resolve', async (t) => {
  const root = await tempHost(t, {
    'sys/devices/system/cpu/cpufreq/policy0/scaling_governor': 'performance\n',
    'sys/devices/system/cpu/cpu0/cpufreq': '->../cpufreq/policy0',
  });
  const read = await new HostRoot(root).readValue('/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor');
  assert.deepEqual(read.ok && read.text, 'performance');
});

test('a symlink loop is an ELOOP value, not an exception', async (t) => {
  const root = await tempHost(t, { 'a': '->/b', 'b': '->/a' });
  const read = await new HostRoot(root).readText('/a');
  assert.equal(read.ok, false);
  assert.equal(!read.ok && read.code, 'ELOOP');
});

test('missing files, directories and parents-that-are-files come back as values with a reason', async (t) => {
  const root = await tempHost(t, { 'etc/hostname': 'x\n' });
  const host = new HostRoot(root);
  const missing = await host.readText('/etc/nothing');
  assert.deepEqual(!missing.ok && [missing.code, missing.reason], ['ENOENT', '/etc/nothing does not exist']);
  const dir = await host.readText('/etc');
  assert.equal(!dir.ok && dir.code, 'EISDIR');
  const underFile = await host.readText('/etc/hostname/child');
  assert.equal(!underFile.ok && underFile.code, 'ENOTDIR');
});

test('reads are capped and say so', async (t) => {
  const root = await tempHost(t, { 'var/log/big.log': 'x'.repeat(10_000) });
  const read = await new HostRoot(root).readText('/var/log/big.log', { maxBytes: 4096 });
  assert.ok(read.ok);
  assert.equal(read.text.length, 4096);
  assert.equal(read.truncated, true);
});

test('gzip files decompress; a corrupt one is a value with the reason', async (t) => {
  const root = await tempHost(t, {
    'proc/config.gz': gzipSync('CONFIG_HZ=1000\n'),
    'proc/bad.gz': 'not gzip at all',
  });
  const host = new HostRoot(root);
  const good = await host.readGzipText('/proc/config.gz');
  assert.equal(good.ok && good.text, 'CONFIG_HZ=1000\n');
  const bad = await host.readGzipText('/proc/bad.gz');
  assert.equal(bad.ok, false);
  assert.match(!bad.ok ? bad.reason : '', /not a readable gzip file/);
});

test('checkRoot explains a missing or non-directory root in one sentence', async (t) => {
  const root = await tempHost(t, { 'file': 'x' });
  assert.match((await new HostRoot(`${root}/absent`).checkRoot()) ?? '', /does not exist; pass the directory/);
  assert.match((await new HostRoot(`${root}/file`).checkRoot()) ?? '', /is not a directory/);
  assert.equal(await new HostRoot(root).checkRoot(), undefined);
});

test('listDir sorts numerically (policy10 after policy9)', async (t) => {
  const root = await tempHost(t, { 'd/policy10': '', 'd/policy9': '', 'd/policy1': '' });
  const listing = await new HostRoot(root).listDir('/d');
  assert.deepEqual(listing.ok && listing.entries, ['policy1', 'policy9', 'policy10']);
});

test('naturalCompare: numbers by value, the rest by code point, a total order without ICU', () => {
  const names = ['cpu10', 'cpu2', 'cpufreq', 'cpu0', 'cpuidle', 'cpu', 'policy007', 'policy7', 'policy12', 'config-6.1.0-28-amd64', 'config-6.1.0-9-amd64', 'config-5.14.0'];
  assert.deepEqual([...names].sort(naturalCompare), [
    'config-5.14.0', 'config-6.1.0-9-amd64', 'config-6.1.0-28-amd64', 'cpu', 'cpu0', 'cpu2', 'cpu10', 'cpufreq', 'cpuidle', 'policy7', 'policy007', 'policy12',
  ]);
  assert.equal(naturalCompare(`n${'9'.repeat(400)}`, `n1${'0'.repeat(400)}`) < 0, true, 'digit runs longer than a double compare exactly');
  fc.assert(fc.property(fc.string({ unit: fc.constantFrom(...'ab-_.09Z') }), fc.string({ unit: fc.constantFrom(...'ab-_.09Z') }), fc.string({ unit: fc.constantFrom(...'ab-_.09Z') }), (a, b, c) => {
    assert.equal(Math.sign(naturalCompare(a, b)) + Math.sign(naturalCompare(b, a)), 0);
    assert.equal(naturalCompare(a, b) === 0, a === b);
    if (naturalCompare(a, b) <= 0 && naturalCompare(b, c) <= 0) assert.ok(naturalCompare(a, c) <= 0, `${a} ${b} ${c}`);
  }));
});

test('a directory swapped for a symlink out of the root during a scan: still refused, though its lstat was remembered', async (t) => {
  const root = await tempHost(t, { 'var/lib/etcd/member/snap/db': 'inside\n' });
  const outside = await tempHost(t, { 'member/snap/db': 'OUTSIDE\n' });
  const host = new HostRoot(root);
  const first = await host.readText('/var/lib/etcd/member/snap/db');
  assert.equal(first.ok && first.text, 'inside\n');
  await rm(path.join(root, 'var/lib/etcd'), { recursive: true });
  await symlink(outside, path.join(root, 'var/lib/etcd'));
  const second = await host.readText('/var/lib/etcd/member/snap/db');
  assert.equal(second.ok, false, 'the descriptor it opened lies outside the root');
  assert.equal((await new HostRoot(root).readText('/var/lib/etcd/member/snap/db')).ok, false, 'a new scan sees the link and keeps it inside');
});
