// One Ready pod's timeline turned into its sample: the total as the user sees it (create request →
// Ready received through the watch), the kubelet's phases from its own stamps, and the status delay
// between the kubelet marking the pod Ready and the API showing it (client throttling). Plus the
// checks that say whether a run's numbers can be trusted (clock skew, lost events, errors).
import { MILESTONES, startupTimes, type Mark, type SandboxStamp } from '../workload/pod-milestones.ts';
import type { Timeline } from './timeline.ts';
import type { PodSample } from './result.ts';

/** A stamp later than our own receipt by more than this (its second precision aside) means the clocks differ. */
export const SKEW_LIMIT_MS = 2_000;
/** More failed requests or creates than this share makes the run not valid. */
export const ERROR_LIMIT = 0.1;

/** `stamp`: what the node's kubelet version makes PodReadyToStartContainers mark (pod-milestones.ts sandboxStampOf). */
export function sampleOf(t: Timeline, imagePullMs: number | null, stamp: SandboxStamp = 'containers'): PodSample | undefined {
  const times = startupTimes(t.marks, t.sentAt, stamp);
  const ready = t.marks.ready;
  if (!times || !ready) return undefined;
  const rel = (ms: number): number => Math.round(ms - t.sentAt);
  const milestones: PodSample['milestones'] = {};
  for (const name of MILESTONES) {
    const m = t.marks[name];
    if (m) milestones[name] = { seenMs: rel(m.seenAt), kubeletMs: m.stampAt === null ? null : rel(m.stampAt) };
  }
  return {
    pod: t.name,
    phases: {
      scheduling: Math.round(times.scheduling), initialization: Math.round(times.initialization),
      creation: Math.round(times.creation), readiness: Math.round(times.readiness), total: Math.round(times.total),
    },
    statusDelayMs: Math.round(times.statusDelay),
    milestones,
    imagePullMs,
    ...(ready.viaList ? { readySeenBy: 'list' as const } : {}),
  };
}

export interface ValidityInput {
  timelines: Timeline[];
  samples: PodSample[];
  requested: number;
  failedCreates: number;
  requests: number;
  failedRequests: number;
}

/** Median of API stamp − our clock, per pod, for creation: far from 0 means the clocks differ. */
function creationSkewMs(timelines: Timeline[]): number | null {
  const skews = timelines
    .filter((t) => t.createdStampAt !== null)
    // The stamp is floored to the second: +500 ms centres it.
    .map((t) => (t.createdStampAt as number) + 500 - t.sentAt)
    .sort((a, b) => a - b);
  return skews.length === 0 ? null : (skews[Math.floor(skews.length / 2)] as number);
}

/** Kubelet stamps later than our own receipt of them: the node's clock runs ahead of ours. */
function stampsAhead(timelines: Timeline[]): number {
  let ahead = 0;
  for (const t of timelines) {
    for (const m of Object.values(t.marks) as Mark[]) if (m.stampAt !== null && m.stampAt - m.seenAt > SKEW_LIMIT_MS - 1000) { ahead += 1; break; }
  }
  return ahead;
}

export function validity(v: ValidityInput): { valid: boolean; problems: string[] } {
  const problems: string[] = [];
  const skew = creationSkewMs(v.timelines);
  if (skew !== null && Math.abs(skew) > SKEW_LIMIT_MS) {
    problems.push(`clock skew: the API server stamps pods ${(skew / 1000).toFixed(1)} s ${skew > 0 ? 'after' : 'before'} this machine's clock says it sent them: the kubelet's stamps cannot be set against the watch times (sync the clocks with NTP)`);
  }
  const ahead = stampsAhead(v.timelines);
  if (ahead > 0) problems.push(`clock skew: ${ahead} pod${ahead === 1 ? '' : 's'} carry kubelet stamps more than ${SKEW_LIMIT_MS / 1000} s after this command received them: the node's clock runs ahead`);
  const late = v.samples.filter((s) => s.readySeenBy === 'list').length;
  if (late > 0) problems.push(`lost events: ${late} pod${late === 1 ? "'s" : "s'"} Ready was found by a LIST, not the watch: their times are when the LIST ran`);
  if (v.requested > 0 && v.failedCreates / v.requested > ERROR_LIMIT) problems.push(`errors: ${v.failedCreates} of ${v.requested} pods could not be created (over ${ERROR_LIMIT * 100} %)`);
  if (v.requests > 0 && v.failedRequests / v.requests > ERROR_LIMIT) problems.push(`errors: ${v.failedRequests} of ${v.requests} API requests failed (over ${ERROR_LIMIT * 100} %)`);
  return { valid: problems.length === 0, problems };
}
