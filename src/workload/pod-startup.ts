// Pod start-up on this node, from the agent's pod watch, by the same milestones `measure` uses
// (pod-milestones.ts): the total from the API's creationTimestamp to Ready *received* (what a user
// sees), the kubelet's phases from its own stamps where its writes came late (or the pod was listed
// after they happened), and the status write's wait between its Ready stamp and the API showing it.
// Pods already Ready when first seen are not new: skipped. Each figure is over a time window (the
// agent's --startup-window): a sample counts from when its pod was received Ready until it is older
// than the window, so a node that starts no pod for a while has no figure rather than an old one.
import { STARTUP_FIGURES, type PhaseSummary, type StartupFigure } from './snapshot.ts';
import type { PodView } from './pod-view.ts';
import { happenedAt, noteReached, sandboxStampOf, startupTimes, type Marks } from './pod-milestones.ts';
import { DEFAULT_MAX_SAMPLES, DEFAULT_WINDOW_MS, TimedWindow, capMap } from './window.ts';

export interface StartupOptions {
  /** Wall clock in ms (injectable for tests). */
  now(): number;
  /** How far back a figure reaches (ms; Infinity: every sample). */
  windowMs?: number;
  /** Samples kept per figure at most: beyond it, the newest of the window's. */
  maxSamples?: number;
  /** Pods remembered at once (in flight and finished, until deleted); the oldest are forgotten beyond it. */
  maxTracked?: number;
  /** The node's kubeletVersion as last seen (it decides what PodReadyToStartContainers marks); null: unknown. */
  kubeletVersion?(): string | null;
  onPhase?(figure: StartupFigure, seconds: number): void;
}

interface Tracked {
  createdAt: number;
  marks: Marks;
  done: boolean;
}

export class PodStartupTracker {
  private readonly opts: Required<Omit<StartupOptions, 'onPhase' | 'kubeletVersion'>> & Pick<StartupOptions, 'onPhase' | 'kubeletVersion'>;
  private readonly pods = new Map<string, Tracked>();
  readonly windows: Record<StartupFigure, TimedWindow>;

  constructor(opts: StartupOptions) {
    this.opts = { windowMs: DEFAULT_WINDOW_MS, maxSamples: DEFAULT_MAX_SAMPLES, maxTracked: 2000, ...opts };
    this.windows = Object.fromEntries(STARTUP_FIGURES.map((p) => [p, new TimedWindow(this.opts.maxSamples, this.opts.windowMs)])) as Record<StartupFigure, TimedWindow>;
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
    const now = this.opts.now();
    return { samples: w.size(now), p50Ms: round(w.percentile(50, now)), p99Ms: round(w.percentile(99, now)), overflowed: w.overflowed(now) };
  }

  private finish(tracked: Tracked): void {
    tracked.done = true;
    const times = startupTimes(tracked.marks, tracked.createdAt, sandboxStampOf(this.opts.kubeletVersion?.()));
    if (!times) return;
    const at = this.opts.now();
    for (const figure of STARTUP_FIGURES) {
      const ms = times[figure];
      this.windows[figure].push(at, ms);
      this.opts.onPhase?.(figure, ms / 1000);
    }
  }
}

function round(ms: number | null): number | null {
  return ms === null ? null : Math.round(ms);
}
