// A cluster for `report` on the real control plane, from a handful of nodes (tests) to 5 000 nodes
// and 100 000 pods (bench/fleet.ts): created through the API with many requests in flight. Three
// control-plane nodes and `workers` workers whose agents published annotations (some without an
// agent, some with a broken annotation); app Deployments with their pods; optionally a kube-proxy
// and a CSI node DaemonSet with a pod on every node; a CSI driver's controller Deployment whose
// provisioner logs client-side throttling; Tekton (CRD, feature flags, controller, PipelineRuns).
// Each node with annotations also has its agent's heartbeat Lease, renewed as the fleet is built
// (current for 15 min), in the agents' namespace node-tuning-advisor.
// The test plays the kubelet: a few pods are marked Running and their logs served by KubeletLogs.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parse } from 'yaml';
import { REPORT_KEY } from '../../src/wire/annotations.ts';
import { DEFAULT_AGENT_NAMESPACE, DEFAULT_HEARTBEAT_MS, heartbeatLease, heartbeatSpec } from '../../src/wire/heartbeat.ts';
import { loadRuleSet } from '../../src/rules/rule-set.ts';
import { THROTTLE_LINES } from './cluster-fixture.ts';
import type { ControlPlane } from './control-plane.ts';
import {
  agentAnnotations, CSI_CONTROLLER, CSI_NODE, nodeObject, pipelineRunObject, podObject, TEKTON_CONTROLLER, workloadObject, type ContainerSpec, type RuleInfo,
} from './fleet-objects.ts';
import type { KubeletLogs } from './kubelet-logs.ts';

type Obj = Record<string, any>;

export interface FleetSpec {
  workers: number;
  appNamespaces: number;
  appsPerNamespace: number;
  podsPerApp: number;
  /** kube-proxy and the CSI node plugin on every node. */
  daemonSets: boolean;
  pipelineRuns: number;
  /** Every Nth worker has no agent / a broken report annotation (0: none). */
  noAgentEvery?: number;
  unreadableEvery?: number;
  concurrency?: number;
  progress?: (line: string) => void;
}

export const TEKTON_NS = 'tekton-pipelines';
export const CSI_NS = 'kube-system';
export const CI_NS = 'ci';
const MERGE = 'application/merge-patch+json';
const CRD = path.resolve(import.meta.dirname, '../fixtures/crds/tekton.dev_pipelineruns.yaml');

export const workerName = (i: number) => `worker-${String(i).padStart(5, '0')}`;
export const CONTROL_PLANE_NODES = ['cp-1', 'cp-2', 'cp-3'];

/** Runs `fn` over `items`, `concurrency` at a time. */
export async function inParallel<T>(items: T[], concurrency: number, fn: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => { while (next < items.length) { const i = next++; await fn(items[i] as T, i); } };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
}

export async function nodeRules(): Promise<RuleInfo[]> {
  return (await loadRuleSet({ scope: 'node' })).map((r) => ({ id: r.id, category: r.category, severity: r.severity, weight: r.weight }));
}

async function ensure(cp: ControlPlane, urlPath: string, body: Obj): Promise<void> {
  const res = await cp.request('POST', urlPath, body);
  if (res.status !== 201 && res.status !== 409) throw new Error(`POST ${urlPath}: HTTP ${res.status}: ${res.body?.message ?? res.body}`);
}

async function namespace(cp: ControlPlane, name: string): Promise<void> {
  await ensure(cp, '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  // No controller manager: ServiceAccount admission needs the namespace's default account to exist.
  await ensure(cp, `/api/v1/namespaces/${name}/serviceaccounts`, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default' } });
}

/** Marks a pod Running (the kubelet's status write). */
export async function markRunning(cp: ControlPlane, ns: string, pod: string): Promise<void> {
  await cp.must('PATCH', `/api/v1/namespaces/${ns}/pods/${pod}/status`, { status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] } }, { contentType: MERGE });
}

