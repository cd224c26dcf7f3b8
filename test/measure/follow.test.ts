// The run's pod follower: each pod's milestones as the watch received them and as the kubelet
// stamped them, from the command's own send time; one sample per Ready pod; the validity guard;
// and why the others are not Ready, in the words of the scheduler or kubelet.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PodFollower, whyNotReady } from '../../src/measure/follow.ts';
import { validity } from '../../src/measure/pod-sample.ts';
import { pullDurationMs } from '../../src/measure/run.ts';
import { podObject } from '../helpers/pods.ts';

const T0 = Date.parse('2026-12-01T10:00:00.000Z');

test('creation is when the command sent the request (ms), not the API\'s whole-second stamp', () => {
  const clock = { now: T0 + 700 };
  const follower = new PodFollower('worker-1', 2, () => clock.now);
  follower.sending('a', T0 + 650);
  follower.sending('b', T0 + 660);
  for (const name of ['a', 'b']) follower.createdOk(name);
  const pod = (name: string, stage: Parameters<typeof podObject>[1]) => ({ ...podObject(name, stage), metadata: { ...podObject(name, stage).metadata, name } });
  clock.now = T0 + 900;
  follower.podEvent('MODIFIED', pod('a', { createdAt: T0, scheduledAt: T0 }));
  clock.now = T0 + 1200;
  follower.podEvent('MODIFIED', pod('a', { createdAt: T0, scheduledAt: T0, initializedAt: T0 + 1000 }));
  clock.now = T0 + 2400;
  follower.podEvent('MODIFIED', pod('a', { createdAt: T0, scheduledAt: T0, initializedAt: T0 + 1000, startedAt: T0 + 2000 }));
  clock.now = T0 + 2500;
  follower.podEvent('MODIFIED', pod('a', { createdAt: T0, scheduledAt: T0, initializedAt: T0 + 1000, startedAt: T0 + 2000, readyAt: T0 + 2000 }));
  const [sample, ...others] = follower.samples();
  assert.deepEqual(others, []);
  assert.deepEqual([sample?.pod, sample?.phases, sample?.statusDelayMs], ['a', { scheduling: 250, initialization: 300, creation: 1200, readiness: 100, total: 1850 }, 0]);
  assert.deepEqual(sample?.milestones?.ready, { seenMs: 1850, kubeletMs: 1350 }, 'received 1850 ms after the create; stamped in second 2 (1350 ms after T0+650)');
  assert.equal(follower.settled, false, 'b is not Ready yet');
  follower.podEvent('MODIFIED', pod('b', { createdAt: T0, phase: 'Failed' }));
  assert.equal(follower.settled, true, 'b ended');
  assert.deepEqual(follower.counts(), { created: 2, scheduled: 2, started: 1, ready: 1, ended: 1, present: 2 });
  follower.podEvent('DELETED', pod('a', { createdAt: T0 }));
  assert.equal(follower.counts().present, 1);
  follower.podEvent('ADDED', pod('stranger', { createdAt: T0 }));
  assert.equal(follower.counts().created, 2, 'pods this run did not create are ignored');
});

test('a throttled kubelet: stamped Ready at once, received 20 s later; the total is what the watch saw and the gap is the status delay', () => {
  const clock = { now: T0 };
  const follower = new PodFollower('worker-1', 1, () => clock.now);
  follower.sending('a', T0 + 100);
  follower.createdOk('a');
  const pod = (stage: Parameters<typeof podObject>[1]): Record<string, any> => ({ ...podObject('a', stage), metadata: { ...podObject('a', stage).metadata, name: 'a' } });
  clock.now = T0 + 150;
  follower.podEvent('ADDED', pod({ createdAt: T0 }));
  // Everything the kubelet computed in second 0-1 arrives in one write 20 s later.
  clock.now = T0 + 20_400;
  const ready = pod({ createdAt: T0, scheduledAt: T0, initializedAt: T0 + 1000, startedAt: T0 + 1000, readyAt: T0 + 1000 });
  follower.podEvent('MODIFIED', { ...ready, status: { ...ready.status, phase: 'Pending' } });
  assert.equal(follower.counts().ready, 0, 'Ready=True while the phase is still Pending is not Ready');
  clock.now = T0 + 20_500;
  follower.podEvent('MODIFIED', ready);
  const [s] = follower.samples();
  assert.deepEqual([s?.phases.total, s?.statusDelayMs, s?.phases.initialization, s?.phases.readiness], [20_400, 19_500, 900, 0]);
  assert.deepEqual(validity({ timelines: follower.timelines.all(), samples: follower.samples(), requested: 1, failedCreates: 0, requests: 10, failedRequests: 0 }), { valid: true, problems: [] });
});

