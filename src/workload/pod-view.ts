// The few fields of a Pod the start-up and attach trackers read. Timestamps arrive as Date objects
// from a LIST (client-node deserializes them) and as RFC 3339 strings from a watch event: both parse.
// The API's timestamps have whole-second precision.

import type { ObjectShape } from '../kube/projection.ts';
import { reachedNow, timeMs, type Reached } from './pod-milestones.ts';

export interface PodView {
  uid: string;
  /** Mirror pods of static manifests never pass the scheduler; their start is not an API path. */
  mirror: boolean;
  terminal: boolean;
  /** metadata.creationTimestamp (ms, whole seconds). */
  createdAt: number | undefined;
  /** The milestones reached so far, each with the kubelet's (or scheduler's) stamp. */
  reached: Reached;
  /** Volumes that may need an attach (PVCs, generic ephemeral, CSI inline, in-tree block plugins). */
  attachCandidates: number;
}

type Obj = Record<string, any>;

const KEEP = 'scalar';
/**
 * The fields of a Pod podView reads, and the informer keeps (src/kube/projection.ts): no
 * environment, no volume contents (only which kind each volume is), no managedFields, no labels.
 */
export const POD_FIELDS: ObjectShape = {
  fields: {
    metadata: {
      fields: {
        name: KEEP, namespace: KEEP, uid: KEEP, resourceVersion: KEEP, creationTimestamp: KEEP, deletionTimestamp: KEEP,
        annotations: { fields: { 'kubernetes.io/config.mirror': KEEP } },
      },
    },
    spec: {
      fields: {
        nodeName: KEEP,
        containers: { items: { fields: {} }, max: 256 },
        volumes: { items: { fields: {}, rest: 'present', maxKeys: 8 }, max: 256 },
      },
    },
    status: {
      fields: {
        phase: KEEP,
        conditions: { items: { fields: { type: KEEP, status: KEEP, lastTransitionTime: KEEP, lastProbeTime: KEEP } }, max: 32 },
        containerStatuses: { items: { fields: { started: KEEP, state: { fields: { running: { fields: { startedAt: KEEP } } } } } }, max: 256 },
      },
    },
  },
};

/** In-tree plugins with an attach step (the attach/detach controller handles them). */
const ATTACHABLE_INLINE = ['iscsi', 'fc', 'rbd', 'awsElasticBlockStore', 'gcePersistentDisk', 'azureDisk', 'cinder', 'vsphereVolume', 'portworxVolume', 'csi', 'ephemeral', 'persistentVolumeClaim'];

function attachCandidates(volumes: unknown): number {
  if (!Array.isArray(volumes)) return 0;
  return volumes.filter((v: Obj) => v && ATTACHABLE_INLINE.some((kind) => v[kind] !== undefined && v[kind] !== null)).length;
}

/** Reads a Pod object defensively; undefined when it has no uid (nothing to key it by). */
export function podView(pod: unknown): PodView | undefined {
  const p = pod as Obj | undefined;
  const uid = p?.metadata?.uid;
  if (typeof uid !== 'string' || uid === '') return undefined;
  const phase = p?.status?.phase;
  return {
    uid,
    mirror: typeof p?.metadata?.annotations?.['kubernetes.io/config.mirror'] === 'string',
    terminal: phase === 'Succeeded' || phase === 'Failed',
    createdAt: timeMs(p?.metadata?.creationTimestamp),
    reached: reachedNow(p),
    attachCandidates: attachCandidates(p?.spec?.volumes),
  };
}
