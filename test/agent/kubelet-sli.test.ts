// The kubelet's start-up histograms: buckets summed over label sets, p99 per interval from bucket
// deltas (histogram_quantile's linear interpolation), a restarted kubelet starting a new interval.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KubeletSliTracker, parseHistograms, quantile } from '../../src/agent/kubelet-sli.ts';

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

test('per interval: the deltas between scrapes; a kubelet restart begins a new interval', () => {
  const sli = new KubeletSliTracker();
  assert.equal(sli.scrape(parseHistograms(text([0, 6, 7, 9, 10]))), undefined);
  const next = sli.scrape(parseHistograms(text([0, 6, 107, 109, 110])))!;
  assert.deepEqual(next.sli?.samples, 100);
  assert.ok(Math.abs((next.sli?.p99Seconds as number) - 2.99) < 1e-9, 'the 100 new ones all in bucket 2-3 s: rank 99 of 100 at 99 % of it');
  const restarted = sli.scrape(parseHistograms(text([0, 1, 1, 1, 1])))!;
  assert.deepEqual(restarted.sli?.samples, 1, 'counts went down: the kubelet restarted, its new totals are the interval');
});
