// The few fields of a Pod the start-up and attach trackers read. Timestamps arrive as Date objects
// from a LIST (client-node deserializes them) and as RFC 3339 strings from a watch event: both parse.
// The API's timestamps have whole-second precision.

import type { ObjectShape } from '../kube/projection.ts';
import type { Obj } from '../kube/objects.ts';

export type Milestone = 'created' | 'scheduled' | 'initialized' | 'containersStarted' | 'ready';

export interface PodView {
  uid: string;
  /** Mirror pods of static manifests never pass the scheduler; their start is not an API path. */
  mirror: boolean;
  terminal: boolean;
  /** API times (ms since epoch) of the milestones reached so far. */
  reached: Partial<Record<Milestone, number>>;
  /** Volumes that may need an attach (PVCs, generic ephemeral, CSI inline, in-tree block plugins). */
  attachCandidates: number;
}

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

export function timeMs(value: unknown): number | undefined {
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? undefined : value.getTime();
  if (typeof value !== 'string') return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : ms;
}

function conditionTime(conditions: unknown, type: string): number | undefined {
  if (!Array.isArray(conditions)) return undefined;
  const c = conditions.find((x: Obj) => x?.type === type) as Obj | undefined;
  if (c?.status !== 'True') return undefined;
  return timeMs(c.lastTransitionTime) ?? timeMs(c.lastProbeTime) ?? Number.NaN;
}

/** All regular containers started (started=true, or running when the field is absent): the latest start time. */
function containersStarted(status: Obj | undefined, expected: number): number | undefined {
  const list = status?.containerStatuses;
  if (!Array.isArray(list) || list.length === 0 || list.length < expected) return undefined;
  let latest = -Infinity;
  for (const cs of list as Obj[]) {
    const running = cs?.state?.running;
    // started: true after postStart and the startup probe; null counts as false; absent (before 1.16): running.
    const started = cs?.started === true || (cs?.started === undefined && Boolean(running));
    if (!started) return undefined;
    latest = Math.max(latest, timeMs(running?.startedAt) ?? Number.NaN);
  }
  return latest;
}

function attachCandidates(volumes: unknown): number {
  if (!Array.isArray(volumes)) return 0;
  return volumes.filter((v: Obj) => v && ATTACHABLE_INLINE.some((kind) => v[kind] !== undefined && v[kind] !== null)).length;
}

/** Reads a Pod object defensively; undefined when it has no uid (nothing to key it by). */
export function podView(pod: unknown): PodView | undefined {
  const p = pod as Obj | undefined;
  const uid = p?.metadata?.uid;
  if (typeof uid !== 'string' || uid === '') return undefined;
  const status = p?.status as Obj | undefined;
  const reached: Partial<Record<Milestone, number>> = {};
  const put = (m: Milestone, t: number | undefined): void => { if (t !== undefined) reached[m] = t; };
  put('created', timeMs(p?.metadata?.creationTimestamp));
  put('scheduled', conditionTime(status?.conditions, 'PodScheduled'));
  put('initialized', conditionTime(status?.conditions, 'Initialized'));
  const expected = Array.isArray(p?.spec?.containers) ? p.spec.containers.length : 1;
  put('containersStarted', containersStarted(status, expected));
  put('ready', conditionTime(status?.conditions, 'Ready'));
  return {
    uid,
    mirror: typeof p?.metadata?.annotations?.['kubernetes.io/config.mirror'] === 'string',
    terminal: status?.phase === 'Succeeded' || status?.phase === 'Failed',
    reached,
    attachCandidates: attachCandidates(p?.spec?.volumes),
  };
}
