// Where initialization ends follows the node's kubelet version. The pod statuses below are written as
// each kubelet writes them (pkg/kubelet): the first sync's status has Initialized (no init containers)
// and PodReadyToStartContainers False; then volumes mount, SyncPod creates the sandbox and its
// network, pulls the image and starts the container.
// - 1.35: the condition turns True in the first status computed after SyncPod returned (the PLEG's
//   events start the next sync), i.e. in the same write as the running container.
// - 1.36 (kubernetes/kubernetes #134660): SyncPod calls OnPodSandboxReady after the sandbox, network
//   and volumes are ready and before the image pull; it sets the condition True through the status
//   manager at once: a write of its own, seconds before the container runs.
// The agent (WorkloadState, its Node's kubeletVersion) and measure (PodFollower, the Node it read)
// split the same way.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { WorkloadState } from '../../src/workload/state.ts';
import { noteReached, reachedNow, sandboxStampOf, startupTimes, type Marks } from '../../src/workload/pod-milestones.ts';
import { PodFollower } from '../../src/measure/follow.ts';
import { podObject, type PodStage } from '../helpers/pods.ts';

const T0 = Date.parse('2026-12-01T10:00:00.000Z');
const at = (s: number) => T0 + s * 1000;
const CREATED: PodStage = { createdAt: T0, scheduledAt: at(0.2) };

/** [receipt (s after T0), the pod as that write left it]; volumes 2.6 s, image pull and start 4.2 s. */
const KUBELET_135: [number, PodStage][] = [
  [0.2, CREATED],
  [0.4, { ...CREATED, initializedAt: at(0.4) }],
  [7.4, { ...CREATED, initializedAt: at(0.4), sandboxAt: at(7.3), startedAt: at(7.2), readyAt: at(7.3) }],
];
const KUBELET_136: [number, PodStage][] = [
  [0.2, CREATED],
  [0.4, { ...CREATED, initializedAt: at(0.4) }],
  [3.1, { ...CREATED, initializedAt: at(0.4), sandboxAt: at(3.0) }],
  [7.4, { ...CREATED, initializedAt: at(0.4), sandboxAt: at(3.0), startedAt: at(7.2), readyAt: at(7.3) }],
];
/** A pod with an init container on 1.36: sandbox first, then the init container (2 s), then Initialized. */
const INIT_136: [number, PodStage][] = [
  [0.2, CREATED],
  [0.4, { ...CREATED }],
  [1.1, { ...CREATED, sandboxAt: at(1.0) }],
  [3.2, { ...CREATED, sandboxAt: at(1.0), initializedAt: at(3.1) }],
  [5.4, { ...CREATED, sandboxAt: at(1.0), initializedAt: at(3.1), startedAt: at(5.2), readyAt: at(5.3) }],
];

function marksOf(writes: [number, PodStage][]): Marks {
  const marks: Marks = {};
  for (const [seen, stage] of writes) noteReached(marks, reachedNow(podObject('p', stage)), at(seen), false);
  return marks;
}

const rounded = (times: ReturnType<typeof startupTimes>) => times && Object.fromEntries(Object.entries(times).map(([k, v]) => [k, Math.round(v)]));

test('the version decides what PodReadyToStartContainers marks: the sandbox from 1.36, nothing apart before', () => {
  assert.deepEqual(['v1.36.2', 'v1.36.0+k3s1', '1.37.0', 'v1.35.4', 'v1.34.1-eks-1', null, 'v2.0.0', 'garbage'].map(sandboxStampOf),
    ['sandbox', 'sandbox', 'sandbox', 'containers', 'containers', 'containers', 'containers', 'containers']);
});

test('1.36: initialization ends when the sandbox, network and volumes are ready; creation is the image pull and start', () => {
  assert.deepEqual(rounded(startupTimes(marksOf(KUBELET_136), T0, 'sandbox')),
    { scheduling: 200, initialization: 2900, creation: 4300, readiness: 0, total: 7400, statusDelay: 0 });
  // Split as before 1.36, the same pod would show the volumes and the sandbox inside creation.
  assert.deepEqual(rounded(startupTimes(marksOf(KUBELET_136), T0, 'containers')),
    { scheduling: 200, initialization: 200, creation: 7000, readiness: 0, total: 7400, statusDelay: 0 });
});

test('1.35: the condition arrives with the running container, so it moves nothing; the 1.36 split there would be wrong', () => {
  const before = { scheduling: 200, initialization: 200, creation: 7000, readiness: 0, total: 7400, statusDelay: 0 };
  assert.deepEqual(rounded(startupTimes(marksOf(KUBELET_135), T0, sandboxStampOf('v1.35.4'))), before);
  assert.deepEqual(rounded(startupTimes(marksOf(KUBELET_135), T0, 'sandbox'))?.creation, 0, 'taken as the sandbox, the 1.35 stamp would put the whole pull into initialization');
});

test('1.36 with an init container: the sandbox comes before Initialized, which still ends initialization', () => {
  assert.deepEqual(rounded(startupTimes(marksOf(INIT_136), T0, 'sandbox')),
    { scheduling: 200, initialization: 3000, creation: 2200, readiness: 0, total: 5400, statusDelay: 0 });
});

test('the agent splits by its Node\'s kubeletVersion, measure by the Node it read', () => {
  for (const [version, writes, initialization] of [['v1.36.2', KUBELET_136, 2.9], ['v1.35.4', KUBELET_135, 0.2]] as const) {
    const clock = { now: T0 };
    const phases: Record<string, number> = {};
    const state = new WorkloadState({ nodeName: 'worker-1', now: () => clock.now, onPhase: (p, s) => { phases[p] = Math.round(s * 1000) / 1000; } });
    state.nodeSeen({ status: { nodeInfo: { kubeletVersion: version } } });
    for (const [seen, stage] of writes) {
      clock.now = at(seen);
      state.podSeen(podObject('p', stage));
    }
    assert.equal(phases.initialization, initialization, `agent, kubelet ${version}`);

    const follower = new PodFollower('worker-1', 1, () => clock.now);
    follower.sending('p', T0);
    follower.createdOk('p');
    for (const [seen, stage] of writes) {
      clock.now = at(seen);
      follower.podEvent('MODIFIED', podObject('p', stage));
    }
    assert.equal(follower.samples(new Map(), version)[0]?.phases.initialization, initialization * 1000, `measure, kubelet ${version}`);
  }
});
