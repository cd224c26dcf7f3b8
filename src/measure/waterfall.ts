// A measurement as the pages draw it: each Ready pod's start-up as consecutive segments, the phases
// the terminal view names (create → scheduled → initialized → containers started → Ready as the
// kubelet stamped it) then the status write (that stamp → Ready received by the watch), with the
// sandbox-ready and containers-ready milestones marked inside; and the distribution of the totals.
// Milestones are placed as the phases place them (`happenedAt`: the receipt when prompt, the
// kubelet's stamp when its write came late), so a bar's segments add up to the pod's total.
import { happenedAt } from '../workload/pod-milestones.ts';
import { byCodePoint } from '../order.ts';
import { TIMED_PARTS, type PodSample, type TimedPart } from './result.ts';

/** A bar's segments in order: the parts of the total the verdict names its largest phase among. */
export const SEGMENTS = TIMED_PARTS;
export type Segment = TimedPart;
export const TICKS = ['sandbox', 'containersReady'] as const;
export type Tick = (typeof TICKS)[number];

/**
 * Pods drawn one row each: what one run can create (`--pods` at most 1 000). A file with more (not
 * written by a run) is drawn as this many pods spread evenly over its totals, fastest and slowest
 * included; the distribution still counts every pod.
 */
export const MAX_WATERFALL_PODS = 1000;

export interface WaterfallRow {
  pod: string;
  totalMs: number;
  /** Where each segment ends, ms after the create request: non-decreasing, the last one at totalMs. */
  ends: Record<Segment, number>;
  /** Milestones inside the bar, ms after the create request, where the run recorded them. */
  ticks: Partial<Record<Tick, number>>;
  /** Its Ready came from a LIST, not the watch (the run says it is not valid). */
  readyFromList: boolean;
}

export interface Waterfall {
  rows: WaterfallRow[];
  /** Ready pods in the run; rows.length < pods when sampled. */
  pods: number;
  maxMs: number;
}

function rowOf(sample: PodSample): WaterfallRow {
  const total = sample.phases.total;
  let end = 0;
  const ends = {} as Record<Segment, number>;
  for (const segment of SEGMENTS) {
    end = segment === 'statusDelay' ? total : Math.min(total, end + Math.max(0, sample.phases[segment]));
    ends[segment] = end;
  }
  const ticks: WaterfallRow['ticks'] = {};
  for (const tick of TICKS) {
    const mark = sample.milestones?.[tick];
    if (mark) ticks[tick] = Math.min(total, Math.max(0, happenedAt({ seenAt: mark.seenMs, stampAt: mark.kubeletMs, viaList: false })));
  }
  return { pod: sample.pod, totalMs: total, ends, ticks, readyFromList: sample.readySeenBy === 'list' };
}

/** `count` of `items` at evenly spaced ranks, the first and the last included. */
export function spread<T>(items: readonly T[], count: number): T[] {
  if (items.length <= count) return [...items];
  if (count <= 1) return items.slice(-1);
  return Array.from({ length: count }, (_, i) => items[Math.round((i * (items.length - 1)) / (count - 1))] as T);
}

/** Rows fastest first (by total, then name), at most `maxPods` of them. */
export function waterfall(samples: readonly PodSample[], maxPods = MAX_WATERFALL_PODS): Waterfall {
  const sorted = [...samples].sort((a, b) => a.phases.total - b.phases.total || byCodePoint(a.pod, b.pod));
  const rows = spread(sorted, maxPods).map(rowOf);
  return { rows, pods: samples.length, maxMs: sorted.at(-1)?.phases.total ?? 0 };
}

const STEPS_MS = [50, 100, 200, 250, 500, 1000, 2000, 2500, 5000, 10_000, 20_000, 30_000, 60_000, 120_000, 300_000, 600_000];

/** A round bin width that splits [0, maxMs] into at most `bins` bins. */
export function binWidthMs(maxMs: number, bins = 40): number {
  return STEPS_MS.find((step) => step * bins >= maxMs) ?? Math.ceil(maxMs / bins);
}

/** How many totals fall in each bin of `binMs`, from 0 to the bin holding maxMs. */
export function histogram(totals: readonly number[], binMs: number, maxMs: number): number[] {
  const counts = Array<number>(Math.floor(maxMs / binMs) + 1).fill(0);
  for (const total of totals) {
    const bin = Math.min(counts.length - 1, Math.max(0, Math.floor(total / binMs)));
    counts[bin] = (counts[bin] as number) + 1;
  }
  return counts;
}
