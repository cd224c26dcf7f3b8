// The kubelet's own start-up histograms from its /metrics text: kubelet_pod_start_sli_duration_seconds
// (pod created → Running, image pulls excluded; since 1.36, and 1.34-1.35 with the fix backported,
// init containers and stateful pods are excluded too), kubelet_pod_start_total_duration_seconds,
// kubelet_image_pull_duration_seconds and kubelet_run_podsandbox_duration_seconds. Each scrape is
// compared with the previous one: the pods started in between (bucket deltas, p99 by linear
// interpolation inside a bucket as PromQL's histogram_quantile does), kept for the agent's
// --startup-window: the p99 of the pods the kubelet started within it, beside the pod-watch figure.

import type { LineSplitter } from '../text/lines.ts';
import { prometheusReader, type ParsedMetrics } from '../text/prometheus-text.ts';

export const KUBELET_HISTOGRAMS = {
  sli: 'kubelet_pod_start_sli_duration_seconds',
  total: 'kubelet_pod_start_total_duration_seconds',
  imagePull: 'kubelet_image_pull_duration_seconds',
  sandbox: 'kubelet_run_podsandbox_duration_seconds',
} as const;
export type KubeletHistogram = keyof typeof KUBELET_HISTOGRAMS;

export const SLI_CAVEAT = 'kubelet_pod_start_sli_duration_seconds excludes image pulls; on 1.36 (and 1.34-1.35 with the backported fix, k/k #131950) it also excludes pods with init containers, stateful and not-immediately-schedulable pods, so it can read faster than the pod watch; read from its buckets only (its _sum can go negative when parallel pulls fail, k/k #122675); it has no labels, so DaemonSet pods on new nodes count too';

/** Cumulative buckets (upper bound in s → count), summed over label sets; count of observations. */
export interface Buckets {
  bounds: number[];
  counts: number[];
  count: number;
}

export type KubeletHistograms = Partial<Record<KubeletHistogram, Buckets>>;

/** What one read of /metrics yields: the four histograms and the process's start. */
export interface KubeletMetrics {
  histograms: KubeletHistograms;
  /** process_start_time_seconds (ms): a change means another kubelet process, whatever the counts say. */
  startedAt: number | undefined;
}

const PROCESS_START = 'process_start_time_seconds';
const WANTED: ReadonlySet<string> = new Set([...Object.values(KUBELET_HISTOGRAMS), PROCESS_START]);

/** A parser of a /metrics body fed line by line (`lines`, as the body streams in; text/prometheus-text.ts). */
export function kubeletMetricsReader(): { lines: LineSplitter; result(): KubeletMetrics } {
  const reader = prometheusReader(WANTED);
  return { lines: reader.lines, result: () => kubeletMetricsOf(reader.result()) };
}

function kubeletMetricsOf(parsed: ParsedMetrics): KubeletMetrics {
  const histograms: KubeletHistograms = {};
  for (const [key, name] of Object.entries(KUBELET_HISTOGRAMS) as [KubeletHistogram, string][]) {
    const buckets = parsed.buckets.get(name);
    if (!buckets) continue;
    const bounds = [...buckets.keys()].sort((a, b) => a - b);
    const counts = bounds.map((b) => buckets.get(b) as number);
    histograms[key] = { bounds, counts, count: counts[counts.length - 1] ?? 0 };
  }
  const seconds = parsed.values.get(PROCESS_START);
  return { histograms, startedAt: seconds !== undefined && seconds > 0 ? seconds * 1000 : undefined };
}

/** The metrics of a whole /metrics text. */
export function parseKubeletMetrics(text: string): KubeletMetrics {
  const reader = kubeletMetricsReader();
  reader.lines.push(text);
  reader.lines.end();
  return reader.result();
}

/** The wanted histograms of a whole /metrics text. */
export function parseHistograms(text: string): KubeletHistograms {
  return parseKubeletMetrics(text).histograms;
}

/** histogram_quantile over cumulative buckets; null without observations. Above the last finite bound: that bound. */
export function quantile(q: number, b: Buckets): number | null {
  const total = b.counts[b.counts.length - 1] ?? 0;
  if (total <= 0) return null;
  const rank = q * total;
  let lowerBound = 0;
  let lowerCount = 0;
  for (let i = 0; i < b.bounds.length; i++) {
    const bound = b.bounds[i] as number;
    const count = b.counts[i] as number;
    if (count >= rank) {
      if (!Number.isFinite(bound)) return lowerBound;
      return lowerBound + (bound - lowerBound) * ((rank - lowerCount) / Math.max(count - lowerCount, Number.EPSILON));
    }
    lowerBound = bound;
    lowerCount = count;
  }
  return lowerBound;
}

/** later − earlier per bucket; undefined when the kubelet restarted (a count went down) or the buckets differ. */
export function delta(earlier: Buckets, later: Buckets): Buckets | undefined {
  if (earlier.bounds.length !== later.bounds.length || earlier.bounds.some((b, i) => b !== later.bounds[i])) return undefined;
  const counts = later.counts.map((c, i) => c - (earlier.counts[i] as number));
  if (counts.some((c) => c < 0)) return undefined;
  return { bounds: later.bounds, counts, count: later.count - earlier.count };
}