/** The PipelineRun CRD, served once Established. */
export async function installTektonCrd(cp: ControlPlane): Promise<void> {
  await ensure(cp, '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', parse(await readFile(CRD, 'utf8')));
  for (let i = 0; i < 300; i++) {
    if ((await cp.request('GET', '/apis/tekton.dev/v1/pipelineruns?limit=1')).status === 200) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('the PipelineRun CRD was not served within 30 s');
}

async function workloadWithPods(cp: ControlPlane, ns: string, kind: 'Deployment' | 'DaemonSet', name: string, containers: ContainerSpec[], nodes: string[], concurrency: number): Promise<string[]> {
  const labels = { 'app.kubernetes.io/name': name };
  const plural = kind === 'Deployment' ? 'deployments' : 'daemonsets';
  await ensure(cp, `/apis/apps/v1/namespaces/${ns}/${plural}`, workloadObject(kind, name, labels, containers, nodes.length));
  const owner = kind === 'Deployment' ? { kind: 'ReplicaSet', name: `${name}-7d9f8c6b5` } : { kind, name };
  const pods = nodes.map((_, i) => `${owner.name}-${kind === 'Deployment' ? 'x' : ''}${i.toString(36).padStart(5, '0')}`);
  await inParallel(pods, concurrency, (pod, i) => ensure(cp, `/api/v1/namespaces/${ns}/pods`, podObject(pod, labels, nodes[i] as string, containers, owner)));
  return pods;
}

async function createNodes(cp: ControlPlane, kubelet: KubeletLogs, spec: FleetSpec, concurrency: number): Promise<string[]> {
  const rules = await nodeRules();
  await namespace(cp, DEFAULT_AGENT_NAMESPACE);
  const names = [...CONTROL_PLANE_NODES, ...Array.from({ length: spec.workers }, (_, i) => workerName(i + 1))];
  await inParallel(names, concurrency, async (name, i) => {
    const controlPlane = i < CONTROL_PLANE_NODES.length;
    const worker = i - CONTROL_PLANE_NODES.length + 1;
    const none = !controlPlane && spec.noAgentEvery && worker % spec.noAgentEvery === 0;
    const broken = !controlPlane && spec.unreadableEvery && worker % spec.unreadableEvery === 0;
    const annotations = none ? {} : broken ? { [REPORT_KEY]: '{"schemaVersion":1,"score":"high"' } : agentAnnotations(i, controlPlane, rules);
    await ensure(cp, '/api/v1/nodes', nodeObject(name, i, { controlPlane, annotations, kubeletStatus: kubelet.nodeStatus() }));
    if (!none) {
      const lease = heartbeatLease(name, DEFAULT_AGENT_NAMESPACE, heartbeatSpec(name, DEFAULT_HEARTBEAT_MS, Date.now()), undefined);
      await ensure(cp, `/apis/coordination.k8s.io/v1/namespaces/${DEFAULT_AGENT_NAMESPACE}/leases`, lease);
    }
  });
  return names;
}

async function tekton(cp: ControlPlane, kubelet: KubeletLogs, spec: FleetSpec, node: string): Promise<void> {
  await installTektonCrd(cp);
  for (const ns of [TEKTON_NS, CI_NS]) await namespace(cp, ns);
  await ensure(cp, `/api/v1/namespaces/${TEKTON_NS}/configmaps`, {
    apiVersion: 'v1', kind: 'ConfigMap', data: { 'disable-affinity-assistant': 'true', coschedule: 'workspaces' },
    metadata: { name: 'feature-flags', labels: { 'app.kubernetes.io/part-of': 'tekton-pipelines', 'app.kubernetes.io/instance': 'default' } },
  });
  await ensure(cp, '/apis/storage.k8s.io/v1/storageclasses', { apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name: 'gp3', annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } }, provisioner: 'ebs.csi.aws.com' });
  await ensure(cp, '/apis/storage.k8s.io/v1/storageclasses', { apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name: 'nfs' }, provisioner: 'nfs.csi.k8s.io' });
  await ensure(cp, '/apis/storage.k8s.io/v1/csidrivers', { apiVersion: 'storage.k8s.io/v1', kind: 'CSIDriver', metadata: { name: 'ebs.csi.aws.com' }, spec: {} });
  await ensure(cp, '/apis/storage.k8s.io/v1/csidrivers', { apiVersion: 'storage.k8s.io/v1', kind: 'CSIDriver', metadata: { name: 'nfs.csi.k8s.io' }, spec: { attachRequired: false } });
  await ensure(cp, `/api/v1/namespaces/${CI_NS}/persistentvolumeclaims`, {
    apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'shared-src' },
    spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'nfs', resources: { requests: { storage: '1Gi' } } },
  });
  const runs = Array.from({ length: spec.pipelineRuns }, (_, i) => `build-${String(i + 1).padStart(5, '0')}`);
  await inParallel(runs, spec.concurrency ?? 16, (run, i) => ensure(cp, `/apis/tekton.dev/v1/namespaces/${CI_NS}/pipelineruns`,
    pipelineRunObject(run, i % 2 === 0 ? { claimName: 'shared-src' } : { template: ['ReadWriteOnce'] })));
  const [pod] = await workloadWithPods(cp, TEKTON_NS, 'Deployment', 'tekton-pipelines-controller', TEKTON_CONTROLLER, [node], 1);
  await markRunning(cp, TEKTON_NS, pod as string);
  kubelet.set(TEKTON_NS, pod as string, 'tekton-pipelines-controller', THROTTLE_LINES);
}

