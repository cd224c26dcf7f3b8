// The measurement as data: what `--output json` prints and `--save` writes, and what `--compare`
// reads back. Per phase p50/p90/p99/max over the pods that reached Ready; the SLO verdict over all
// pods created (one that never became Ready counts as slower than the timeout).
import { percentile } from '../probe/percentiles.ts';
import { STARTUP_PHASES, type StartupFigure, type StartupPhase } from '../workload/snapshot.ts';
import type { AdvisorSnapshot } from './advisor.ts';
import type { MilestoneName } from '../workload/pod-milestones.ts';
import type { Placement } from './objects.ts';
import { byCodePoint } from '../order.ts';

export const MEASUREMENT_KIND = 'PodStartupMeasurement';
export const MEASUREMENT_SCHEMA_VERSION = 1;
/** The pod start-up SLO (seed 003, clusterloader2's pod-startup-latency): p99 creation → Ready under 5 s. */
export const SLO_P99_MS = 5_000;
const SLOWEST = 5;

export interface PhaseStats {
  samples: number;
  p50Ms: number | null;
  p90Ms: number | null;
  p99Ms: number | null;
  maxMs: number | null;
}

export interface PodSample {
  pod: string;
  /**
   * Milliseconds per phase. total: the create request → Running and Ready received through the
   * watch. The others are the kubelet's own view (its stamps when its writes came late).
   */
  phases: Record<StartupPhase, number>;
  /** The kubelet's Ready stamp → the API showing it: the status write's wait (client throttling). */
  statusDelayMs?: number;
  /** Per milestone, ms after the create request: when the watch received it, and the stamp on it (whole seconds; null: none). */
  milestones?: Partial<Record<MilestoneName, { seenMs: number; kubeletMs: number | null }>>;
  /** From the pod's Pulled event ("Successfully pulled image … in 1.2s"); null when there is none (image present). */
  imagePullMs?: number | null;
  /** Its Ready came from a LIST after the watch failed or at the end, not from the watch. */
  readySeenBy?: 'list';
}

export interface NotReadyGroup {
  /** "Unschedulable", "ContainerCreating", "ImagePullBackOff", "no status from the kubelet", … */
  reason: string;
  pods: number;
  /** One pod's message for this reason (the scheduler's, the kubelet's). */
  example: string;
}

export interface Measurement {
  schemaVersion: number;
  kind: typeof MEASUREMENT_KIND;
  node: string;
  /** The run's temporary namespace (deleted after the run). */
  namespace: string;
  clusterVersion: string | null;
  /** Why the cluster version is unknown, when it is. */
  clusterVersionUnknown?: string;
  kubeletVersion: string | null;
  startedAt: string;
  finishedAt: string;
  settings: {
    pods: number;
    image: string;
    /** flag: --image; node: the pause image in the node's status.images; fallback: the default (may need a pull). */
    imageSource: 'flag' | 'node' | 'fallback';
    placement: Placement;
    pvcStorageClass: string | null;
    timeoutSeconds: number;
  };
  /** complete: every pod Ready or failed; timeout: the rest were still starting at --timeout. */
  outcome: 'complete' | 'timeout';
  counts: { requested: number; created: number; ready: number; notReady: number; failedToCreate: number };
  phases: Record<StartupPhase, PhaseStats>;
  /** Bound → the volume in Node.status.volumesAttached (only with --pvc-storage-class). */
  attach: PhaseStats | null;
  /** largestPhase: of the parts of the total (the kubelet's phases and the status write's wait, statusDelay), the one with the largest p99. */
  slo: { thresholdMs: number; p99TotalMs: number | null; met: boolean; largestPhase: TimedPart | null; note?: string };
  /** Kubelet's Ready stamp → the API showing it, over the Ready pods (absent in files from older versions). */
  statusDelay?: PhaseStats;
  /** Said when the status delay is what the pods waited for: the kubelet's client rate limiter. */
  throttling?: string;
  /** false: clock skew, lost events or too many errors; the problems say which. */
  validity?: { valid: boolean; problems: string[] };
  slowest: PodSample[];
  notReady: NotReadyGroup[];
  createErrors: NotReadyGroup[];
  samples: PodSample[];
  advisor: AdvisorSnapshot;
  api: { requests: number; failed: { verb: string; resource: string; code: string }[] };
}

/**
 * The parts a pod's total is made of, each reported with its percentiles: the kubelet's phases and
 * the status write's wait, named as the agent names it (statusDelay). The largest phase is one of these.
 */
export const TIMED_PARTS = ['scheduling', 'initialization', 'creation', 'readiness', 'statusDelay'] as const satisfies readonly StartupFigure[];
export type TimedPart = (typeof TIMED_PARTS)[number];

/** Every part's stats, statusDelay's from the measurement (absent in files of older versions: null). */
export function partStats(m: Pick<Measurement, 'phases' | 'statusDelay'>, part: TimedPart): PhaseStats | undefined {
  return part === 'statusDelay' ? m.statusDelay : m.phases[part];
}

export function phaseStats(values: number[]): PhaseStats {
  const sorted = Float64Array.from(values).sort();
  const at = (p: number): number | null => (sorted.length === 0 ? null : Math.round(percentile(sorted, p)));
  return { samples: sorted.length, p50Ms: at(50), p90Ms: at(90), p99Ms: at(99), maxMs: at(100) };
}

export function phaseTable(samples: PodSample[]): Record<StartupPhase, PhaseStats> {
  return Object.fromEntries(STARTUP_PHASES.map((phase) => [phase, phaseStats(samples.map((s) => s.phases[phase]))])) as Record<StartupPhase, PhaseStats>;
}

/**
 * p99 of creation → Ready over every pod created: a pod not Ready counts as slower than any that
 * was, so when more than 1 % of them never got there the p99 is unknown and the SLO missed.
 */
export function sloVerdict(samples: PodSample[], created: number, phases: Record<StartupPhase, PhaseStats>, statusDelay?: PhaseStats): Measurement['slo'] {
  const totals = samples.map((s) => s.phases.total).sort((a, b) => a - b);
  const missing = Math.max(0, created - totals.length);
  const all = Float64Array.from([...totals, ...Array<number>(missing).fill(Infinity)]);
  const largestPhase = largest({ phases, ...(statusDelay ? { statusDelay } : {}) });
  if (all.length === 0) return { thresholdMs: SLO_P99_MS, p99TotalMs: null, met: false, largestPhase, note: 'no pod was created' };
  const p99 = percentile(all, 99);
  if (!Number.isFinite(p99)) {
    return { thresholdMs: SLO_P99_MS, p99TotalMs: null, met: false, largestPhase, note: `${missing} of ${created} pods did not become Ready: more than 1 %` };
  }
  return { thresholdMs: SLO_P99_MS, p99TotalMs: Math.round(p99), met: p99 < SLO_P99_MS, largestPhase };
}

/** The part of the total with the largest p99, among every part reported (statusDelay included): where the time goes. */
export function largest(m: Pick<Measurement, 'phases' | 'statusDelay'>): TimedPart | null {
  let best: TimedPart | null = null;
  let bestP99 = -Infinity;
  for (const part of TIMED_PARTS) {
    const p99 = partStats(m, part)?.p99Ms ?? null;
    if (p99 !== null && p99 > bestP99) { best = part; bestP99 = p99; }
  }
  return best;
}

export function slowestPods(samples: PodSample[]): PodSample[] {
  return [...samples].sort((a, b) => b.phases.total - a.phases.total || byCodePoint(a.pod, b.pod)).slice(0, SLOWEST);
}
