// The start-up and attach trackers on their own, with an injectable clock: milestone timing (watch
// time vs the API's whole-second stamps), attribution of attaches, the time window their figures
// cover (--startup-window), and the bounds of their memory.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { WorkloadState } from '../../src/workload/state.ts';
import { podView } from '../../src/workload/pod-view.ts';
import { TimedWindow, windowText } from '../../src/workload/window.ts';
import { EMPTY_DIR, PVC, csiName, podObject } from '../helpers/pods.ts';

const T0 = Date.parse('2026-12-01T10:00:00.500Z');

function clocked(opts: { windowMs?: number; maxSamples?: number; maxTracked?: number } = {}) {
  const clock = { now: T0 };
  const phases: [string, number][] = [];
  const state = new WorkloadState({ nodeName: 'worker-1', now: () => clock.now, onPhase: (p, s) => phases.push([p, s]), ...opts });
  return { clock, state, phases };
}

test('phases of a pod followed live use the watch time, creation the API stamp', () => {
  const { clock, state, phases } = clocked();
  const created = T0 - 300;
  state.podSeen(podObject('a', { createdAt: created, scheduledAt: T0 }));
  clock.now = T0 + 200;
  state.podSeen(podObject('a', { createdAt: created, scheduledAt: T0, initializedAt: clock.now }));
  clock.now = T0 + 1700;
  state.podSeen(podObject('a', { createdAt: created, scheduledAt: T0, initializedAt: T0 + 200, startedAt: clock.now }));
  clock.now = T0 + 2100;
  state.podSeen(podObject('a', { createdAt: created, scheduledAt: T0, initializedAt: T0 + 200, startedAt: T0 + 1700, readyAt: clock.now }));
  assert.deepEqual(phases, [['scheduling', 0.5], ['initialization', 0.2], ['creation', 1.5], ['readiness', 0.4], ['total', 2.6], ['statusDelay', 0]]);
  const summary = state.snapshot().startup;
  assert.equal(summary.total.p99Ms, 2600);
  assert.equal(summary.creation.samples, 1);
});

test('a pod first seen long after its transitions (listed at agent start) uses the API stamps', () => {
  const { clock, state, phases } = clocked();
  const c = T0 - 60_000;
  clock.now = T0;
  state.podSeen(podObject('old', { createdAt: c, scheduledAt: c + 4_000, initializedAt: c + 4_000, startedAt: c + 9_000 }));
  clock.now = T0 + 1_000;
  state.podSeen(podObject('old', { createdAt: c, scheduledAt: c + 4_000, initializedAt: c + 4_000, startedAt: c + 9_000, readyAt: T0 + 1_000 }));
  // API stamps are whole seconds (09:59:00, :04, :09); Ready was watched live at 10:00:01.5.
  assert.deepEqual(Object.fromEntries(phases), { scheduling: 4, initialization: 0, creation: 5, readiness: 52.5, total: 61.5, statusDelay: 0 });
});

test('a throttled kubelet: Ready stamped at once but written 19 s later counts to its receipt; the wait is the status delay', () => {
  const { clock, state, phases } = clocked();
  const created = T0 - 500;
  state.podSeen(podObject('t', { createdAt: created, scheduledAt: T0 }));
  // The kubelet computed Initialized, started and Ready within the first second; its writes waited for its rate limiter.
  clock.now = T0 + 12_000;
  state.podSeen(podObject('t', { createdAt: created, scheduledAt: T0, initializedAt: T0 + 500 }));
  clock.now = T0 + 19_700;
  state.podSeen(podObject('t', { createdAt: created, scheduledAt: T0, initializedAt: T0 + 500, startedAt: T0 + 600, readyAt: T0 + 700 }));
  // API stamps are whole seconds: created 10:00:00, initialized, started and Ready 10:00:01; Ready received 10:00:20.2.
  assert.deepEqual(Object.fromEntries(phases), { scheduling: 0.5, initialization: 0.5, creation: 0, readiness: 0, total: 20.2, statusDelay: 19.2 });
  const snap = state.snapshot().startup;
  assert.equal(snap.total.p99Ms, 20_200, 'the total is what a user saw: create → Ready received, not the kubelet\'s stamp');
  assert.equal(snap.statusDelay.p99Ms, 19_200);
});

