// Latency percentiles of the probe's samples (nearest rank on the sorted samples).

export interface LatencySummary {
  samples: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  p999Ms: number;
  maxMs: number;
}

/** Nearest-rank percentile (0 < p ≤ 100) of ascending-sorted values. */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return NaN;
  // The epsilon keeps 99.9 % of 1000 at rank 999 despite binary floating point (0.999 × 1000 = 999.0000000000001).
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length - 1e-9)));
  return sorted[rank - 1] as number;
}

const microseconds = (ms: number): number => Math.round(ms * 1000) / 1000;

export function latencySummary(durationsMs: Float64Array): LatencySummary {
  const sorted = Float64Array.from(durationsMs).sort();
  return {
    samples: sorted.length,
    p50Ms: microseconds(percentile(sorted, 50)),
    p90Ms: microseconds(percentile(sorted, 90)),
    p99Ms: microseconds(percentile(sorted, 99)),
    p999Ms: microseconds(percentile(sorted, 99.9)),
    maxMs: microseconds(sorted.length ? (sorted[sorted.length - 1] as number) : NaN),
  };
}