/** One histogram over the window: its observations then, and their p99 (seconds; null without any). */
export interface WindowP99 {
  samples: number;
  p99Seconds: number | null;
}

/** Entries a histogram keeps at most: scrapes closer together than window / this share one. */
const MAX_ENTRIES = 120;

interface Entry {
  /** When the observations were counted (the scrape's time; a young kubelet's start for its first read). */
  at: number;
  buckets: Buckets;
}

interface Scrape {
  at: number;
  histograms: Partial<Record<KubeletHistogram, Buckets>>;
  /** process_start_time_seconds (ms): a change means another kubelet process, whatever the counts say. */
  startedAt: number | undefined;
}

/** The kubelet's process_start_time_seconds in ms, when it exposes one. */
export function processStartMs(text: string): number | undefined {
  return parseKubeletMetrics(text).startedAt;
}

/**
 * Each scrape is compared with the previous one; what the kubelet observed in between (bucket
 * deltas, stamped with the scrape's time) joins the window, and deltas older than the window leave
 * it. A restarted kubelet (a count went down, another process start time, another bucket layout)
 * counts from zero again: all its observations are since the previous read. The first read only
 * sets where the window starts (the counters go back to the kubelet's start), unless the kubelet
 * itself started within the window.
 */
export class KubeletSliWindow {
  readonly windowMs: number;
  private readonly slotMs: number;
  private previous: Scrape | undefined;
  private readonly entries = new Map<KubeletHistogram, Entry[]>();

  constructor(windowMs: number) {
    this.windowMs = windowMs;
    this.slotMs = windowMs / MAX_ENTRIES;
  }

  /** Takes one scrape read at `now` (ms); false when it was the first and nothing is known over the window yet. */
  scrape(metrics: KubeletMetrics, now: number): boolean {
    const current: Scrape = { at: now, ...metrics };
    // A previous read older than the window (reads failed since): its deltas would reach beyond it.
    const before = this.previous && now - this.previous.at <= this.windowMs ? this.previous : undefined;
    this.previous = current;
    if (!before) {
      this.prune(now);
      const young = current.startedAt !== undefined && current.startedAt <= now && now - current.startedAt <= this.windowMs;
      if (young) for (const [key, b] of entriesOf(current.histograms)) this.add(key, current.startedAt as number, b);
      return young;
    }
    const restarted = before.startedAt !== undefined && current.startedAt !== undefined && before.startedAt !== current.startedAt;
    for (const [key, b] of entriesOf(current.histograms)) {
      const a = before.histograms[key];
      this.add(key, now, (!restarted && a ? delta(a, b) : undefined) ?? b);
    }
    this.prune(now);
    return true;
  }

  /** Per histogram the kubelet exposes (or exposed within the window): its observations in the window ending at `now`. */
  figures(now: number): Partial<Record<KubeletHistogram, WindowP99>> {
    this.prune(now);
    const out: Partial<Record<KubeletHistogram, WindowP99>> = {};
    for (const [key, list] of this.entries) {
      const summed = sum(list.map((e) => e.buckets));
      out[key] = { samples: summed?.count ?? 0, p99Seconds: summed ? quantile(0.99, summed) : null };
    }
    for (const key of Object.keys(this.previous?.histograms ?? {}) as KubeletHistogram[]) out[key] ??= { samples: 0, p99Seconds: null };
    return out;
  }

  private add(key: KubeletHistogram, at: number, buckets: Buckets): void {
    // Another bucket layout (a kubelet of another version): what came before cannot be summed with it.
    const list = (this.entries.get(key) ?? []).filter((e) => sameBounds(e.buckets, buckets));
    const last = list.at(-1);
    if (last && at - last.at < this.slotMs && at >= last.at) last.buckets = sum([last.buckets, buckets]) as Buckets;
    else list.push({ at, buckets });
    this.entries.set(key, list);
  }

  private prune(now: number): void {
    const since = now - this.windowMs;
    for (const [key, list] of this.entries) {
      const kept = list.filter((e) => e.at >= since);
      if (kept.length > 0) this.entries.set(key, kept);
      else this.entries.delete(key);
    }
  }
}

function entriesOf(histograms: Partial<Record<KubeletHistogram, Buckets>>): [KubeletHistogram, Buckets][] {
  return Object.entries(histograms) as [KubeletHistogram, Buckets][];
}

function sameBounds(a: Buckets, b: Buckets): boolean {
  return a.bounds.length === b.bounds.length && a.bounds.every((bound, i) => bound === b.bounds[i]);
}

/** Buckets of the same layout added up; undefined for none. */
function sum(list: Buckets[]): Buckets | undefined {
  const first = list[0];
  if (!first) return undefined;
  const counts = first.counts.map((_, i) => list.reduce((total, b) => total + (b.counts[i] as number), 0));
  return { bounds: first.bounds, counts, count: list.reduce((total, b) => total + b.count, 0) };
}