test('pods already ready when first seen, mirror pods and finished pods give no sample', () => {
  const { state, phases } = clocked();
  state.podSeen(podObject('ready', { createdAt: T0 - 9000, scheduledAt: T0 - 9000, initializedAt: T0 - 9000, startedAt: T0 - 8000, readyAt: T0 - 7000 }));
  state.podSeen(podObject('mirror', { createdAt: T0, annotations: { 'kubernetes.io/config.mirror': 'abc' } }));
  state.podSeen(podObject('job', { createdAt: T0, scheduledAt: T0, phase: 'Succeeded' }));
  state.podSeen({ metadata: { name: 'no-uid' } });
  assert.deepEqual(phases, []);
  assert.equal(state.startup.tracked, 0);
});

test('a new attached volume goes to the earliest-bound waiting pod; a pod without volumes never gets one', () => {
  const { clock, state } = clocked();
  state.nodeSeen({ status: { volumesAttached: [{ name: csiName('ebs.csi.aws.com', 'vol-old'), devicePath: '' }] } });
  state.podSeen(podObject('plain', { createdAt: T0 - 100, scheduledAt: T0, volumes: [EMPTY_DIR] }));
  clock.now = T0 + 1000;
  state.podSeen(podObject('pvc', { createdAt: T0 + 900, scheduledAt: T0 + 1000, volumes: [PVC('data-pvc')] }));
  clock.now = T0 + 12_000;
  state.nodeSeen({ status: { volumesAttached: [{ name: csiName('ebs.csi.aws.com', 'vol-old') }, { name: csiName('driver.longhorn.io', 'pvc-1') }] } });
  clock.now = T0 + 13_000;
  state.nodeSeen({ status: { volumesAttached: [{ name: csiName('driver.longhorn.io', 'pvc-1') }, { name: csiName('driver.longhorn.io', 'pvc-2') }] } });
  const { attach } = state.snapshot();
  assert.equal(attach.samples, 1, 'the second new volume found no waiting pod: "plain" has no volume that attaches');
  assert.equal(attach.p90Ms, 11_000);
  assert.deepEqual(attach.drivers, ['driver.longhorn.io']);
  state.podSeen(podObject('pvc', { createdAt: T0 + 900, scheduledAt: T0 + 1000, initializedAt: T0 + 1000, volumes: [PVC('data-pvc')] }));
  clock.now = T0 + 14_000;
  state.nodeSeen({ status: { volumesAttached: [{ name: csiName('driver.longhorn.io', 'pvc-3') }] } });
  assert.equal(state.snapshot().attach.samples, 1, 'a pod whose one volume was attached does not wait again on a later update');
});

test('a PVC on a no-attach driver (NFS): containers start, the pod stops waiting, no sample', () => {
  const { clock, state } = clocked();
  state.nodeSeen({ status: {} });
  state.podSeen(podObject('nfs', { createdAt: T0, scheduledAt: T0, volumes: [PVC('nfs-claim')] }));
  clock.now = T0 + 2000;
  state.podSeen(podObject('nfs', { createdAt: T0, scheduledAt: T0, initializedAt: T0, startedAt: T0 + 2000, volumes: [PVC('nfs-claim')] }));
  state.nodeSeen({ status: { volumesAttached: [{ name: csiName('driver.longhorn.io', 'someone-else') }] } });
  assert.equal(state.snapshot().attach.samples, 0);
  assert.equal(state.attach.waitingPods, 0);
});

