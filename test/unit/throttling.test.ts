import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createThrottlingCollector } from '../../src/collectors/throttling.ts';
import { HostRoot } from '../../src/host/host-root.ts';
import { scanLogBackwards } from '../../src/collectors/log-scan.ts';
import { factsOf, tempHost } from '../helpers/fixtures.ts';
import { factsAt } from '../helpers/host-trees.ts';

const throttling = createThrottlingCollector();

test('all four formats, per component, in the last hour of CRI logs and kubelet syslog lines', async () => {
  const facts = await factsOf('throttling-formats', [throttling]);
  assert.equal(facts.value('throttling.scheduler.count'), 2, 'the 9.5 s wait 130 min ago is outside the window');
  assert.equal(facts.value('throttling.scheduler.maxWaitMs'), 1194);
  assert.equal(facts.value('throttling.controllerManager.count'), 2, '"Waited for … due to" and the retry variant');
  assert.equal(facts.value('throttling.controllerManager.maxWaitMs'), 2394);
  assert.equal(facts.value('throttling.otherPods.count'), 1, 'the 1.17–1.20 "Throttling request took" of a CSI provisioner');
  assert.match(facts.get('throttling.otherPods.count')?.detail ?? '', /information only, not judged/);
  assert.equal(facts.value('throttling.kubelet.count'), 1, "node-drainer's line in syslog is not the kubelet's");
  assert.equal(facts.value('throttling.kubelet.maxWaitMs'), 450);
  assert.equal(facts.value('throttling.total.count'), 5, 'kubelet and control-plane static pods only: the CSI provisioner is information');
  assert.equal(facts.value('throttling.total.maxWaitMs'), 2394);
  assert.equal(facts.value('throttling.apiserver.count'), null);
  assert.match(facts.get('throttling.total.count')?.detail ?? '', /up to 2026-11-30T13:59:00\.120Z.*longest: 2026-11-30T13:30:00\.120Z waited 2394 ms before POST \/api\/v1\/namespaces\/batch\/pods/);
});

test('seed 000 before: 9 "Throttling request took" lines in the scheduler\'s Docker json log, the longest 347 ms', async () => {
  const facts = await factsOf('seed-000-before', [throttling]);
  assert.equal(facts.value('throttling.scheduler.count'), 9);
  assert.equal(facts.value('throttling.scheduler.maxWaitMs'), 347);
  assert.match(facts.get('throttling.scheduler.count')?.source ?? '', /kube-system_kube-scheduler-master1_/);
});

test('seed 000 after: the scheduler log is read and holds no throttling', async () => {
  const facts = await factsOf('seed-000-after', [throttling]);
  assert.equal(facts.value('throttling.scheduler.count'), 0);
  assert.equal(facts.value('throttling.total.count'), 0);
});

test('a window ending at an injected clock; without any logs the total is unknown', async (t) => {
  const end = Date.UTC(2026, 10, 30, 14, 0, 0);
  const wide = createThrottlingCollector({ clock: () => end, windowMs: 3 * 3_600_000 });
  const facts = await factsOf('throttling-formats', [wide]);
  assert.equal(facts.value('throttling.scheduler.count'), 3, 'a 3 h window reaches the 9.5 s wait');
  assert.equal(facts.value('throttling.scheduler.maxWaitMs'), 9500);
  const empty = await factsAt(await tempHost(t, { '/etc/hostname': 'x\n' }), throttling);
  assert.match(empty.get('throttling.total.count')?.unknown ?? '', /no logs to read/);
});

test('the backward scan stops at its byte budget and says the count is a lower bound', async (t) => {
  const line = (i: number) => `2026-11-30T13:${String(Math.floor(i / 6000) % 60).padStart(2, '0')}:00.000000000Z stderr F I1130 request.go:697] Waited for 100ms due to client-side throttling, not priority and fairness, request: GET:https://x/api/v1/pods/${i}\n`;
  const body = Array.from({ length: 60_000 }, (_, i) => line(i)).join('');
  const host = new HostRoot(await tempHost(t, { '/var/log/pods/kube-system_kube-scheduler-a_1/kube-scheduler/0.log': body }));
  const window = { startMs: Date.UTC(2026, 10, 30, 13, 0), endMs: Date.UTC(2026, 10, 30, 14, 0), referenceYear: 2026 };
  const scan = await scanLogBackwards(host, '/var/log/pods/kube-system_kube-scheduler-a_1/kube-scheduler/0.log', window, { chunkBytes: 64 * 1024, budgetBytes: 256 * 1024 });
  assert.ok(body.length > 4 * 256 * 1024);
  assert.equal(scan.scannedBytes, 256 * 1024);
  assert.equal(scan.coveredWindow, false);
  assert.ok(scan.tally.count > 1000 && scan.tally.count < 2000, `${scan.tally.count} hits in 256 KiB`);
  const full = await scanLogBackwards(host, '/var/log/pods/kube-system_kube-scheduler-a_1/kube-scheduler/0.log', window, { chunkBytes: 64 * 1024, budgetBytes: 64 * 1024 * 1024 });
  assert.equal(full.tally.count, 60_000, 'every line exactly once across chunk boundaries');
  assert.equal(full.coveredWindow, true);
});

test('a scan stops at the first chunk older than the window', async (t) => {
  const old = '2026-11-30T10:00:00.000000000Z stderr F I1130 request.go:697] Waited for 5s due to client-side throttling, not priority and fairness, request: GET:https://x\n'.repeat(5000);
  const recent = '2026-11-30T13:30:00.000000000Z stderr F I1130 request.go:697] Waited for 1s due to client-side throttling, not priority and fairness, request: GET:https://x\n'.repeat(10);
  const host = new HostRoot(await tempHost(t, { '/l/0.log': old + recent }));
  const window = { startMs: Date.UTC(2026, 10, 30, 13, 0), endMs: Date.UTC(2026, 10, 30, 14, 0), referenceYear: 2026 };
  const scan = await scanLogBackwards(host, '/l/0.log', window, { chunkBytes: 4096, budgetBytes: 1 << 30 });
  assert.equal(scan.tally.count, 10);
  assert.equal(scan.coveredWindow, true);
  assert.ok(scan.scannedBytes <= 8192, `read ${scan.scannedBytes} bytes of ${old.length + recent.length}`);
});
