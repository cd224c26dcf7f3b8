// etcd's own latency histograms from its Prometheus text /metrics: p99 by linear interpolation
// inside the bucket that holds the rank (what histogram_quantile does), with that bucket's bounds.
import { fetchLocalText, type LocalFetch, type LocalFetchOptions } from '../../host/local-http.ts';

export interface HistogramBucket {
  le: number;
  /** Cumulative count of observations ≤ le. */
  count: number;
}

export interface Quantile {
  /** Seconds, interpolated. */
  value: number;
  lowerBound: number;
  upperBound: number;
  observations: number;
}

/** Samples by metric name, summed over label sets (etcd exports one series per histogram). */
export interface ParsedMetrics {
  buckets: Map<string, Map<number, number>>;
  values: Map<string, number>;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)(?:\s+\d+)?$/;

function parseNumber(text: string): number {
  if (text === '+Inf' || text === 'Inf') return Infinity;
  if (text === '-Inf') return -Infinity;
  return Number(text);
}

export function parsePrometheusText(text: string): ParsedMetrics {
  const buckets = new Map<string, Map<number, number>>();
  const values = new Map<string, number>();
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const match = SAMPLE.exec(line);
    if (!match) continue;
    const [, name, labels, valueText] = match as unknown as [string, string, string | undefined, string];
    const value = parseNumber(valueText);
    if (Number.isNaN(value)) continue;
    const le = labels ? /(?:^\{|,)\s*le="([^"]*)"/.exec(labels)?.[1] : undefined;
    if (name.endsWith('_bucket') && le !== undefined) {
      const bound = parseNumber(le);
      if (Number.isNaN(bound)) continue;
      const histogram = buckets.get(name.slice(0, -'_bucket'.length)) ?? new Map<number, number>();
      histogram.set(bound, (histogram.get(bound) ?? 0) + value);
      buckets.set(name.slice(0, -'_bucket'.length), histogram);
    } else {
      values.set(name, (values.get(name) ?? 0) + value);
    }
  }
  return { buckets, values };
}

export function histogramBuckets(metrics: ParsedMetrics, name: string): HistogramBucket[] {
  const histogram = metrics.buckets.get(name);
  if (!histogram) return [];
  return [...histogram.entries()].map(([le, count]) => ({ le, count })).sort((a, b) => a.le - b.le);
}

/** Quantile q (0..1) of a cumulative histogram; undefined without observations or a +Inf bucket. */
export function histogramQuantile(q: number, buckets: readonly HistogramBucket[]): Quantile | undefined {
  const last = buckets.at(-1);
  if (!last || last.le !== Infinity || !(last.count > 0) || !(q >= 0 && q <= 1)) return undefined;
  const total = last.count;
  const rank = q * total;
  let lowerBound = 0;
  let lowerCount = 0;
  for (const bucket of buckets) {
    if (bucket.count >= rank && bucket.count > lowerCount) {
      if (bucket.le === Infinity) {
        // Beyond the last finite bucket: like Prometheus, answer that bucket's upper bound.
        return { value: lowerBound, lowerBound, upperBound: Infinity, observations: total };
      }
      const fraction = (rank - lowerCount) / (bucket.count - lowerCount);
      return { value: lowerBound + (bucket.le - lowerBound) * fraction, lowerBound, upperBound: bucket.le, observations: total };
    }
    lowerBound = bucket.le;
    lowerCount = bucket.count;
  }
  return undefined;
}

export const WAL_FSYNC = 'etcd_disk_wal_fsync_duration_seconds';
export const BACKEND_COMMIT = 'etcd_disk_backend_commit_duration_seconds';
export const HEARTBEAT_FAILURES = 'etcd_server_heartbeat_send_failures_total';
export const LEADER_CHANGES = 'etcd_server_leader_changes_seen_total';

export interface EtcdLatency {
  walFsyncP99: Quantile | undefined;
  backendCommitP99: Quantile | undefined;
  heartbeatFailures: number | undefined;
  leaderChanges: number | undefined;
}

export function etcdLatencyFromMetrics(text: string): EtcdLatency {
  const metrics = parsePrometheusText(text);
  return {
    walFsyncP99: histogramQuantile(0.99, histogramBuckets(metrics, WAL_FSYNC)),
    backendCommitP99: histogramQuantile(0.99, histogramBuckets(metrics, BACKEND_COMMIT)),
    heartbeatFailures: metrics.values.get(HEARTBEAT_FAILURES),
    leaderChanges: metrics.values.get(LEADER_CHANGES),
  };
}

export type MetricsFetch = LocalFetch;

/** GET <base>/metrics over plain HTTP; https needs etcd's client certificates, which we do not hold. */
export async function fetchEtcdMetrics(baseUrl: string, timeoutMs = 3000, options: Omit<LocalFetchOptions, 'timeoutMs'> = {}): Promise<MetricsFetch> {
  const url = `${baseUrl.replace(/\/+$/, '')}/metrics`;
  if (!url.startsWith('http://')) {
    return { ok: false, url, reason: `${url} is not plain HTTP; etcd's TLS client port needs its certificates (set --listen-metrics-urls=http://127.0.0.1:2381)` };
  }
  return fetchLocalText(url, { ...options, timeoutMs });
}