test('10 000 pods through the window: samples, tracked pods and waiting pods stay within their bounds', () => {
  const { clock, state } = clocked({ windowMs: 24 * 3_600_000, maxSamples: 500, maxTracked: 300 });
  state.nodeSeen({ status: {} });
  for (let i = 0; i < 10_000; i++) {
    const t = T0 + i * 1000;
    clock.now = t;
    state.podSeen(podObject(`p${i}`, { createdAt: t - 400, scheduledAt: t, volumes: [PVC(`c${i}`)] }));
    if (i % 3 === 0) continue; // a third never start and are never deleted: only the cap removes them
    clock.now = t + 11_000;
    state.nodeSeen({ status: { volumesAttached: [{ name: csiName('driver.longhorn.io', `pvc-${i}`) }] } });
    clock.now = t + 12_000;
    state.podSeen(podObject(`p${i}`, { createdAt: t - 400, scheduledAt: t, initializedAt: t, startedAt: t + 12_000, readyAt: t + 12_000, volumes: [PVC(`c${i}`)] }));
  }
  const snap = state.snapshot();
  assert.equal(snap.startup.total.samples, 500);
  assert.equal(snap.startup.total.overflowed, true, 'more pods started in the window than it keeps: said');
  assert.equal(state.startup.windows.total.total, 6666, 'every finished pod was counted once');
  assert.ok(snap.trackedPods <= 300, `tracked ${snap.trackedPods}`);
  assert.ok(state.attach.waitingPods <= 300);
  assert.equal(snap.attach.samples, 500);
});

test('the window keeps the newest samples within its cap and ignores non-finite ones', () => {
  const w = new TimedWindow(3, 60_000);
  [1, 2, 3, 4, Number.NaN, 5].forEach((v, i) => w.push(T0 + i, v));
  assert.equal(w.size(T0 + 10), 3);
  assert.equal(w.percentile(50, T0 + 10), 4);
  assert.equal(w.percentile(100, T0 + 10), 5);
  assert.equal(w.overflowed(T0 + 10), true);
  assert.throws(() => new TimedWindow(0, 1000), /positive integer/);
  assert.throws(() => new TimedWindow(3, 0), /positive/);
  assert.deepEqual([3_600_000, 90_000, 45_000, 5_400_000].map(windowText), ['1h', '1m30s', '45s', '1h30m']);
});

test('a figure covers the window: samples leave it by age, not by count; an empty window has no figure', () => {
  const w = new TimedWindow(1000, 60_000);
  for (let i = 0; i < 10; i++) w.push(T0 + i * 1000, 30_000);
  assert.equal(w.percentile(99, T0 + 30_000), 30_000);
  // Two fast pods after a fix: with the slow ones still inside the window, the p99 is theirs.
  w.push(T0 + 40_000, 800);
  w.push(T0 + 41_000, 900);
  assert.equal(w.size(T0 + 45_000), 12);
  assert.equal(w.percentile(99, T0 + 45_000), 30_000);
  // Once the window holds only the new pods (the last slow one at T0 + 9 s is older than 60 s), theirs.
  assert.equal(w.size(T0 + 69_500), 2);
  assert.equal(w.percentile(99, T0 + 69_500), 900);
  assert.equal(w.overflowed(T0 + 69_500), false);
  assert.equal(w.percentile(99, T0 + 200_000), null, 'no pod started in the window: no figure, not the last one');
  assert.equal(w.size(T0 + 200_000), 0);
});

test('a node that starts no pod for longer than the window: the snapshot has no start-up figure and no attach figure', () => {
  const { clock, state } = clocked({ windowMs: 120_000 });
  state.nodeSeen({ status: {} });
  const created = T0 - 300;
  state.podSeen(podObject('a', { createdAt: created, scheduledAt: T0, volumes: [PVC('c')] }));
  clock.now = T0 + 11_000;
  state.nodeSeen({ status: { volumesAttached: [{ name: csiName('driver.longhorn.io', 'pvc-a') }] } });
  clock.now = T0 + 12_000;
  state.podSeen(podObject('a', { createdAt: created, scheduledAt: T0, initializedAt: T0, startedAt: T0 + 12_000, readyAt: T0 + 12_000, volumes: [PVC('c')] }));
  let snap = state.snapshot();
  assert.deepEqual([snap.startup.total.samples, snap.attach.samples, snap.attach.drivers], [1, 1, ['driver.longhorn.io']]);
  assert.deepEqual(snap.window, { ms: 120_000, maxSamples: 1000 });
  clock.now = T0 + 12_000 + 120_001;
  snap = state.snapshot();
  assert.deepEqual([snap.startup.total.samples, snap.startup.total.p99Ms, snap.attach.samples, snap.attach.p90Ms, snap.attach.drivers], [0, null, 0, null, []]);
});

