// Objects of a realistic cluster, shaped as the components that write them on a real one: Nodes as
// a kubelet registers them (capacity, conditions, ~40 images, nodeInfo) with the annotations the
// agent's publisher writes; app Deployments and their pods; DaemonSets with a pod per node; a CSI
// driver's controller Deployment with its sidecars; Tekton's controller, feature flags and
// PipelineRuns. Everything is deterministic by index, so tests can say what each node carries.
import { renderAnnotations } from '../../src/wire/annotations.ts';
import type { Finding, Severity } from '../../src/report/types.ts';
import { finding, report } from './reports.ts';

type Obj = Record<string, any>;

export const CP_ROLE = 'node-role.kubernetes.io/control-plane';
const BOOT = '2026-11-01T00:00:00Z';
const hex = (seed: number, length: number) => Array.from({ length }, (_, i) => ((seed * 31 + i * 7) % 16).toString(16)).join('');

export interface RuleInfo { id: string; category: string; severity: Severity; weight: number }

/**
 * What node #i's agent published: most nodes pass everything; every 7th fails kernel-tick-rate,
 * every 11th cpu-governor, every 5th has tuned-profile unknown; control-plane nodes fail
 * etcd-fsync-latency and etcd-events-split. Rules missing from `rules` are left out.
 */
export function agentFindings(i: number, controlPlane: boolean, rules: RuleInfo[]): Finding[] {
  const failing = new Set<string>();
  if (i % 7 === 0) failing.add('kernel-tick-rate');
  if (i % 11 === 0) failing.add('cpu-governor');
  if (controlPlane) ['etcd-fsync-latency', 'etcd-events-split'].forEach((r) => failing.add(r));
  return rules.map((rule) => {
    const status = failing.has(rule.id) ? 'fail' : rule.id === 'tuned-profile' && i % 5 === 0 ? 'unknown' : rule.id.startsWith('etcd-') && !controlPlane ? 'not-applicable' : 'pass';
    return finding(rule.id, status, { severity: rule.severity, category: rule.category, weight: rule.weight, scoreImpact: status === 'fail' ? rule.weight * 3 : 0 });
  });
}

export function agentAnnotations(i: number, controlPlane: boolean, rules: RuleInfo[]): Record<string, string> {
  const published = report(agentFindings(i, controlPlane, rules), { node: `node-${i}` });
  // As etcd-events-split fails there: the control-plane node's kube-apiserver keeps Events in the main etcd.
  if (controlPlane) published.facts = { ...published.facts, 'etcd.eventsSplit': { value: false, source: '/etc/kubernetes/manifests/kube-apiserver.yaml' } };
  return renderAnnotations(published);
}

const condition = (type: string, status: string, reason: string, message: string) => ({ type, status, reason, message, lastHeartbeatTime: BOOT, lastTransitionTime: BOOT });

/** A Node as a kubelet registers it; `kubeletStatus` points the API server's kubelet client (logs) somewhere. */
export function nodeObject(name: string, i: number, opts: { controlPlane?: boolean; annotations?: Record<string, string>; kubeletStatus?: Obj } = {}): Obj {
  const zone = `zone-${'abc'[i % 3]}`;
  return {
    apiVersion: 'v1', kind: 'Node',
    metadata: {
      name,
      labels: {
        'beta.kubernetes.io/arch': 'amd64', 'beta.kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'amd64', 'kubernetes.io/hostname': name,
        'kubernetes.io/os': 'linux', 'node.kubernetes.io/instance-type': 'm6i.4xlarge', 'topology.kubernetes.io/region': 'region-1',
        'topology.kubernetes.io/zone': zone, ...(opts.controlPlane ? { [CP_ROLE]: '' } : { 'node-role.kubernetes.io/worker': '' }),
      },
      annotations: {
        'node.alpha.kubernetes.io/ttl': '0', 'volumes.kubernetes.io/controller-managed-attach-detach': 'true',
        'csi.volume.kubernetes.io/nodeid': JSON.stringify({ 'ebs.csi.aws.com': `i-0${hex(i, 16)}` }), ...opts.annotations,
      },
    },
    spec: { providerID: `aws:///${zone}/i-0${hex(i, 16)}`, podCIDR: `10.${(i >> 8) & 255}.${i & 255}.0/24`, podCIDRs: [`10.${(i >> 8) & 255}.${i & 255}.0/24`] },
    status: {
      capacity: { cpu: '16', 'ephemeral-storage': '203056560Ki', 'hugepages-1Gi': '0', 'hugepages-2Mi': '0', memory: '65842124Ki', pods: '110' },
      allocatable: { cpu: '15890m', 'ephemeral-storage': '187138019699', 'hugepages-1Gi': '0', 'hugepages-2Mi': '0', memory: '63593932Ki', pods: '110' },
      conditions: [
        condition('MemoryPressure', 'False', 'KubeletHasSufficientMemory', 'kubelet has sufficient memory available'),
        condition('DiskPressure', 'False', 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure'),
        condition('PIDPressure', 'False', 'KubeletHasSufficientPID', 'kubelet has sufficient PID available'),
        condition('Ready', 'True', 'KubeletReady', 'kubelet is posting ready status'),
      ],
      nodeInfo: {
        machineID: hex(i + 1, 32), systemUUID: `ec2${hex(i + 2, 5)}-${hex(i + 3, 4)}-${hex(i + 4, 4)}-${hex(i + 5, 4)}-${hex(i + 6, 12)}`, bootID: `${hex(i + 7, 8)}-${hex(i + 8, 4)}-${hex(i + 9, 4)}-${hex(i + 10, 4)}-${hex(i + 11, 12)}`,
        kernelVersion: '6.1.0-28-cloud-amd64', osImage: 'Debian GNU/Linux 12 (bookworm)', containerRuntimeVersion: 'containerd://1.7.24',
        kubeletVersion: 'v1.36.2', kubeProxyVersion: '', operatingSystem: 'linux', architecture: 'amd64',
      },
      images: Array.from({ length: 40 }, (_, k) => ({
        names: [`registry.example/team-${k % 9}/app-${k}@sha256:${hex(k + i % 4, 64)}`, `registry.example/team-${k % 9}/app-${k}:v1.${k}.${i % 4}`],
        sizeBytes: 20_000_000 + k * 1_234_567,
      })),
      ...opts.kubeletStatus,
    },
  };
}

export interface ContainerSpec { name: string; image: string; args?: string[] }

function container(c: ContainerSpec): Obj {
  return {
    name: c.name, image: c.image, ...(c.args ? { args: c.args } : {}),
    ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }],
    env: [{ name: 'LOG_LEVEL', value: 'info' }, { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }],
    resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { memory: '256Mi' } },
    readinessProbe: { httpGet: { path: '/healthz', port: 'http' }, periodSeconds: 10 },
  };
}

