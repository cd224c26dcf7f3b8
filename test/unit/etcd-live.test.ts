// A real etcd (Debian etcd-server) on a temporary data dir with metrics on loopback: the scan with
// host root / finds it from its process, maps its data dir to this machine's block device and reads
// p99s from its /metrics.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { mkdtemp, readdir, realpath, rm, stat } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import etcd from '../../src/collectors/etcd/collector.ts';
import { findEtcdProcesses } from '../../src/collectors/etcd/discovery.ts';
import { createEtcdFsyncCollector } from '../../src/collectors/etcd/fsync.ts';
import { collectFacts } from '../../src/collectors/run.ts';
import { HostRoot } from '../../src/host/host-root.ts';
import { PROBE_FILE_PREFIX, majorMinor } from '../../src/probe/fsync.ts';
import { requireTool, toolPath } from '../helpers/tools.ts';

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function waitFor(url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const ok = await fetch(url).then((r) => r.ok, () => false);
    if (ok) return;
    await delay(100);
  }
  throw new Error(`${url} did not come up within ${timeoutMs} ms`);
}

const ISOLATED = process.env.NTA_ETCD_PIDNS === '1';

test('a live etcd: discovered from its process, its disk mapped, p99s read from its metrics', async (t) => {
  const binary = requireTool(t, 'etcd', 'etcd-server');
  if (!binary) return;
  if (!ISOLATED && process.getuid?.() === 0 && toolPath('unshare')) {
    // Other etcds on this machine (other suites' control planes) would be found first: run this
    // test again in a PID namespace of its own, where its etcd is the only one.
    const args = ['--pid', '--fork', '--mount-proc', process.execPath, '--test', '--test-reporter=spec', '--test-name-pattern', '^a live etcd', fileURLToPath(import.meta.url)];
    const { NODE_TEST_CONTEXT: _runner, ...env } = process.env; // the inner run reports to us as text, not to our runner
    const run = spawnSync('unshare', args, { env: { ...env, NTA_ETCD_PIDNS: '1' }, encoding: 'utf8', timeout: 180_000 });
    assert.equal(run.status, 0, `${run.stdout}${run.stderr}`);
    assert.match(run.stdout, /ℹ pass 1\n/);
    assert.match(run.stdout, /ℹ skipped 0\n/, run.stdout);
    return;
  }
  const base = await mkdtemp(path.join(os.tmpdir(), 'nta-etcd-'));
  const dataDir = path.join(await realpath(base), 'data');
  const [client, peer, metrics] = [await freePort(), await freePort(), await freePort()];
  const child = spawn(binary, [
    '--name', 'nta-test', '--data-dir', dataDir,
    '--listen-client-urls', `http://127.0.0.1:${client}`, '--advertise-client-urls', `http://127.0.0.1:${client}`,
    '--listen-peer-urls', `http://127.0.0.1:${peer}`, '--initial-advertise-peer-urls', `http://127.0.0.1:${peer}`,
    '--initial-cluster', `nta-test=http://127.0.0.1:${peer}`, '--listen-metrics-urls', `http://127.0.0.1:${metrics}`,
  ], { stdio: 'ignore' });
  const exited = new Promise((resolve) => child.on('exit', resolve));
  t.after(async () => {
    child.kill('SIGTERM');
    await exited;
    await rm(base, { recursive: true, force: true });
  });
  await waitFor(`http://127.0.0.1:${metrics}/metrics`, 15_000);
  // A few writes through the v3 JSON gateway, so the WAL histogram has observations beyond start-up.
  for (let i = 0; i < 20; i++) {
    const body = JSON.stringify({ key: Buffer.from(`k${i}`).toString('base64'), value: Buffer.from('v').toString('base64') });
    const response = await fetch(`http://127.0.0.1:${client}/v3/kv/put`, { method: 'POST', body });
    assert.equal(response.status, 200);
  }

  const { trusted } = await findEtcdProcesses(new HostRoot('/'));
  const pids = trusted.map((p) => p.pid);
  if (pids.length !== 1) return t.skip(`other etcd processes run here (${pids.join(', ')}); the scan picks the first`);
  const facts = await collectFacts(new HostRoot('/'), { collectors: [etcd, createEtcdFsyncCollector({ run: true, sizeBytes: 1024 * 1024 })] });
  assert.deepEqual([facts.value('etcd.present'), facts.value('etcd.pid'), facts.value('etcd.setup')], [true, child.pid, 'process']);
  assert.equal(facts.value('etcd.dataDir'), dataDir);
  assert.equal(facts.value('etcd.metricsUrl'), `http://127.0.0.1:${metrics}`);
  const expectedDevice = majorMinor((await stat(dataDir, { bigint: true })).dev);
  assert.equal(facts.value('etcd.device.majorMinor'), expectedDevice);
  const sysDevice = path.basename(await realpath(`/sys/dev/block/${expectedDevice}`));
  assert.equal(facts.value('etcd.device.name'), sysDevice);
  assert.equal(typeof facts.value('etcd.device.rotational'), 'boolean');

  const wal = facts.get('etcd.walFsync.p99Ms');
  assert.equal(typeof wal?.value, 'number', wal?.unknown);
  assert.ok((wal?.value as number) > 0);
  assert.match(wal?.detail ?? '', /p99 interpolated in the bucket \(\d+(\.\d+)? ms, \d+(\.\d+)? ms\] over \d+ observations/);
  assert.equal(typeof facts.value('etcd.backendCommit.p99Ms'), 'number');
  assert.equal(facts.value('etcd.heartbeatSendFailures'), 0);
  // The probe ran beside member/ on the same device and left nothing behind.
  assert.equal(facts.value('etcd.fsync.samples'), Math.floor((1024 * 1024) / 2300));
  assert.match(facts.get('etcd.fsync.p99Ms')?.detail ?? '', new RegExp(`on device ${expectedDevice}`));
  assert.deepEqual((await readdir(dataDir)).filter((name) => name.startsWith(PROBE_FILE_PREFIX)), []);
});
