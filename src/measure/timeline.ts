// Each run pod's milestones twice: when this command's pod watch received them (its own millisecond
// clock: what a user observes, as the SLO and clusterloader2 count) and the kubelet's own stamp on
// them (a condition's lastTransitionTime: whole seconds, set when the kubelet computed the status,
// which may be written much later when its API client is throttled). A pod counts as Ready when the
// watch shows it Running with Ready=True; the total is create request → that event.
import { timeMs } from '../workload/pod-view.ts';
import type { Obj } from '../kube/objects.ts';

export const MILESTONES = ['bound', 'scheduled', 'sandbox', 'initialized', 'started', 'containersReady', 'ready'] as const;
export type MilestoneName = (typeof MILESTONES)[number];

const CONDITION: Record<Exclude<MilestoneName, 'bound' | 'started'>, string> = {
  scheduled: 'PodScheduled', sandbox: 'PodReadyToStartContainers', initialized: 'Initialized', containersReady: 'ContainersReady', ready: 'Ready',
};

export interface Mark {
  /** This command's clock (ms) when its watch (or a LIST) first showed the milestone. */
  seenAt: number;
  /** The kubelet's (or scheduler's) lastTransitionTime (ms, whole seconds); null when none. */
  stampAt: number | null;
  /** First shown by a LIST after the watch failed, or by the final LIST: the watch lost events. */
  viaList: boolean;
}

export interface Timeline {
  name: string;
  sentAt: number;
  marks: Partial<Record<MilestoneName, Mark>>;
  /** API creationTimestamp (ms, whole seconds): compared with sentAt for clock skew. */
  createdStampAt: number | null;
}

function conditionStamp(pod: Obj, type: string): number | null | undefined {
  const list = pod?.status?.conditions;
  if (!Array.isArray(list)) return undefined;
  const c = list.find((x: Obj) => x?.type === type);
  if (c?.status !== 'True') return undefined;
  return timeMs(c.lastTransitionTime) ?? null;
}

function reachedNow(pod: Obj): Partial<Record<MilestoneName, number | null>> {
  const out: Partial<Record<MilestoneName, number | null>> = {};
  if (typeof pod?.spec?.nodeName === 'string' && pod.spec.nodeName !== '') out.bound = null;
  for (const [mark, type] of Object.entries(CONDITION) as [Exclude<MilestoneName, 'bound' | 'started'>, string][]) {
    const stamp = conditionStamp(pod, type);
    if (stamp !== undefined) out[mark] = stamp;
  }
  const started = allStarted(pod);
  if (started !== undefined) out.started = started;
  // Ready as a user means it: the pod Running and its Ready condition True in the same object.
  if (out.ready !== undefined && pod?.status?.phase !== 'Running') delete out.ready;
  return out;
}

/** Every regular container running (started not false): the latest running.startedAt, null without one. */
function allStarted(pod: Obj): number | null | undefined {
  const list = pod?.status?.containerStatuses;
  const expected = Array.isArray(pod?.spec?.containers) ? pod.spec.containers.length : 1;
  if (!Array.isArray(list) || list.length === 0 || list.length < expected) return undefined;
  let latest: number | null = null;
  for (const c of list as Obj[]) {
    // started: false until postStart and a startup probe pass; absent (hollow kubelet, before 1.16): running counts.
    if (!c?.state?.running || c.started === false) return undefined;
    const at = timeMs(c.state.running.startedAt);
    if (at !== undefined) latest = Math.max(latest ?? at, at);
  }
  return latest;
}

export class Timelines {
  private readonly byName = new Map<string, Timeline>();

  sending(name: string, at: number): void {
    const t = this.byName.get(name);
    if (t) t.sentAt = at;
    else this.byName.set(name, { name, sentAt: at, marks: {}, createdStampAt: null });
  }

  has(name: string): boolean {
    return this.byName.has(name);
  }

  /** The pod as the watch (viaList false) or a LIST delivered it at `at`; returns true when it just became Ready. */
  seen(pod: Obj, at: number, viaList: boolean): boolean {
    const t = this.byName.get(pod?.metadata?.name);
    if (!t) return false;
    const wasReady = t.marks.ready !== undefined;
    t.createdStampAt ??= timeMs(pod?.metadata?.creationTimestamp) ?? null;
    for (const [mark, stamp] of Object.entries(reachedNow(pod)) as [MilestoneName, number | null][]) {
      t.marks[mark] ??= { seenAt: at, stampAt: stamp, viaList };
    }
    return !wasReady && t.marks.ready !== undefined;
  }

  get(name: string): Timeline | undefined {
    return this.byName.get(name);
  }

  all(): Timeline[] {
    return [...this.byName.values()];
  }
}