async function csiController(cp: ControlPlane, kubelet: KubeletLogs, nodes: string[]): Promise<void> {
  const pods = await workloadWithPods(cp, CSI_NS, 'Deployment', 'ebs-csi-controller', CSI_CONTROLLER, nodes, 2);
  const recent = new Date(Date.now() - 120_000).toISOString();
  for (const pod of pods) {
    await markRunning(cp, CSI_NS, pod);
    kubelet.set(CSI_NS, pod, 'csi-provisioner', THROTTLE_LINES);
    kubelet.set(CSI_NS, pod, 'csi-attacher', `${recent} I1201 10:00:00.000000 1 main.go:99] Attacher started\n`);
    kubelet.set(CSI_NS, pod, 'csi-resizer', `${recent} I1201 10:00:00.000000 1 main.go:99] Resizer started\n`);
  }
}

async function apps(cp: ControlPlane, spec: FleetSpec, nodes: string[], concurrency: number): Promise<void> {
  let placed = 0;
  for (let n = 0; n < spec.appNamespaces; n++) {
    const ns = `apps-${String(n).padStart(3, '0')}`;
    await namespace(cp, ns);
    for (let a = 0; a < spec.appsPerNamespace; a++) {
      const onNodes = Array.from({ length: spec.podsPerApp }, () => nodes[placed++ % nodes.length] as string);
      await workloadWithPods(cp, ns, 'Deployment', `app-${a}`, [{ name: 'app', image: `registry.example/team-${a}/app-${a}:v1.${n}.0` }], onNodes, concurrency);
    }
    spec.progress?.(`namespace ${ns}: ${placed} app pods`);
  }
}

/** Builds the whole cluster; returns the node names. */
export async function buildFleet(cp: ControlPlane, kubelet: KubeletLogs, spec: FleetSpec): Promise<string[]> {
  const concurrency = spec.concurrency ?? 16;
  await namespace(cp, CSI_NS);
  const nodes = await createNodes(cp, kubelet, spec, concurrency);
  spec.progress?.(`${nodes.length} nodes`);
  const workers = nodes.slice(CONTROL_PLANE_NODES.length);
  const first = (workers[0] ?? nodes[0]) as string;
  await tekton(cp, kubelet, spec, first);
  await csiController(cp, kubelet, [first, (workers[1] ?? first)]);
  if (spec.daemonSets) {
    await workloadWithPods(cp, CSI_NS, 'DaemonSet', 'kube-proxy', [{ name: 'kube-proxy', image: 'registry.example/kube-proxy:v1.36.2' }], nodes, concurrency);
    spec.progress?.('kube-proxy pods');
    await workloadWithPods(cp, CSI_NS, 'DaemonSet', 'ebs-csi-node', CSI_NODE, nodes, concurrency);
    spec.progress?.('CSI node pods');
  }
  await apps(cp, spec, nodes, concurrency);
  return nodes;
}
