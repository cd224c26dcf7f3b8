// Objects a test creates on the real control plane while it plays the kubelet: Ready Nodes the
// scheduler accepts, a Pod bound to a node, and a ServiceAccount token bound to that Pod (what a
// DaemonSet pod on that node is given), so requests carry the node-name claim; and the shipped
// base's RBAC and policies created by plain POSTs.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import type { ControlPlane } from './control-plane.ts';
import { REPO } from './manifests.ts';

export interface NodeShape {
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  kubeletVersion?: string;
  /** Taints it registers with (`--register-with-taints`): there from its first moment, before any controller sees it. */
  taints?: { key: string; value?: string; effect: string }[];
}

/** A Node as a kubelet registers it: status with capacity and Ready=True, the not-ready taint removed. */
export async function createReadyNode(cp: ControlPlane, name: string, shape: NodeShape = {}): Promise<any> {
  const now = new Date().toISOString();
  await cp.must('POST', '/api/v1/nodes', {
    apiVersion: 'v1', kind: 'Node',
    metadata: { name, labels: { 'kubernetes.io/hostname': name, ...shape.labels }, annotations: shape.annotations ?? {} },
    ...(shape.taints ? { spec: { taints: shape.taints } } : {}),
    status: {
      capacity: { cpu: '4', memory: '8Gi', pods: '110' },
      allocatable: { cpu: '4', memory: '8Gi', pods: '110' },
      conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'test', lastHeartbeatTime: now, lastTransitionTime: now }],
      nodeInfo: {
        kubeletVersion: shape.kubeletVersion ?? 'v1.36.2', kubeProxyVersion: '', architecture: 'amd64', operatingSystem: 'linux',
        bootID: '', machineID: '', systemUUID: '', kernelVersion: '6.1.0', osImage: 'Debian GNU/Linux 12 (bookworm)',
        containerRuntimeVersion: 'containerd://1.7.24',
      },
    },
  });
  // TaintNodesByCondition adds not-ready at create; without a controller manager nothing removes it.
  const node = await cp.must('GET', `/api/v1/nodes/${name}`);
  const taints = (node.spec?.taints ?? []).filter((t: { key: string }) => t.key !== 'node.kubernetes.io/not-ready');
  return cp.must('PATCH', `/api/v1/nodes/${name}`, { spec: { taints } }, { contentType: 'application/merge-patch+json' });
}

export async function ensureNamespace(cp: ControlPlane, name: string): Promise<void> {
  const res = await cp.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  if (res.status !== 201 && res.status !== 409) throw new Error(`namespace ${name}: HTTP ${res.status}`);
}

export async function ensureServiceAccount(cp: ControlPlane, namespace: string, name: string): Promise<void> {
  const res = await cp.request('POST', `/api/v1/namespaces/${namespace}/serviceaccounts`, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name } });
  if (res.status !== 201 && res.status !== 409) throw new Error(`serviceaccount ${namespace}/${name}: HTTP ${res.status}`);
}

/** A Pod already bound to `node` (spec.nodeName), running as `serviceAccount`; returns the created object. */
export async function createBoundPod(cp: ControlPlane, namespace: string, name: string, node: string, serviceAccount = 'default'): Promise<any> {
  return cp.must('POST', `/api/v1/namespaces/${namespace}/pods`, {
    apiVersion: 'v1', kind: 'Pod',
    metadata: { name, namespace },
    spec: {
      nodeName: node, serviceAccountName: serviceAccount, automountServiceAccountToken: false,
      containers: [{ name: 'agent', image: 'example.invalid/node-tuning-advisor:test' }],
    },
  });
}

/** TokenRequest bound to the Pod: the token carries authentication.kubernetes.io/node-name of its node. */
export async function podBoundToken(cp: ControlPlane, namespace: string, serviceAccount: string, pod: { metadata: { name: string; uid: string } }, seconds = 3600): Promise<string> {
  const review = await cp.must('POST', `/api/v1/namespaces/${namespace}/serviceaccounts/${serviceAccount}/token`, {
    apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest',
    spec: { expirationSeconds: seconds, boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: pod.metadata.name, uid: pod.metadata.uid } },
  });
  return review.status.token as string;
}

/** Who the server says a token is (SelfSubjectReview): username, groups and extra claims. */
export async function whoAmI(cp: ControlPlane, token: string): Promise<{ username: string; extra: Record<string, string[]> }> {
  const review = await cp.must('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews',
    { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' }, { token });
  return { username: review.status.userInfo.username, extra: review.status.userInfo.extra ?? {} };
}

/** Repeat a server-side dry run until the server answers with `status` (a new policy or RBAC takes ~1 s). */
export async function waitForAdmission(probe: () => Promise<number>, status: number, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = 0;
  while (Date.now() < deadline) {
    last = await probe();
    if (last === status) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`expected HTTP ${status} within ${timeoutMs} ms, last answer ${last}`);
}

/** Kinds of the shipped manifests that are cluster-scoped (the policies carry a namespace for kustomize only). */
const CLUSTER_SCOPED = new Set(['Namespace', 'ClusterRole', 'ClusterRoleBinding', 'ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding']);

/** Creates each object of these files of manifests/base by a POST (what `kubectl apply -f` does, without kubectl's start-up). */
export async function postBaseManifests(cp: ControlPlane, files: string[]): Promise<void> {
  for (const file of files) {
    for (const doc of parseAllDocuments(await readFile(path.join(REPO, 'manifests/base', file), 'utf8')).map((d) => d.toJS())) {
      const group = doc.apiVersion === 'v1' ? '/api/v1' : `/apis/${doc.apiVersion}`;
      const namespace = CLUSTER_SCOPED.has(doc.kind) ? undefined : doc.metadata.namespace;
      await cp.must('POST', `${group}${namespace ? `/namespaces/${namespace}` : ''}/${doc.kind.toLowerCase().replace(/y$/, 'ie')}s`, doc);
    }
  }
}