/** A pod as a ReplicaSet or DaemonSet controller would create it, bound to `node`. */
export function podObject(name: string, labels: Record<string, string>, node: string, containers: ContainerSpec[], owner: { kind: string; name: string }): Obj {
  return {
    apiVersion: 'v1', kind: 'Pod',
    metadata: { name, labels, ownerReferences: [{ apiVersion: 'apps/v1', kind: owner.kind, name: owner.name, uid: `00000000-0000-4000-8000-${hex(name.length, 12)}`, controller: true, blockOwnerDeletion: true }] },
    spec: { nodeName: node, containers: containers.map(container), tolerations: [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 }] },
  };
}

/** A Deployment, StatefulSet or DaemonSet selecting `labels`, running `containers`. */
export function workloadObject(kind: 'Deployment' | 'StatefulSet' | 'DaemonSet', name: string, labels: Record<string, string>, containers: ContainerSpec[], replicas = 1): Obj {
  return {
    apiVersion: 'apps/v1', kind, metadata: { name, labels },
    spec: {
      ...(kind === 'DaemonSet' ? {} : { replicas }), ...(kind === 'StatefulSet' ? { serviceName: name } : {}),
      selector: { matchLabels: labels }, template: { metadata: { labels }, spec: { containers: containers.map(container) } },
    },
  };
}

export const CSI_CONTROLLER: ContainerSpec[] = [
  { name: 'ebs-plugin', image: 'registry.example/ebs-csi-driver/aws-ebs-csi-driver:v1.30.0', args: ['controller', '--endpoint=$(CSI_ENDPOINT)'] },
  { name: 'csi-provisioner', image: 'registry.example/sig-storage/csi-provisioner:v3.6.0', args: ['--csi-address=$(ADDRESS)', '--v=2', '--leader-election'] },
  { name: 'csi-attacher', image: 'registry.example/sig-storage/csi-attacher:v4.4.0', args: ['--csi-address=$(ADDRESS)', '--kube-api-qps=20', '--kube-api-burst=40'] },
  { name: 'csi-resizer', image: 'registry.example/sig-storage/csi-resizer:v1.9.0', args: ['--csi-address=$(ADDRESS)'] },
  { name: 'liveness-probe', image: 'registry.example/sig-storage/livenessprobe:v2.11.0' },
];
export const CSI_NODE: ContainerSpec[] = [
  { name: 'ebs-plugin', image: 'registry.example/ebs-csi-driver/aws-ebs-csi-driver:v1.30.0', args: ['node'] },
  { name: 'node-driver-registrar', image: 'registry.example/sig-storage/csi-node-driver-registrar:v2.9.0' },
];
export const TEKTON_CONTROLLER: ContainerSpec[] = [
  { name: 'tekton-pipelines-controller', image: 'registry.example/tektoncd/pipeline/controller:v0.65.0', args: ['-kube-api-qps', '5', '-kube-api-burst=10'] },
];

/** A PipelineRun whose workspace is a volumeClaimTemplate (RWO) or the claim `claimName`. */
export function pipelineRunObject(name: string, workspace: { claimName: string } | { template: string[] }): Obj {
  const ws = 'claimName' in workspace
    ? { name: 'src', persistentVolumeClaim: { claimName: workspace.claimName } }
    : { name: 'source', volumeClaimTemplate: { spec: { accessModes: workspace.template, resources: { requests: { storage: '1Gi' } } } } };
  return { apiVersion: 'tekton.dev/v1', kind: 'PipelineRun', metadata: { name }, spec: { pipelineRef: { name: 'build' }, workspaces: [{ name: 'cache', emptyDir: {} }, ws] } };
}
