// etcd's own latency histograms from its Prometheus text /metrics: p99 by linear interpolation
// inside the bucket that holds the rank (what histogram_quantile does), with that bucket's bounds.
import { fetchLocalLines, type LocalFetchOptions } from '../../host/local-http.ts';
import { parsePrometheusText as parseWanted, prometheusReader, type ParsedMetrics } from '../../text/prometheus-text.ts';

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

export type { ParsedMetrics };

/** etcd's /metrics is ~1 500 lines. */
const LINE_BOUNDS = { maxLines: 100_000, maxLineChars: 64 * 1024 };

/** The etcd metrics read here, from a whole text (`wanted`: other names, for tests). */
export function parsePrometheusText(text: string, wanted: ReadonlySet<string> = ETCD_METRICS): ParsedMetrics {
  return parseWanted(text, wanted, LINE_BOUNDS);
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
const ETCD_METRICS: ReadonlySet<string> = new Set([WAL_FSYNC, BACKEND_COMMIT, HEARTBEAT_FAILURES, LEADER_CHANGES]);

export interface EtcdLatency {
  walFsyncP99: Quantile | undefined;
  backendCommitP99: Quantile | undefined;
  heartbeatFailures: number | undefined;
  leaderChanges: number | undefined;
}

function latencyOf(metrics: ParsedMetrics): EtcdLatency {
  return {
    walFsyncP99: histogramQuantile(0.99, histogramBuckets(metrics, WAL_FSYNC)),
    backendCommitP99: histogramQuantile(0.99, histogramBuckets(metrics, BACKEND_COMMIT)),
    heartbeatFailures: metrics.values.get(HEARTBEAT_FAILURES),
    leaderChanges: metrics.values.get(LEADER_CHANGES),
  };
}

export function etcdLatencyFromMetrics(text: string): EtcdLatency {
  return latencyOf(parsePrometheusText(text));
}

export type MetricsFetch = { ok: true; url: string; latency: EtcdLatency } | { ok: false; url: string; reason: string };

/** GET <base>/metrics over plain HTTP (https needs etcd's client certificates, which we do not hold), parsed as it streams. */
export async function fetchEtcdMetrics(baseUrl: string, timeoutMs = 3000, options: Omit<LocalFetchOptions, 'timeoutMs'> = {}): Promise<MetricsFetch> {
  const url = `${baseUrl.replace(/\/+$/, '')}/metrics`;
  if (!url.startsWith('http://')) {
    return { ok: false, url, reason: `${url} is not plain HTTP; etcd's TLS client port needs its certificates (set --listen-metrics-urls=http://127.0.0.1:2381)` };
  }
  const reader = prometheusReader(ETCD_METRICS, LINE_BOUNDS);
  const got = await fetchLocalLines(url, reader.lines, { ...options, timeoutMs });
  return got.ok ? { ok: true, url: got.url, latency: latencyOf(reader.result()) } : got;
}
