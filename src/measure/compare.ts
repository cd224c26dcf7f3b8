// Before → after: per phase the change of p50 and p99 in percent, a verdict per phase, and which of
// the advisor's recorded settings changed between the two runs. A change counts when it is at least
// 10 % and 100 ms: pod start-up jitters by tens of milliseconds from run to run.
import { PUBLISHED_FACTS, type PublishedFact } from '../publish/summary-facts.ts';
import { STARTUP_PHASES, type StartupPhase } from '../workload/snapshot.ts';
import type { RecordedFact } from './advisor.ts';
import type { Measurement, PhaseStats } from './result.ts';

export const MIN_CHANGE_MS = 100;
export const MIN_CHANGE_RATIO = 0.1;

export type Verdict = 'improved' | 'worse' | 'unchanged' | 'mixed' | 'not comparable';

export interface PhaseChange {
  phase: StartupPhase | 'attach';
  before: PhaseStats;
  after: PhaseStats;
  /** (after − before) / before × 100, rounded; null when either side has no value (or before is 0). */
  p50ChangePct: number | null;
  p99ChangePct: number | null;
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
  facts: FactChange[];
  /** Differences in how the two runs were made, which make the numbers less comparable. */
  caveats: string[];
}

function changePct(before: number | null, after: number | null): number | null {
  if (before === null || after === null || before === 0) return null;
  return Math.round(((after - before) / before) * 100);
}

/** -1 better, 1 worse, 0 within the noise, null not comparable. */
function direction(before: number | null, after: number | null): -1 | 0 | 1 | null {
  if (before === null || after === null) return null;
  const delta = after - before;
  if (Math.abs(delta) < MIN_CHANGE_MS || Math.abs(delta) < MIN_CHANGE_RATIO * Math.max(before, after)) return 0;
  return delta < 0 ? -1 : 1;
}

export function phaseChange(phase: PhaseChange['phase'], before: PhaseStats, after: PhaseStats): PhaseChange {
  const moves = [direction(before.p50Ms, after.p50Ms), direction(before.p99Ms, after.p99Ms)];
  let verdict: Verdict;
  if (moves.some((m) => m === null)) verdict = 'not comparable';
  else if (moves.includes(-1) && moves.includes(1)) verdict = 'mixed';
  else if (moves.includes(-1)) verdict = 'improved';
  else if (moves.includes(1)) verdict = 'worse';
  else verdict = 'unchanged';
  return { phase, before, after, p50ChangePct: changePct(before.p50Ms, after.p50Ms), p99ChangePct: changePct(before.p99Ms, after.p99Ms), verdict };
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
  if (before.outcome === 'timeout') out.push(`the before run timed out: only ${before.counts.ready} of ${before.counts.created} pods became Ready`);
  if (after.outcome === 'timeout') out.push(`this run timed out: only ${after.counts.ready} of ${after.counts.created} pods became Ready`);
  return out;
}

function side(m: Measurement): Comparison['before'] {
  return { node: m.node, startedAt: m.startedAt, pods: m.settings.pods, clusterVersion: m.clusterVersion, sloMet: m.slo.met, p99TotalMs: m.slo.p99TotalMs };
}

export function compareMeasurements(before: Measurement, after: Measurement): Comparison {
  const phases = STARTUP_PHASES.map((phase) => phaseChange(phase, before.phases[phase], after.phases[phase]));
  if (before.attach && after.attach) phases.push(phaseChange('attach', before.attach, after.attach));
  const facts = PUBLISHED_FACTS.map((key) => factChange(key, before.advisor.facts[key], after.advisor.facts[key]));
  return { before: side(before), after: side(after), phases, facts, caveats: caveats(before, after) };
}
