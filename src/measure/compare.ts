// Before → after: per phase (every part of the total, statusDelay included, then the total and the
// attach) the change of p50 and p99 in milliseconds and percent, a verdict per phase, and which of
// the advisor's recorded settings changed between the two runs. Below the noise floor a change does
// not count: under 100 ms, or under 10 % of the total (of the same percentile, the larger of the
// two runs'). Pod start-up jitters by tens of milliseconds from run to run, and a phase of 7 ms that
// took 107 ms is +1431 % but nothing next to a 37 s total.
import { PUBLISHED_FACTS, type PublishedFact } from '../wire/summary-facts.ts';
import type { RecordedFact } from './advisor.ts';
import { TIMED_PARTS, partStats, type Measurement, type PhaseStats, type TimedPart } from './result.ts';
import { sandboxStampOf } from '../workload/pod-milestones.ts';

export const MIN_CHANGE_MS = 100;
export const MIN_CHANGE_RATIO = 0.1;

/** Below these a change of p50 / p99 is noise: max(100 ms, 10 % of the total's p50 / p99). */
export interface NoiseFloor {
  p50Ms: number;
  p99Ms: number;
}

export type Verdict = 'improved' | 'worse' | 'unchanged' | 'mixed' | 'not comparable';

export interface PhaseChange {
  phase: TimedPart | 'total' | 'attach';
  before: PhaseStats;
  after: PhaseStats;
  /** after − before (ms); null when either side has no value. */
  p50ChangeMs: number | null;
  p99ChangeMs: number | null;
  /** (after − before) / before × 100, rounded; null when either side has no value (or before is 0). */
  p50ChangePct: number | null;
  p99ChangePct: number | null;
  /** Which of p50 / p99 moved less than the noise floor (so counted as unchanged). */
  withinNoise: { p50: boolean; p99: boolean };
  verdict: Verdict;
}

export interface FactChange {
  fact: PublishedFact;
  before: RecordedFact;
  after: RecordedFact;
  /** true / false; 'unknown' when either side is unknown. */
  changed: boolean | 'unknown';
}

export interface Comparison {
  before: { node: string; startedAt: string; pods: number; clusterVersion: string | null; sloMet: boolean; p99TotalMs: number | null };
  after: { node: string; startedAt: string; pods: number; clusterVersion: string | null; sloMet: boolean; p99TotalMs: number | null };
  phases: PhaseChange[];
  /** The noise floor every phase was judged with. */
  noiseFloor: NoiseFloor;
  facts: FactChange[];
  /** Differences in how the two runs were made, which make the numbers less comparable. */
  caveats: string[];
  /** The total's change credited to the kubelet's client limits, when they changed and the total moved. */
  credit?: string;
}

const KUBELET_LIMITS: PublishedFact[] = ['kubelet.kubeAPIQPS', 'kubelet.kubeAPIBurst'];

function limitsText(facts: FactChange[], which: 'before' | 'after'): string {
  return KUBELET_LIMITS.map((k) => { const f = facts.find((x) => x.fact === k)?.[which]; return f && 'value' in f ? String(f.value) : '?'; }).join('/');
}

const seconds = (ms: number | null | undefined): string => (ms === null || ms === undefined ? '?' : `${(ms / 1000).toFixed(1)} s`);

/**
 * The seeds' claim, checked: the total moved while the kubelet's client limits changed. Says what
 * else changed, and how the status-write wait (kubelet stamp → API) moved, which is where a
 * throttled kubelet's time goes.
 */
function kubeletCredit(before: Measurement, after: Measurement, phases: PhaseChange[], facts: FactChange[]): string | undefined {
  const total = phases.find((p) => p.phase === 'total');
  if (!total || (total.verdict !== 'improved' && total.verdict !== 'worse' && total.verdict !== 'mixed')) return undefined;
  if (!facts.some((f) => KUBELET_LIMITS.includes(f.fact) && f.changed === true)) return undefined;
  const others = facts.filter((f) => f.changed === true && !KUBELET_LIMITS.includes(f.fact)).map((f) => f.fact);
  const wait = before.statusDelay && after.statusDelay
    ? `; the kubelet's status writes waited p99 ${seconds(before.statusDelay.p99Ms)} before, ${seconds(after.statusDelay.p99Ms)} after` : '';
  return `total p99 ${seconds(total.before.p99Ms)} → ${seconds(total.after.p99Ms)} (${total.p99ChangePct ?? '?'} %) with the kubelet's client limits ` +
    `${limitsText(facts, 'before')} → ${limitsText(facts, 'after')}${others.length > 0 ? ` (also changed: ${others.join(', ')})` : ', the only recorded setting that changed'}${wait}: ` +
    `credited to the kubelet's QPS/burst${others.length > 0 ? ' in part' : ''}`;
}

function changePct(before: number | null, after: number | null): number | null {
  if (before === null || after === null || before === 0) return null;
  return Math.round(((after - before) / before) * 100);
}

function changeMs(before: number | null, after: number | null): number | null {
  return before === null || after === null ? null : Math.round(after - before);
}

/** -1 better, 1 worse, 0 within the noise floor, null not comparable. */
function direction(before: number | null, after: number | null, floorMs: number): -1 | 0 | 1 | null {
  if (before === null || after === null) return null;
  const delta = after - before;
  if (Math.abs(delta) < floorMs) return 0;
  return delta < 0 ? -1 : 1;
}

