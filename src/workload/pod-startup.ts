// Pod start-up on this node, from the agent's pod watch, by the same milestones `measure` uses
// (pod-milestones.ts): the total from the API's creationTimestamp to Ready *received* (what a user
// sees), the kubelet's phases from its own stamps where its writes came late (or the pod was listed
// after they happened), and the status write's wait between its Ready stamp and the API showing it.
// Pods already Ready when first seen are not new: skipped.
import { STARTUP_FIGURES, type PhaseSummary, type StartupFigure } from './snapshot.ts';
import type { PodView } from './pod-view.ts';
import { happenedAt, noteReached, startupTimes, type Marks } from './pod-milestones.ts';
import { SampleWindow, capMap } from './window.ts';

export interface StartupOptions {
  /** Wall clock in ms (injectable for tests). */
  now(): number;
  /** Samples kept per figure. */
  windowSize?: number;
  /** Pods remembered at once (in flight and finished, until deleted); the oldest are forgotten beyond it. */
  maxTracked?: number;
  onPhase?(figure: StartupFigure, seconds: number): void;
}

interface Tracked {
  createdAt: number;
  marks: Marks;
  done: boolean;
}

export class PodStartupTracker {
  private readonly opts: Required<Omit<StartupOptions, 'onPhase'>> & Pick<StartupOptions, 'onPhase'>;
  private readonly pods = new Map<string, Tracked>();
  readonly windows: Record<StartupFigure, SampleWindow>;

  constructor(opts: StartupOptions) {
    this.opts = { windowSize: 1000, maxTracked: 2000, ...opts };
    this.windows = Object.fromEntries(STARTUP_FIGURES.map((p) => [p, new SampleWindow(this.opts.windowSize)])) as Record<StartupFigure, SampleWindow>;
  }

  get tracked(): number {
    return this.pods.size;
  }

  /** When this pod was bound to the node (its PodScheduled condition, for attach latency), if tracked. */
  scheduledAt(uid: string): number | undefined {
    const scheduled = this.pods.get(uid)?.marks.scheduled;
    return scheduled ? happenedAt(scheduled) : undefined;
  }

  observe(pod: PodView): void {
    let tracked = this.pods.get(pod.uid);
    const now = this.opts.now();
    if (!tracked) {
      if (pod.mirror || pod.terminal || pod.reached.ready !== undefined) return;
      tracked = { createdAt: pod.createdAt ?? now, marks: {}, done: false };
      this.pods.set(pod.uid, tracked);
      capMap(this.pods, this.opts.maxTracked);
    }
    if (tracked.done) return;
    if (pod.terminal) { tracked.done = true; return; }
    if (noteReached(tracked.marks, pod.reached, now, false)) this.finish(tracked);
  }

  forget(uid: string): void {
    this.pods.delete(uid);
  }

  summary(figure: StartupFigure): PhaseSummary {
    const w = this.windows[figure];
    return { samples: w.size, p50Ms: round(w.percentile(50)), p99Ms: round(w.percentile(99)) };
  }

  private finish(tracked: Tracked): void {
    tracked.done = true;
    const times = startupTimes(tracked.marks, tracked.createdAt);
    if (!times) return;
    for (const figure of STARTUP_FIGURES) {
      const ms = times[figure];
      this.windows[figure].push(ms);
      this.opts.onPhase?.(figure, ms / 1000);
    }
  }
}

function round(ms: number | null): number | null {
  return ms === null ? null : Math.round(ms);
}
