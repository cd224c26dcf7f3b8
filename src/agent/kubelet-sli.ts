// The kubelet's own start-up histograms from its /metrics text: kubelet_pod_start_sli_duration_seconds
// (pod created → Running, image pulls excluded; since 1.36, and 1.34-1.35 with the fix backported,
// init containers and stateful pods are excluded too), kubelet_pod_start_total_duration_seconds,
// kubelet_image_pull_duration_seconds and kubelet_run_podsandbox_duration_seconds. Each scrape is
// compared with the previous one: the p99 of the pods started in between (bucket deltas, linear
// interpolation inside a bucket as PromQL's histogram_quantile does), beside the pod-watch figure.

import type { LineSplitter } from '../text/lines.ts';
import { prometheusReader, type ParsedMetrics } from '../text/prometheus-text.ts';

export const KUBELET_HISTOGRAMS = {
  sli: 'kubelet_pod_start_sli_duration_seconds',
  total: 'kubelet_pod_start_total_duration_seconds',
  imagePull: 'kubelet_image_pull_duration_seconds',
  sandbox: 'kubelet_run_podsandbox_duration_seconds',
} as const;
export type KubeletHistogram = keyof typeof KUBELET_HISTOGRAMS;

export const SLI_CAVEAT = 'kubelet_pod_start_sli_duration_seconds excludes image pulls; on 1.36 (and 1.34-1.35 with the backported fix) it also excludes pods with init containers and stateful pods, so it can read faster than the pod watch';

/** Cumulative buckets (upper bound in s → count), summed over label sets; count of observations. */
export interface Buckets {
  bounds: number[];
  counts: number[];
  count: number;
}

export type KubeletHistograms = Partial<Record<KubeletHistogram, Buckets>>;

const WANTED: ReadonlySet<string> = new Set(Object.values(KUBELET_HISTOGRAMS));

/** A parser of the four histograms, fed line by line (`lines`, as the body streams in). */
export function histogramReader(): { lines: LineSplitter; result(): KubeletHistograms } {
  const reader = prometheusReader(WANTED);
  return { lines: reader.lines, result: () => cumulative(reader.result()) };
}

function cumulative(parsed: ParsedMetrics): KubeletHistograms {
  const out: KubeletHistograms = {};
  for (const [key, name] of Object.entries(KUBELET_HISTOGRAMS) as [KubeletHistogram, string][]) {
    const buckets = parsed.buckets.get(name);
    if (!buckets) continue;
    const bounds = [...buckets.keys()].sort((a, b) => a - b);
    const counts = bounds.map((b) => buckets.get(b) as number);
    out[key] = { bounds, counts, count: counts[counts.length - 1] ?? 0 };
  }
  return out;
}

/** The four histograms of a whole text. */
export function parseHistograms(text: string): KubeletHistograms {
  const reader = histogramReader();
  reader.lines.push(text);
  reader.lines.end();
  return reader.result();
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

export interface IntervalP99 {
  /** Observations in the interval. */
  samples: number;
  /** p99 in seconds over the interval; null without observations. */
  p99Seconds: number | null;
}

/** Keeps the previous scrape; each new one gives the p99 per histogram of what happened in between. */
export class KubeletSliTracker {
  private previous: KubeletHistograms | undefined;

  /** First scrape: nothing to compare with yet (undefined); a restarted kubelet starts the interval again. */
  scrape(now: KubeletHistograms): Partial<Record<KubeletHistogram, IntervalP99>> | undefined {
    const before = this.previous;
    this.previous = now;
    if (!before) return undefined;
    const out: Partial<Record<KubeletHistogram, IntervalP99>> = {};
    for (const key of Object.keys(KUBELET_HISTOGRAMS) as KubeletHistogram[]) {
      const a = before[key];
      const b = now[key];
      if (!b) continue;
      const d = a ? delta(a, b) : b;
      const interval = d ?? b;
      out[key] = { samples: interval.count, p99Seconds: quantile(0.99, interval) };
    }
    return out;
  }

  /** One histogram of the last scrape over its whole count: everything since the kubelet started. */
  sinceStart(key: KubeletHistogram): IntervalP99 | undefined {
    const buckets = this.previous?.[key];
    return buckets && { samples: buckets.count, p99Seconds: quantile(0.99, buckets) };
  }
}
