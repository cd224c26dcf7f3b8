// A pod's start-up milestones as a watch delivers them: the one mechanism behind the agent's
// pod-startup figures (pod-startup.ts) and `measure pod-startup` (measure/timeline.ts). Each
// milestone keeps when this process received it (its millisecond clock: what a user observes, as the
// SLO and clusterloader2 count) beside the kubelet's own stamp (lastTransitionTime: whole seconds,
// set when the kubelet computed the status, which reaches the API much later when its client is
// throttled). The total ends when Ready was received; the phases come from the kubelet's stamps
// where a write arrived late; the gap between its Ready stamp and the receipt is the status write's
// wait: client throttling.
// Where initialization ends follows the node's kubelet version (sandboxStampOf): from 1.36 the
// kubelet stamps PodReadyToStartContainers as soon as the sandbox, its network and the volumes are
// ready, before image pulls (kubernetes/kubernetes #134660, OnPodSandboxReady); before, that stamp
// came with the first status computed after the containers had started, so it marks nothing apart.
import type { Obj } from '../kube/objects.ts';

export const MILESTONES = ['bound', 'scheduled', 'sandbox', 'initialized', 'started', 'containersReady', 'ready'] as const;
export type MilestoneName = (typeof MILESTONES)[number];

/** A stamp at least this much older than its receipt was written late (or before we looked): the stamp says when. */
export const LIVE_SLACK_MS = 2_000;

const CONDITION: Record<Exclude<MilestoneName, 'bound' | 'started'>, string> = {
  scheduled: 'PodScheduled', sandbox: 'PodReadyToStartContainers', initialized: 'Initialized', containersReady: 'ContainersReady', ready: 'Ready',
};

export interface Mark {
  /** This process's clock (ms) when its watch (or a LIST) first showed the milestone. */
  seenAt: number;
  /** The kubelet's (or scheduler's) lastTransitionTime (ms, whole seconds); null when none. */
  stampAt: number | null;
  /** First shown by a LIST after the watch failed, or by a final LIST: the watch lost events. */
  viaList: boolean;
}

export type Marks = Partial<Record<MilestoneName, Mark>>;
/** The milestones one pod object shows reached, each with its stamp (null: the object has none). */
export type Reached = Partial<Record<MilestoneName, number | null>>;

/** The kubelet's phases (ms) and the user's total, from the create to Ready received. */
export interface StartupTimes {
  scheduling: number;
  initialization: number;
  creation: number;
  readiness: number;
  total: number;
  /** The kubelet's Ready stamp → the API showing Ready: its status write waited (client throttling). */
  statusDelay: number;
}

/** An API timestamp (RFC 3339 string from JSON, or a Date) in ms; undefined when it is not one. */
export function timeMs(value: unknown): number | undefined {
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? undefined : value.getTime();
  if (typeof value !== 'string') return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : ms;
}

function conditionStamp(pod: Obj, type: string): number | null | undefined {
  const list = pod?.status?.conditions;
  if (!Array.isArray(list)) return undefined;
  const c = list.find((x: Obj) => x?.type === type);
  if (c?.status !== 'True') return undefined;
  return timeMs(c.lastTransitionTime) ?? null;
}

/** Every regular container started (started=true, or running where the field is absent: the hollow kubelet, before 1.16): the latest running.startedAt. */
function allStarted(pod: Obj): number | null | undefined {
  const list = pod?.status?.containerStatuses;
  const expected = Array.isArray(pod?.spec?.containers) ? pod.spec.containers.length : 1;
  if (!Array.isArray(list) || list.length === 0 || list.length < expected) return undefined;
  let latest: number | null = null;
  for (const c of list as Obj[]) {
    // started: false (or null) until postStart and a startup probe pass.
    const started = c?.started === true || (c?.started === undefined && Boolean(c?.state?.running));
    if (!started) return undefined;
    const at = timeMs(c?.state?.running?.startedAt);
    if (at !== undefined) latest = Math.max(latest ?? at, at);
  }
  return latest;
}

