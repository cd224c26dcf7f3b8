import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { ProbeSchedule, CONTROL_PLANE_PROBE_INTERVAL_MS } from '../../src/agent/probe-schedule.ts';
import type { FsyncProbeOptions, FsyncProbeResult } from '../../src/probe/fsync.ts';
import type { Report } from '../../src/report/types.ts';
import { runScan } from '../../src/scan.ts';

const host = (name: string) => fileURLToPath(new URL(`../fixtures/hosts/${name}`, import.meta.url));

function fakeProbe(p99Ms: number, calls: FsyncProbeOptions[]) {
  return async (options: FsyncProbeOptions): Promise<FsyncProbeResult> => {
    calls.push(options);
    return {
      ok: true, samples: 9000, p50Ms: 1, p90Ms: 2, p99Ms, p999Ms: p99Ms + 1, maxMs: p99Ms + 2, wallMs: 900,
      bytesWritten: 22 * 1024 * 1024, blockSize: 2300, dir: options.dir, device: 'fake', sameDeviceAsEtcd: null,
      preallocation: 'zeros', staleFilesRemoved: 0,
    };
  };
}

async function scanWith(schedule: ProbeSchedule, hostRoot: string, previous: Report | undefined): Promise<Report> {
  const collectors = schedule.collectorsFor(previous);
  return runScan({ hostRoot, ...(collectors ? { collectors } : {}) });
}

test('control-plane: probe every 6 h by default, last result replayed in between (no flip to unknown)', async () => {
  let now = 0;
  const calls: FsyncProbeOptions[] = [];
  const schedule = new ProbeSchedule('auto', fakeProbe(18.2, calls), () => now);
  const root = host('etcd-kubeadm-nvme');
  const first = await scanWith(schedule, root, undefined);
  assert.equal(first.facts['node.role']?.value, 'control-plane');
  assert.equal(calls.length, 1, 'the first scan finds the role itself and probes');
  assert.equal(first.facts['etcd.fsync.p99Ms']?.value, 18.2);
  const second = await scanWith(schedule, root, first);
  assert.equal(calls.length, 1, 'replayed');
  assert.deepEqual(second.findings.find((f) => f.ruleId === 'etcd-fsync-latency'), first.findings.find((f) => f.ruleId === 'etcd-fsync-latency'),
    'the first publish says what the second says');
  now += 1;
  now += CONTROL_PLANE_PROBE_INTERVAL_MS - 2;
  const third = await scanWith(schedule, root, second);
  assert.equal(calls.length, 1, 'replayed, not re-measured');
  assert.deepEqual(third.findings.find((f) => f.ruleId === 'etcd-fsync-latency'), second.findings.find((f) => f.ruleId === 'etcd-fsync-latency'));
  now += 1;
  await scanWith(schedule, root, third);
  assert.equal(calls.length, 2);
});

test('workers never probe by default; an explicit interval or 0 wins', async () => {
  const calls: FsyncProbeOptions[] = [];
  const worker = new ProbeSchedule('auto', fakeProbe(1, calls), () => 0);
  const report = await scanWith(worker, host('intel-pstate-epp-power'), undefined);
  assert.notEqual(report.facts['node.role']?.value, 'control-plane');
  assert.equal(calls.length, 0, 'the first scan of a worker does not probe either');
  assert.equal(worker.collectorsFor(report), undefined);
  const off = new ProbeSchedule(0, fakeProbe(1, calls), () => 0);
  const cp = await runScan({ hostRoot: host('etcd-kubeadm-nvme') });
  assert.equal(off.collectorsFor(cp), undefined);
  const hourly = new ProbeSchedule(3_600_000, fakeProbe(1, calls), () => 0);
  assert.ok(hourly.collectorsFor(undefined), 'explicit interval probes from the first scan');
});