test('validity: a Ready found only by a LIST, clock skew and errors make the result not valid', () => {
  const clock = { now: T0 + 500 };
  const follower = new PodFollower('worker-1', 2, () => clock.now);
  // The server stamps creation 30 s after this machine sent it: the clocks differ.
  follower.sending('a', T0 - 30_000);
  follower.createdOk('a');
  follower.watchFailed();
  follower.podEvent('MODIFIED', { ...podObject('a', { createdAt: T0, scheduledAt: T0, initializedAt: T0, startedAt: T0, readyAt: T0 }), metadata: { name: 'a', uid: 'uid-a', creationTimestamp: '2026-12-01T10:00:00Z' } });
  follower.listed();
  const samples = follower.samples();
  assert.equal(samples[0]?.readySeenBy, 'list');
  const v = validity({ timelines: follower.timelines.all(), samples, requested: 10, failedCreates: 2, requests: 100, failedRequests: 11 });
  assert.equal(v.valid, false);
  assert.deepEqual(v.problems.map((p) => p.split(':')[0]), ['clock skew', 'lost events', 'errors', 'errors']);
});

test('image pull time from the kubelet\'s Pulled event', () => {
  assert.equal(pullDurationMs('Successfully pulled image "registry.k8s.io/pause:3.10" in 1.234s (1.234s including waiting). Image size: 320368 bytes.'), 1234);
  assert.equal(pullDurationMs('Successfully pulled image "x" in 850ms (850ms including waiting)'), 850);
  assert.equal(pullDurationMs('Successfully pulled image "x" in 1m2.5s (1m2.5s including waiting)'), 62_500);
  assert.equal(pullDurationMs('Container image "x" already present on machine'), undefined);
  assert.equal(pullDurationMs(42), undefined);
});

test('why a pod is not Ready, grouped: the scheduler\'s or the kubelet\'s own words', () => {
  const follower = new PodFollower('worker-1', 4, () => T0);
  const shapes: Record<string, any> = {
    unschedulable: { metadata: { name: 'unschedulable', uid: 'u1' }, spec: {}, status: { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: '0/3 nodes are available: 1 Too many pods.' }] } },
    pulling: { metadata: { name: 'pulling', uid: 'u2' }, spec: { nodeName: 'worker-1' }, status: { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'True' }, { type: 'Initialized', status: 'True' }], containerStatuses: [{ name: 'c', state: { waiting: { reason: 'ImagePullBackOff', message: 'Back-off pulling image "x"' } } }] } },
    pulling2: { metadata: { name: 'pulling2', uid: 'u3' }, spec: { nodeName: 'worker-1' }, status: { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'True' }, { type: 'Initialized', status: 'True' }], containerStatuses: [{ name: 'c', state: { waiting: { reason: 'ImagePullBackOff', message: 'Back-off pulling image "x"' } } }] } },
    silent: { metadata: { name: 'silent', uid: 'u4' }, spec: { nodeName: 'worker-1' }, status: { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'True' }] } },
  };
  for (const [name, pod] of Object.entries(shapes)) {
    follower.sending(name, T0);
    follower.createdOk(name);
    follower.podEvent('ADDED', pod);
  }
  assert.deepEqual(follower.notReady(), [
    { reason: 'ImagePullBackOff', pods: 2, example: 'pulling: Back-off pulling image "x"' },
    { reason: 'no status from the kubelet yet', pods: 1, example: 'silent: bound to worker-1' },
    { reason: 'Unschedulable', pods: 1, example: 'unschedulable: 0/3 nodes are available: 1 Too many pods.' },
  ]);
  assert.deepEqual(whyNotReady({ status: { phase: 'Failed', reason: 'OutOfpods', message: 'Node didn\'t have enough resource: pods' } }), { reason: 'Failed: OutOfpods', message: 'Node didn\'t have enough resource: pods' });
  assert.deepEqual(whyNotReady({ spec: { nodeName: 'n' }, status: { containerStatuses: [{ state: { terminated: { reason: 'Completed' } } }], conditions: [{}, {}] } }).reason, 'container exited: Completed');
  assert.deepEqual(whyNotReady({}).reason, 'not scheduled yet');
});