export function reachedNow(pod: unknown): Reached {
  const p = pod as Obj | undefined;
  const out: Reached = {};
  if (typeof p?.spec?.nodeName === 'string' && p.spec.nodeName !== '') out.bound = null;
  for (const [mark, type] of Object.entries(CONDITION) as [Exclude<MilestoneName, 'bound' | 'started'>, string][]) {
    const stamp = conditionStamp(p as Obj, type);
    if (stamp !== undefined) out[mark] = stamp;
  }
  const started = allStarted(p as Obj);
  if (started !== undefined) out.started = started;
  // Ready as a user means it: the pod Running and its Ready condition True in the same object.
  if (out.ready !== undefined && p?.status?.phase !== 'Running') delete out.ready;
  return out;
}

/** Records the milestones first shown at `at`; true when this showed Ready for the first time. */
export function noteReached(marks: Marks, reached: Reached, at: number, viaList: boolean): boolean {
  const wasReady = marks.ready !== undefined;
  for (const [name, stamp] of Object.entries(reached) as [MilestoneName, number | null][]) {
    marks[name] ??= { seenAt: at, stampAt: stamp, viaList };
  }
  return !wasReady && marks.ready !== undefined;
}

/** When a milestone happened: its receipt when that was prompt (a whole-second stamp says no more), the stamp when it came late. */
export function happenedAt(mark: Mark): number {
  return mark.stampAt === null || mark.seenAt - mark.stampAt < LIVE_SLACK_MS ? mark.seenAt : mark.stampAt;
}

/** happenedAt kept within [floor, ceil] so that phases never go negative; a milestone not seen: floor. */
function within(mark: Mark | undefined, floor: number, ceil: number): number {
  return mark ? Math.min(ceil, Math.max(floor, happenedAt(mark))) : floor;
}

/**
 * What the PodReadyToStartContainers stamp marks on a node: 'sandbox' from kubelet 1.36 (the pod's
 * sandbox, network and volumes ready, before image pulls), 'containers' before (the first status
 * after the containers started). An unknown version reads as before: the stamp then moves nothing.
 */
export type SandboxStamp = 'sandbox' | 'containers';

/** From the Node's kubeletVersion ("v1.36.2", "v1.36.0+k3s1"); only major 1, minor ≥ 36 stamps at the sandbox. */
export function sandboxStampOf(kubeletVersion: string | null | undefined): SandboxStamp {
  const minor = /^v?1\.(\d{1,4})\./.exec(kubeletVersion ?? '')?.[1];
  return minor !== undefined && Number(minor) >= 36 ? 'sandbox' : 'containers';
}

/**
 * The phases of a Ready pod created (or its create sent) at `startAt`; undefined before Ready was
 * received. Initialization ends when the pod is ready to start its containers: Initialized, and
 * where the kubelet stamps the sandbox (1.36+) the sandbox too when it came later (pods without
 * init containers, whose Initialized is the kubelet's first status); creation is the rest up to the
 * containers started: image pulls and container starts, plus volumes, sandbox and network before 1.36.
 */
export function startupTimes(marks: Marks, startAt: number, stamp: SandboxStamp = 'containers'): StartupTimes | undefined {
  const ready = marks.ready;
  if (!ready) return undefined;
  const end = Math.max(startAt, ready.seenAt);
  // PodScheduled: the scheduler's at the bind, or the kubelet's for pods created with spec.nodeName.
  const scheduled = marks.scheduled ? within(marks.scheduled, startAt, end) : Math.min(end, Math.max(startAt, marks.bound?.seenAt ?? end));
  const initialized = within(marks.initialized, scheduled, end);
  const readyToStart = stamp === 'sandbox' && marks.sandbox ? within(marks.sandbox, initialized, end) : initialized;
  const started = within(marks.started, readyToStart, end);
  const readyByKubelet = within(ready, started, end);
  return {
    scheduling: scheduled - startAt, initialization: readyToStart - scheduled, creation: started - readyToStart,
    readiness: readyByKubelet - started, total: end - startAt, statusDelay: end - readyByKubelet,
  };
}
