// What `measure pod-startup` creates, as plain objects: a labelled temporary namespace, N small
// pods that can only land on the measured node, and (optionally) one fresh PVC per pod. Pure: no I/O.
// The pods pass every Pod Security level (restricted included) and carry no probes, so the readiness
// phase is the kubelet's own status update and nothing of the image's.
import { byCodePoint } from '../order.ts';

export const MANAGED_BY = 'node-tuning-advisor';
export const MEASURE_LABEL = 'node-tuning-advisor.io/measure';
export const MEASURE_KIND = 'pod-startup';
/** Selects the namespaces (and pods) of every run, ours and other people's. */
export const MEASURE_SELECTOR = `${MEASURE_LABEL}=${MEASURE_KIND}`;
export const NODE_ANNOTATION = 'node-tuning-advisor.io/node';
export const STARTED_ANNOTATION = 'node-tuning-advisor.io/started-at';
/** After this time a run's namespace is a leftover: its run ended without cleaning up. */
export const EXPIRES_ANNOTATION = 'node-tuning-advisor.io/expires-at';
export const STARTED_BY_ANNOTATION = 'node-tuning-advisor.io/started-by';
export const NAMESPACE_PREFIX = 'nta-measure-';
/** The image kubeadm and most distributions use for the pod sandbox: already on every node. */
export const FALLBACK_IMAGE = 'registry.k8s.io/pause:3.10';

/** scheduler: required node affinity on metadata.name (the scheduler's part is measured); node-name: spec.nodeName (bypasses it). */
export type Placement = 'scheduler' | 'node-name';
export const PLACEMENTS: readonly Placement[] = ['scheduler', 'node-name'];

export interface PodPlan {
  node: string;
  pods: number;
  image: string;
  placement: Placement;
  /** One PVC per pod of this StorageClass; undefined: no volumes. */
  pvcStorageClass?: string;
  pvcSize: string;
  /** The node's taints, tolerated so that a dedicated or control-plane node can be measured. */
  tolerations: Toleration[];
}

export interface Toleration {
  key?: string;
  operator: 'Exists';
  effect?: string;
}

type Obj = Record<string, unknown>;

export function namespaceObject(node: string, startedAt: number, expiresAt: number, startedBy: string): Obj {
  return {
    apiVersion: 'v1', kind: 'Namespace',
    metadata: {
      generateName: NAMESPACE_PREFIX,
      labels: { 'app.kubernetes.io/managed-by': MANAGED_BY, [MEASURE_LABEL]: MEASURE_KIND },
      annotations: {
        [NODE_ANNOTATION]: node,
        [STARTED_ANNOTATION]: new Date(startedAt).toISOString(),
        [EXPIRES_ANNOTATION]: new Date(expiresAt).toISOString(),
        [STARTED_BY_ANNOTATION]: startedBy.slice(0, 253),
      },
    },
  };
}

/** pod-startup-007 of 100: zero-padded so that names sort in creation order. */
export function podName(index: number, total: number): string {
  return `pod-startup-${String(index).padStart(Math.max(3, String(total - 1).length), '0')}`;
}

export function claimName(index: number, total: number): string {
  return `${podName(index, total)}-data`;
}

/** Tolerate the node's own NoSchedule/NoExecute taints (by key and effect); the not-ready ones never. */
export function tolerationsFor(taints: unknown): Toleration[] {
  if (!Array.isArray(taints)) return [];
  const out: Toleration[] = [];
  for (const taint of taints.slice(0, 64) as Obj[]) {
    const key = typeof taint?.key === 'string' ? taint.key : undefined;
    const effect = typeof taint?.effect === 'string' ? taint.effect : undefined;
    if (key === undefined || key.startsWith('node.kubernetes.io/not-ready') || key.startsWith('node.kubernetes.io/unreachable')) continue;
    if (effect !== 'NoSchedule' && effect !== 'NoExecute') continue;
    if (!out.some((t) => t.key === key && t.effect === effect)) out.push({ key, operator: 'Exists', effect });
  }
  return out;
}

export function podObject(plan: PodPlan, index: number): Obj {
  const placement = plan.placement === 'node-name'
    ? { nodeName: plan.node }
    : { affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: [plan.node] }] }] } } } };
  return {
    apiVersion: 'v1', kind: 'Pod',
    metadata: { name: podName(index, plan.pods), labels: { 'app.kubernetes.io/managed-by': MANAGED_BY, [MEASURE_LABEL]: MEASURE_KIND } },
    spec: {
      ...placement,
      ...(plan.tolerations.length > 0 ? { tolerations: plan.tolerations } : {}),
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      // 1 s, not 0: a grace period of 0 makes every delete a force delete, and cleanup could not
      // wait for the kubelet to stop the containers before the next measurement starts.
      terminationGracePeriodSeconds: 1,
      securityContext: { runAsNonRoot: true, runAsUser: 65535, runAsGroup: 65535, seccompProfile: { type: 'RuntimeDefault' } },
      containers: [{
        name: 'pause', image: plan.image, imagePullPolicy: 'IfNotPresent',
        resources: { requests: { cpu: '1m', memory: '4Mi' } },
        securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
        ...(plan.pvcStorageClass !== undefined ? { volumeMounts: [{ name: 'data', mountPath: '/data' }] } : {}),
      }],
      ...(plan.pvcStorageClass !== undefined ? { volumes: [{ name: 'data', persistentVolumeClaim: { claimName: claimName(index, plan.pods) } }] } : {}),
    },
  };
}

export function claimObject(plan: PodPlan, index: number): Obj {
  return {
    apiVersion: 'v1', kind: 'PersistentVolumeClaim',
    metadata: { name: claimName(index, plan.pods), labels: { 'app.kubernetes.io/managed-by': MANAGED_BY, [MEASURE_LABEL]: MEASURE_KIND } },
    spec: { accessModes: ['ReadWriteOnce'], storageClassName: plan.pvcStorageClass, resources: { requests: { storage: plan.pvcSize } } },
  };
}

/**
 * The pause image the node's runtime already holds (`status.images`), newest tag first; the
 * kubelet's sandboxes use it, so no pull. Undefined when the node lists none.
 */
export function pauseImageOf(node: Obj): string | undefined {
  const images = (node.status as Obj | undefined)?.images;
  if (!Array.isArray(images)) return undefined;
  const found: { name: string; version: number[] }[] = [];
  for (const image of images.slice(0, 500) as Obj[]) {
    const names = Array.isArray(image?.names) ? image.names.slice(0, 16) : [];
    for (const name of names) {
      if (typeof name !== 'string' || name.length > 255) continue;
      // registry.k8s.io/pause:3.10, …/eks/pause:3.5, rancher/mirrored-pause:3.6 (k3s), pause-amd64:3.1 (old).
      const match = /^(?:[a-z0-9.-]+(?::\d+)?\/)?(?:[a-z0-9._-]+\/)*(?:mirrored-)?pause(?:-(?:amd64|arm64|arm|ppc64le|s390x))?:(\d+(?:\.\d+){0,2})$/.exec(name);
      if (match) found.push({ name, version: (match[1] as string).split('.').map(Number) });
    }
  }
  found.sort((a, b) => compareVersions(b.version, a.version) || byCodePoint(a.name, b.name));
  return found[0]?.name;
}

function compareVersions(a: number[], b: number[]): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}