/** max(100 ms, 10 % of the total) per percentile, the total being the larger of the two runs'. */
export function noiseFloor(before: PhaseStats, after: PhaseStats): NoiseFloor {
  const floor = (a: number | null, b: number | null): number => Math.max(MIN_CHANGE_MS, Math.round(MIN_CHANGE_RATIO * Math.max(a ?? 0, b ?? 0)));
  return { p50Ms: floor(before.p50Ms, after.p50Ms), p99Ms: floor(before.p99Ms, after.p99Ms) };
}

const NO_STATS: PhaseStats = { samples: 0, p50Ms: null, p90Ms: null, p99Ms: null, maxMs: null };

export function phaseChange(phase: PhaseChange['phase'], before: PhaseStats | undefined, after: PhaseStats | undefined, floor: NoiseFloor): PhaseChange {
  const [b, a] = [before ?? NO_STATS, after ?? NO_STATS];
  const moves = [direction(b.p50Ms, a.p50Ms, floor.p50Ms), direction(b.p99Ms, a.p99Ms, floor.p99Ms)];
  let verdict: Verdict;
  if (moves.some((m) => m === null)) verdict = 'not comparable';
  else if (moves.includes(-1) && moves.includes(1)) verdict = 'mixed';
  else if (moves.includes(-1)) verdict = 'improved';
  else if (moves.includes(1)) verdict = 'worse';
  else verdict = 'unchanged';
  return {
    phase, before: b, after: a,
    p50ChangeMs: changeMs(b.p50Ms, a.p50Ms), p99ChangeMs: changeMs(b.p99Ms, a.p99Ms),
    p50ChangePct: changePct(b.p50Ms, a.p50Ms), p99ChangePct: changePct(b.p99Ms, a.p99Ms),
    withinNoise: { p50: moves[0] === 0, p99: moves[1] === 0 },
    verdict,
  };
}

function factChange(fact: PublishedFact, before: RecordedFact, after: RecordedFact): FactChange {
  if (!('value' in before) || !('value' in after)) return { fact, before, after, changed: 'unknown' };
  return { fact, before, after, changed: JSON.stringify(before.value) !== JSON.stringify(after.value) };
}

function caveats(before: Measurement, after: Measurement): string[] {
  const out: string[] = [];
  const differ = (what: string, a: unknown, b: unknown): void => { if (a !== b) out.push(`${what} differs: ${String(a)} before, ${String(b)} after`); };
  differ('node', before.node, after.node);
  differ('pod count', before.settings.pods, after.settings.pods);
  differ('image', before.settings.image, after.settings.image);
  differ('placement', before.settings.placement, after.settings.placement);
  differ('PVC storage class', before.settings.pvcStorageClass ?? 'none', after.settings.pvcStorageClass ?? 'none');
  differ('cluster version', before.clusterVersion ?? 'unknown', after.clusterVersion ?? 'unknown');
  if (sandboxStampOf(before.kubeletVersion) !== sandboxStampOf(after.kubeletVersion)) {
    out.push(`initialization and creation are split differently: kubelet ${before.kubeletVersion ?? 'unknown'} before, ${after.kubeletVersion ?? 'unknown'} after (from 1.36 the sandbox, network and volumes count in initialization, before in creation); compare their sum`);
  }
  if (before.outcome === 'timeout') out.push(`the before run timed out: only ${before.counts.ready} of ${before.counts.created} pods became Ready`);
  if (after.outcome === 'timeout') out.push(`this run timed out: only ${after.counts.ready} of ${after.counts.created} pods became Ready`);
  const noWait = [before.statusDelay ? '' : 'the before run', after.statusDelay ? '' : 'this run'].filter(Boolean);
  if (noWait.length > 0) out.push(`${noWait.join(' and ')} recorded no statusDelay (a file of an older version): that row is not comparable`);
  if (before.validity && !before.validity.valid) out.push(`the before run is not valid: ${before.validity.problems.join('; ')}`);
  if (after.validity && !after.validity.valid) out.push(`this run is not valid: ${after.validity.problems.join('; ')}`);
  return out;
}

function side(m: Measurement): Comparison['before'] {
  return { node: m.node, startedAt: m.startedAt, pods: m.settings.pods, clusterVersion: m.clusterVersion, sloMet: m.slo.met, p99TotalMs: m.slo.p99TotalMs };
}

export function compareMeasurements(before: Measurement, after: Measurement): Comparison {
  const floor = noiseFloor(before.phases.total, after.phases.total);
  const phases = [
    ...TIMED_PARTS.map((part) => phaseChange(part, partStats(before, part), partStats(after, part), floor)),
    phaseChange('total', before.phases.total, after.phases.total, floor),
  ];
  if (before.attach && after.attach) phases.push(phaseChange('attach', before.attach, after.attach, floor));
  const facts = PUBLISHED_FACTS.map((key) => factChange(key, before.advisor.facts[key], after.advisor.facts[key]));
  const credit = kubeletCredit(before, after, phases, facts);
  return { before: side(before), after: side(after), phases, noiseFloor: floor, facts, caveats: caveats(before, after), ...(credit ? { credit } : {}) };
}