test('garbage pods, nodes and CSI objects never throw', () => {
  const { state } = clocked();
  fc.assert(fc.property(fc.anything(), fc.anything(), (a, b) => {
    podView(a);
    state.podSeen(a);
    state.podSeen({ metadata: { uid: 'x', creationTimestamp: a }, status: b, spec: a });
    state.nodeSeen(a);
    state.nodeSeen({ status: { volumesAttached: a, volumesInUse: b } });
    state.csiDriverSeen(a);
    state.csiNodeSeen({ metadata: { name: 'worker-1' }, spec: { drivers: a } });
    state.podDeleted(a);
    state.snapshot();
  }), { numRuns: 300 });
});

test('settledOrTimeout waits for every watch to list or fail once, or gives up after the timeout', async () => {
  const { state } = clocked();
  let settled = false;
  const waiting = state.settledOrTimeout(5_000).then(() => { settled = true; });
  state.synced('pods');
  state.synced('node');
  state.synced('csiNode', 'cannot list or watch CSINode worker-1: HTTP 403');
  await new Promise((r) => setImmediate(r));
  assert.equal(settled, false, 'CSIDriver has not answered yet');
  state.synced('csiDrivers');
  await waiting;
  assert.equal(state.snapshot().unsynced.csiNode, 'cannot list or watch CSINode worker-1: HTTP 403');
  const fresh = clocked().state;
  const started = performance.now();
  await fresh.settledOrTimeout(30);
  assert.ok(performance.now() - started >= 25, 'timed out rather than resolving early');
});

test('containers count as started only with started=true (null is false), or running on clusters without the field', () => {
  const base = podObject('c', { createdAt: T0, scheduledAt: T0, initializedAt: T0, startedAt: T0 + 1000 });
  const status = (cs: Record<string, unknown>) => ({ ...base, status: { ...base.status, containerStatuses: [{ name: 'app', ...cs }] } });
  const running = { running: { startedAt: '2026-12-01T10:00:01Z' } };
  assert.equal(podView(status({ started: true, state: running }))?.reached.started, Date.parse('2026-12-01T10:00:01Z'));
  assert.equal(podView(status({ started: null, state: running }))?.reached.started, undefined);
  assert.equal(podView(status({ started: false, state: running }))?.reached.started, undefined, 'startup probe not passed yet');
  assert.equal(podView(status({ state: running }))?.reached.started, Date.parse('2026-12-01T10:00:01Z'));
  assert.equal(podView(status({ state: { waiting: { reason: 'ContainerCreating' } } }))?.reached.started, undefined);
  const twoContainers = { ...status({ started: true, state: running }), spec: { containers: [{ name: 'app' }, { name: 'sidecar' }] } };
  assert.equal(podView(twoContainers)?.reached.started, undefined, 'the second container has no status yet');
});

test('a Node that disappears and comes back is a new baseline: its volumes are not attributed to waiting pods', () => {
  const { clock, state } = clocked();
  state.nodeSeen({ status: {} });
  state.podSeen(podObject('w', { createdAt: T0, scheduledAt: T0, volumes: [PVC('claim-w')] }));
  state.nodeSeen(undefined);
  clock.now = T0 + 30_000;
  state.nodeSeen({ status: { volumesAttached: [{ name: csiName('driver.longhorn.io', 'pvc-old') }] } });
  assert.equal(state.snapshot().attach.samples, 0);
  clock.now = T0 + 31_000;
  state.nodeSeen({ status: { volumesAttached: [{ name: csiName('driver.longhorn.io', 'pvc-old') }, { name: csiName('driver.longhorn.io', 'pvc-w') }] } });
  assert.equal(state.snapshot().attach.p50Ms, 31_000);
});

test('settledOrTimeout ends when the agent stops, leaving no timer behind (SIGTERM before the first scan)', async () => {
  const { state } = clocked();
  const stop = new AbortController();
  const started = performance.now();
  const waiting = state.settledOrTimeout(60_000, stop.signal);
  stop.abort();
  await waiting;
  assert.ok(performance.now() - started < 1_000);
  await state.settledOrTimeout(60_000, stop.signal);
  assert.equal(process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length, 0, 'the 60 s timer was cleared');
});
