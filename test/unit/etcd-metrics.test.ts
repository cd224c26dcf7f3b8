import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import fc from 'fast-check';
import { etcdLatencyFromMetrics, fetchEtcdMetrics, histogramQuantile, parsePrometheusText } from '../../src/collectors/etcd/metrics.ts';

const fixture = (name: string): Promise<string> => readFile(new URL(`../fixtures/etcd-metrics/${name}`, import.meta.url), 'utf8');

test('idle etcd 3.4 (real /metrics): every observation in the first bucket', async () => {
  const latency = etcdLatencyFromMetrics(await fixture('etcd-3.4-idle.txt'));
  assert.deepEqual(latency.walFsyncP99, { value: 0.00099, lowerBound: 0, upperBound: 0.001, observations: 5 });
  assert.equal(latency.backendCommitP99?.observations, 6);
  assert.equal(latency.heartbeatFailures, 0);
  assert.equal(latency.leaderChanges, 1);
});

test('slow disk (seed 001 "before" shape): p99 interpolated inside its bucket, bounds reported', async () => {
  const latency = etcdLatencyFromMetrics(await fixture('etcd-3.4-slow-hdd.txt'));
  // rank 990 of 1000 lies between 985 (≤ 256 ms) and 998 (≤ 512 ms): 256 + 256 × 5/13 ms.
  assert.equal(latency.walFsyncP99?.lowerBound, 0.256);
  assert.equal(latency.walFsyncP99?.upperBound, 0.512);
  assert.ok(Math.abs((latency.walFsyncP99?.value ?? 0) - (0.256 + (0.256 * 5) / 13)) < 1e-12);
  // rank 990 between 985 (≤ 32 ms) and 995 (≤ 64 ms): 48 ms.
  assert.ok(Math.abs((latency.backendCommitP99?.value ?? 0) - 0.048) < 1e-12);
  assert.deepEqual([latency.heartbeatFailures, latency.leaderChanges], [17, 4]);
});

test('quantile edge cases: beyond the last finite bucket, no observations, no +Inf', () => {
  assert.deepEqual(histogramQuantile(0.99, [{ le: 1, count: 0 }, { le: Infinity, count: 10 }]), { value: 1, lowerBound: 1, upperBound: Infinity, observations: 10 });
  assert.equal(histogramQuantile(0.99, [{ le: 1, count: 0 }, { le: Infinity, count: 0 }]), undefined);
  assert.equal(histogramQuantile(0.99, [{ le: 1, count: 3 }]), undefined);
  const parsed = parsePrometheusText('x_bucket{a="1",le="0.5"} 2\nx_bucket{a="2",le="0.5"} 3\nx_bucket{le="+Inf"} 5\n', new Set(['x']));
  assert.equal(parsed.buckets.get('x')?.get(0.5), 5);
});

test('metrics fetch: https refused with the fix, unreachable port named', async () => {
  const tls = await fetchEtcdMetrics('https://127.0.0.1:2379');
  assert.match(tls.ok ? '' : tls.reason, /not plain HTTP.*--listen-metrics-urls/);
  const closed = await fetchEtcdMetrics('http://127.0.0.1:1', 1000);
  assert.match(closed.ok ? '' : closed.reason, /http:\/\/127\.0\.0\.1:1\/metrics is not reachable/);
});

test('the Prometheus text parser never throws on garbage', () => {
  fc.assert(
    fc.property(fc.string(), fc.double(), (text, q) => {
      etcdLatencyFromMetrics(text);
      histogramQuantile(q, [{ le: Number.isNaN(q) ? 0 : q, count: 1 }, { le: Infinity, count: 2 }]);
    }),
    { numRuns: 300 },
  );
});
