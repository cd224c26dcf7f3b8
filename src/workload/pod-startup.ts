// Pod start-up phases on this node, from the pod watch. Each milestone is timed when the watch
// observed it (millisecond clock) unless the API says it happened clearly before we could have seen
// it (a pod listed at agent start), in which case the API's whole-second timestamp is used. Creation
// only exists as the API's creationTimestamp. Pods already ready when first seen are not new: skipped.
import { STARTUP_PHASES, type PhaseSummary, type StartupPhase } from './snapshot.ts';
import type { Milestone, PodView } from './pod-view.ts';
import { SampleWindow, capMap } from './window.ts';

/** Observed within this long after the API's (truncated) timestamp: the watch saw it live. */
export const LIVE_SLACK_MS = 2_000;
const ORDER: Milestone[] = ['created', 'scheduled', 'initialized', 'containersStarted', 'ready'];
const PHASES: [Exclude<StartupPhase, 'total'>, Milestone, Milestone][] = [
  ['scheduling', 'created', 'scheduled'],
  ['initialization', 'scheduled', 'initialized'],
  ['creation', 'initialized', 'containersStarted'],
  ['readiness', 'containersStarted', 'ready'],
];

export interface StartupOptions {
  /** Wall clock in ms (injectable for tests). */
  now(): number;
  /** Samples kept per phase. */
  windowSize?: number;
  /** Pods remembered at once (in flight and finished, until deleted); the oldest are forgotten beyond it. */
  maxTracked?: number;
  onPhase?(phase: StartupPhase, seconds: number): void;
  /** Every phase of one pod (ms), when it becomes Ready: for callers that report per pod (`measure`). */
  onPodReady?(uid: string, phases: Record<StartupPhase, number>): void;
}

interface Tracked {
  at: Partial<Record<Milestone, number>>;
  done: boolean;
}

export class PodStartupTracker {
  private readonly opts: Required<Omit<StartupOptions, 'onPhase' | 'onPodReady'>> & Pick<StartupOptions, 'onPhase' | 'onPodReady'>;
  private readonly pods = new Map<string, Tracked>();
  readonly windows: Record<StartupPhase, SampleWindow>;

  constructor(opts: StartupOptions) {
    this.opts = { windowSize: 1000, maxTracked: 2000, ...opts };
    this.windows = Object.fromEntries(STARTUP_PHASES.map((p) => [p, new SampleWindow(this.opts.windowSize)])) as Record<StartupPhase, SampleWindow>;
  }

  get tracked(): number {
    return this.pods.size;
  }

  /** The time this pod was bound to the node (for attach latency), if tracked. */
  scheduledAt(uid: string): number | undefined {
    return this.pods.get(uid)?.at.scheduled;
  }

  observe(pod: PodView): void {
    let tracked = this.pods.get(pod.uid);
    if (!tracked) {
      if (pod.mirror || pod.terminal || pod.reached.ready !== undefined) return;
      tracked = { at: {}, done: false };
      this.pods.set(pod.uid, tracked);
      capMap(this.pods, this.opts.maxTracked);
    }
    if (tracked.done) return;
    if (pod.terminal) { tracked.done = true; return; }
    const now = this.opts.now();
    let previous = -Infinity;
    for (const m of ORDER) {
      const api = pod.reached[m];
      if (tracked.at[m] === undefined && api !== undefined) tracked.at[m] = pickTime(m, api, now);
      const t = tracked.at[m];
      if (t !== undefined) { tracked.at[m] = Math.max(t, previous); previous = tracked.at[m] as number; }
    }
    if (tracked.at.ready !== undefined) this.finish(pod.uid, tracked);
  }

  forget(uid: string): void {
    this.pods.delete(uid);
  }

  summary(phase: StartupPhase): PhaseSummary {
    const w = this.windows[phase];
    return { samples: w.size, p50Ms: round(w.percentile(50)), p99Ms: round(w.percentile(99)) };
  }

  private finish(uid: string, tracked: Tracked): void {
    tracked.done = true;
    const at = tracked.at;
    const phases: Partial<Record<StartupPhase, number>> = {};
    for (const [phase, from, to] of PHASES) phases[phase] = this.record(phase, at[from], at[to]);
    phases.total = this.record('total', at.created, at.ready);
    if (STARTUP_PHASES.every((p) => phases[p] !== undefined)) this.opts.onPodReady?.(uid, phases as Record<StartupPhase, number>);
  }

  private record(phase: StartupPhase, from: number | undefined, to: number | undefined): number | undefined {
    if (from === undefined || to === undefined) return undefined;
    const ms = Math.max(0, to - from);
    this.windows[phase].push(ms);
    this.opts.onPhase?.(phase, ms / 1000);
    return ms;
  }
}

/** The watch's own time, unless the API's timestamp shows it happened well before we looked. */
function pickTime(m: Milestone, api: number, now: number): number {
  if (m === 'created') return Number.isNaN(api) ? now : api;
  if (Number.isNaN(api) || now - api < LIVE_SLACK_MS) return now;
  return api;
}

function round(ms: number | null): number | null {
  return ms === null ? null : Math.round(ms);
}
