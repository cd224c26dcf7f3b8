// What measure creates: pods only the measured node can take, tolerating its own taints, passing
// every Pod Security level; the node's own pause image; the namespace labelled and dated.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  MEASURE_SELECTOR, claimObject, namespaceObject, pauseImageOf, podName, podObject, tolerationsFor, type PodPlan,
} from '../../src/measure/objects.ts';

const plan: PodPlan = { node: 'worker-1', pods: 100, image: 'registry.k8s.io/pause:3.10', placement: 'scheduler', pvcSize: '1Gi', tolerations: [] };

test('scheduler placement: required node affinity on metadata.name; node-name: spec.nodeName', () => {
  const scheduled = podObject(plan, 7) as any;
  assert.equal(scheduled.metadata.name, 'pod-startup-007');
  assert.deepEqual(scheduled.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms,
    [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['worker-1'] }] }]);
  assert.equal(scheduled.spec.nodeName, undefined);
  const pinned = podObject({ ...plan, placement: 'node-name' }, 0) as any;
  assert.equal(pinned.spec.nodeName, 'worker-1');
  assert.equal(pinned.spec.affinity, undefined);
  assert.equal(podName(1234, 2000), 'pod-startup-1234');
});

test('pods pass Pod Security "restricted", mount no token, have no probes; a PVC each when asked', () => {
  const pod = podObject({ ...plan, pvcStorageClass: 'longhorn' }, 3) as any;
  const container = pod.spec.containers[0];
  assert.deepEqual([pod.spec.securityContext.runAsNonRoot, pod.spec.securityContext.seccompProfile.type], [true, 'RuntimeDefault']);
  assert.deepEqual([container.securityContext.allowPrivilegeEscalation, container.securityContext.capabilities.drop], [false, ['ALL']]);
  assert.equal(pod.spec.automountServiceAccountToken, false);
  assert.equal(container.readinessProbe, undefined);
  assert.equal(pod.spec.terminationGracePeriodSeconds, 1, 'graceful: the kubelet confirms each deletion');
  assert.deepEqual(pod.spec.volumes, [{ name: 'data', persistentVolumeClaim: { claimName: 'pod-startup-003-data' } }]);
  assert.deepEqual((claimObject({ ...plan, pvcStorageClass: 'longhorn' }, 3) as any).spec, { accessModes: ['ReadWriteOnce'], storageClassName: 'longhorn', resources: { requests: { storage: '1Gi' } } });
  assert.equal((podObject(plan, 3) as any).spec.volumes, undefined);
  assert.equal(`${Object.keys(pod.metadata.labels)[1]}=${Object.values(pod.metadata.labels)[1]}`, MEASURE_SELECTOR);
});

test('the node\'s taints are tolerated (NoSchedule, NoExecute), never not-ready or unreachable', () => {
  assert.deepEqual(tolerationsFor([
    { key: 'node-role.kubernetes.io/control-plane', effect: 'NoSchedule' }, { key: 'dedicated', value: 'ci', effect: 'NoExecute' },
    { key: 'soft', effect: 'PreferNoSchedule' }, { key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' },
    { key: 'node.kubernetes.io/unreachable', effect: 'NoExecute' }, { key: 'dedicated', effect: 'NoExecute' }, 'garbage', null,
  ]), [{ key: 'node-role.kubernetes.io/control-plane', operator: 'Exists', effect: 'NoSchedule' }, { key: 'dedicated', operator: 'Exists', effect: 'NoExecute' }]);
  assert.deepEqual(tolerationsFor(undefined), []);
});

test('the pause image the node already holds, newest tag first; lookalikes and digests ignored', () => {
  const node = (names: unknown[]) => ({ status: { images: [{ names, sizeBytes: 1 }] } });
  assert.equal(pauseImageOf(node(['registry.k8s.io/pause@sha256:abc', 'registry.k8s.io/pause:3.9'])), 'registry.k8s.io/pause:3.9');
  assert.equal(pauseImageOf({ status: { images: [{ names: ['registry.k8s.io/pause:3.9'] }, { names: ['registry.k8s.io/pause:3.10'] }, { names: ['k8s.gcr.io/pause:3.2'] }] } }), 'registry.k8s.io/pause:3.10');
  assert.equal(pauseImageOf(node(['example.com/notpause:1', 'pause:latest', 'example.com/pause-amd64-debug:3.1', 7])), undefined);
  assert.equal(pauseImageOf(node(['docker.io/rancher/mirrored-pause:3.6'])), 'docker.io/rancher/mirrored-pause:3.6', 'k3s');
  assert.equal(pauseImageOf(node(['k8s.gcr.io/pause-amd64:3.1'])), 'k8s.gcr.io/pause-amd64:3.1');
  assert.equal(pauseImageOf(node(['localhost:5000/k8s/pause:3.10'])), 'localhost:5000/k8s/pause:3.10');
  assert.equal(pauseImageOf({ status: { images: 'x' } }), undefined);
  assert.equal(pauseImageOf({}), undefined);
});

test('the namespace carries the label runs are found by, and when the run expires', () => {
  const ns = namespaceObject('worker-1', Date.parse('2026-12-01T10:00:00Z'), Date.parse('2026-12-01T10:20:00Z'), 'alice@laptop') as any;
  assert.equal(ns.metadata.generateName, 'nta-measure-');
  assert.equal(ns.metadata.labels['node-tuning-advisor.io/measure'], 'pod-startup');
  assert.deepEqual(ns.metadata.annotations, {
    'node-tuning-advisor.io/node': 'worker-1', 'node-tuning-advisor.io/started-at': '2026-12-01T10:00:00.000Z',
    'node-tuning-advisor.io/expires-at': '2026-12-01T10:20:00.000Z', 'node-tuning-advisor.io/started-by': 'alice@laptop',
  });
});
