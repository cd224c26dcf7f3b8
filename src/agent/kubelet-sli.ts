// The kubelet's own start-up histograms from its /metrics text: kubelet_pod_start_sli_duration_seconds
// (pod created → Running, image pulls excluded; since 1.36, and 1.34-1.35 with the fix backported,
// init containers and stateful pods are excluded too), kubelet_pod_start_total_duration_seconds,
// kubelet_image_pull_duration_seconds and kubelet_run_podsandbox_duration_seconds. Each scrape is
// compared with the previous one: the p99 of the pods started in between (bucket deltas, linear
// interpolation inside a bucket as PromQL's histogram_quantile does), beside the pod-watch figure.

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

const MAX_LINES = 200_000;
const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{([^}]*)\})?\s+(\S+)/;

function leOf(labels: string | undefined): number | undefined {
  const m = /(?:^|,)\s*le="([^"]*)"/.exec(labels ?? '');
  if (!m) return undefined;
  return m[1] === '+Inf' ? Infinity : Number(m[1]);
}

/** The wanted histograms from Prometheus text exposition; malformed lines are skipped. */
export function parseHistograms(text: string): Partial<Record<KubeletHistogram, Buckets>> {
  const wanted = new Map<string, KubeletHistogram>(Object.entries(KUBELET_HISTOGRAMS).map(([k, v]) => [`${v}_bucket`, k as KubeletHistogram]));
  const byBound = new Map<KubeletHistogram, Map<number, number>>();
  let lines = 0;
  for (const line of text.split('\n')) {
    if (++lines > MAX_LINES) break;
    if (line.startsWith('#')) continue;
    const m = LINE.exec(line);
    if (!m) continue;
    const key = wanted.get(m[1] as string);
    if (key === undefined) continue;
    const le = leOf(m[2]);
    const value = Number(m[3]);
    if (le === undefined || Number.isNaN(le) || !Number.isFinite(value) || value < 0) continue;
    const buckets = byBound.get(key) ?? new Map<number, number>();
    buckets.set(le, (buckets.get(le) ?? 0) + value);
    byBound.set(key, buckets);
  }
  const out: Partial<Record<KubeletHistogram, Buckets>> = {};
  for (const [key, buckets] of byBound) {
    const bounds = [...buckets.keys()].sort((a, b) => a - b);
    const counts = bounds.map((b) => buckets.get(b) as number);
    out[key] = { bounds, counts, count: counts[counts.length - 1] ?? 0 };
  }
  return out;
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
  private previous: Partial<Record<KubeletHistogram, Buckets>> | undefined;

  /** First scrape: nothing to compare with yet (undefined); a restarted kubelet starts the interval again. */
  scrape(text: string): Partial<Record<KubeletHistogram, IntervalP99>> | undefined {
    const now = parseHistograms(text);
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
