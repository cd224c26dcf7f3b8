// The kubelet's start-up histograms: buckets summed over label sets, p99 over the agent's
// --startup-window from bucket deltas between reads (histogram_quantile's linear interpolation),
// deltas leaving the window by age, a restarted kubelet counted from zero.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KubeletSliWindow, parseHistograms, parseKubeletMetrics, processStartMs, quantile } from '../../src/agent/kubelet-sli.ts';

const text = (counts: number[], extra = ''): string => [
  '# HELP kubelet_pod_start_sli_duration_seconds [ALPHA] Duration in seconds to start a pod, excluding time to pull images and run init containers, measured from pod creation timestamp to when all its containers are reported as started and observed via watch',
  '# TYPE kubelet_pod_start_sli_duration_seconds histogram',
  ...[['1', 0], ['2', 1], ['3', 2], ['4', 3], ['+Inf', 4]].map(([le, i]) => `kubelet_pod_start_sli_duration_seconds_bucket{le="${le}"} ${counts[i as number]}`),
  `kubelet_pod_start_sli_duration_seconds_count ${counts[4]}`,
  'kubelet_image_pull_duration_seconds_bucket{image_size_in_bytes="0-10MB",le="1"} 2',
  'kubelet_image_pull_duration_seconds_bucket{image_size_in_bytes="0-10MB",le="+Inf"} 2',
  'kubelet_image_pull_duration_seconds_bucket{image_size_in_bytes="10MB-100MB",le="1"} 0',
  'kubelet_image_pull_duration_seconds_bucket{image_size_in_bytes="10MB-100MB",le="+Inf"} 1',
  'garbage line', extra, '',
].join('\n');

test('quantile interpolates inside the bucket and stops at the last finite bound', () => {
  const b = parseHistograms(text([0, 6, 7, 9, 10])).sli!;
  assert.deepEqual(b.bounds, [1, 2, 3, 4, Infinity]);
  assert.equal(quantile(0.5, b), 1 + 5 / 6);
  assert.equal(quantile(0.99, b), 4, 'rank 9.9 falls in +Inf: the last finite bound');
  assert.equal(quantile(0.99, { bounds: [1, Infinity], counts: [0, 0], count: 0 }), null);
  assert.deepEqual(parseHistograms(text([0, 0, 0, 0, 0])).imagePull?.counts, [2, 3], 'label sets summed per bound');
});

const T0 = Date.parse('2026-12-01T10:00:00Z');
const MIN = 60_000;
const started = (ms: number): string => `process_start_time_seconds ${ms / 1000}`;

test('over the window: the deltas between reads add up, and leave it by age (no pod started: no p99, not the last one)', () => {
  const sli = new KubeletSliWindow(2 * MIN);
  const kubeletStart = T0 - 3_600_000;
  assert.equal(sli.scrape(parseKubeletMetrics(text([0, 6, 7, 9, 10], started(kubeletStart))), T0), false, 'the first read only sets where the window starts: the counters go back an hour');
  assert.equal(sli.scrape(parseKubeletMetrics(text([0, 6, 107, 109, 110], started(kubeletStart))), T0 + MIN), true);
  let now = sli.figures(T0 + MIN).sli!;
  assert.equal(now.samples, 100);
  assert.ok(Math.abs((now.p99Seconds as number) - 2.99) < 1e-9, 'the 100 new ones all in bucket 2-3 s: rank 99 of 100 at 99 % of it');
  sli.scrape(parseKubeletMetrics(text([10, 16, 117, 119, 120], started(kubeletStart))), T0 + 2 * MIN);
  now = sli.figures(T0 + 2 * MIN).sli!;
  assert.equal(now.samples, 110, 'both deltas are in the window');
  sli.scrape(parseKubeletMetrics(text([20, 26, 127, 129, 130], started(kubeletStart))), T0 + 3 * MIN + 1);
  now = sli.figures(T0 + 3 * MIN + 1).sli!;
  assert.equal(now.samples, 20, 'the slow hundred left the window: only the fast pods since count');
  assert.ok((now.p99Seconds as number) <= 1);
  sli.scrape(parseKubeletMetrics(text([20, 26, 127, 129, 130], started(kubeletStart))), T0 + 6 * MIN);
  assert.deepEqual(sli.figures(T0 + 6 * MIN).sli, { samples: 0, p99Seconds: null }, 'no pod started in the window');
});

test('a kubelet restart: counts that went down, or another process start time, count from zero', () => {
  const sli = new KubeletSliWindow(10 * MIN);
  sli.scrape(parseKubeletMetrics(text([0, 6, 7, 9, 10], started(T0 - 3_600_000))), T0);
  sli.scrape(parseKubeletMetrics(text([0, 1, 1, 1, 1], started(T0 + 30_000))), T0 + MIN);
  assert.equal(sli.figures(T0 + MIN).sli?.samples, 1, 'counts went down: the new process\'s totals are all since the previous read');
  // Restarted again and already past the old counts: only the start time tells.
  sli.scrape(parseKubeletMetrics(text([0, 2, 2, 2, 5], started(T0 + 90_000))), T0 + 2 * MIN);
  assert.equal(sli.figures(T0 + 2 * MIN).sli?.samples, 6, 'the five of the new process, not 5 - 1');
  assert.equal(processStartMs(text([0, 0, 0, 0, 0], 'process_start_time_seconds 1.7e9')), 1.7e12);
  assert.equal(processStartMs(text([0, 0, 0, 0, 0])), undefined);
});

test('a kubelet that started within the window counts from its first read; reads failing for longer than the window start over', () => {
  const sli = new KubeletSliWindow(10 * MIN);
  assert.equal(sli.scrape(parseKubeletMetrics(text([0, 3, 3, 3, 3], started(T0 - MIN))), T0), true, 'all its observations are within the window');
  assert.equal(sli.figures(T0).sli?.samples, 3);
  assert.equal(sli.scrape(parseKubeletMetrics(text([0, 3, 3, 3, 53], started(T0 - MIN))), T0 + 30 * MIN), false, 'the previous read is older than the window: the delta could reach beyond it');
  assert.equal(sli.figures(T0 + 30 * MIN).sli?.samples, 0);
});

test('memory stays bounded: reads closer together than a 120th of the window share an entry', () => {
  const sli = new KubeletSliWindow(2 * MIN);
  let count = 0;
  sli.scrape(parseKubeletMetrics(text([0, 0, 0, 0, 0])), T0);
  for (let i = 1; i <= 1000; i++) {
    count += 1;
    sli.scrape(parseKubeletMetrics(text([0, count, count, count, count])), T0 + i * 100);
  }
  const entries = (sli as unknown as { entries: Map<string, unknown[]> }).entries.get('sli') as unknown[];
  assert.ok(entries.length <= 121, `${entries.length} entries`);
  assert.equal(sli.figures(T0 + 1000 * 100).sli?.samples, 1000);
});
