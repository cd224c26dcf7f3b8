// The run's pod follower: the agent's phase code with the command's own send time as creation,
// one sample per Ready pod, and why the others are not Ready, in the words of the scheduler or kubelet.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PodFollower, whyNotReady } from '../../src/measure/follow.ts';
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
  assert.deepEqual(follower.samples, [{ pod: 'a', phases: { scheduling: 250, initialization: 300, creation: 1200, readiness: 100, total: 1850 } }]);
  assert.equal(follower.settled, false, 'b is not Ready yet');
  follower.podEvent('MODIFIED', pod('b', { createdAt: T0, phase: 'Failed' }));
  assert.equal(follower.settled, true, 'b ended');
  assert.deepEqual(follower.counts(), { created: 2, scheduled: 2, started: 1, ready: 1, ended: 1, present: 2 });
  follower.podEvent('DELETED', pod('a', { createdAt: T0 }));
  assert.equal(follower.counts().present, 1);
  follower.podEvent('ADDED', pod('stranger', { createdAt: T0 }));
  assert.equal(follower.counts().created, 2, 'pods this run did not create are ignored');
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
