import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_RETRY_AFTER_MS, TokenBucket, backoffDelay, jittered, retryDelay } from '../../src/kube/backoff.ts';
import { KubeError, parseRetryAfter } from '../../src/kube/errors.ts';
import { transitions } from '../../src/publish/events.ts';
import { warnedRulesOnNode, renderAnnotations } from '../../src/wire/annotations.ts';
import { finding, report, seedReport } from '../helpers/reports.ts';

test('token bucket: burst passes at once, then one request per 1/qps seconds', () => {
  let now = 0;
  const bucket = new TokenBucket(1, 5, () => now);
  assert.deepEqual(Array.from({ length: 5 }, () => bucket.reserve()), [0, 0, 0, 0, 0]);
  assert.equal(bucket.reserve(), 1000);
  now = 10_000;
  assert.equal(bucket.reserve(), 0, 'refilled, but never above the burst');
});

test('backoff grows exponentially, is jittered, and is capped', () => {
  const policy = { baseMs: 1000, capMs: 300_000 };
  assert.equal(backoffDelay(1, policy, () => 1), 1000);
  assert.equal(backoffDelay(4, policy, () => 1), 8000);
  assert.equal(backoffDelay(30, policy, () => 1), 300_000);
  assert.equal(backoffDelay(30, policy, () => 0), 500, 'never below base/2');
  const spread = new Set(Array.from({ length: 50 }, () => backoffDelay(6, policy)));
  assert.ok(spread.size > 40, 'jitter spreads retries of many nodes');
  assert.ok(jittered(300_000, () => 0) === 270_000 && jittered(300_000, () => 1) === 330_000);
});

test('Retry-After (seconds or date) wins over a shorter backoff, and is bounded', () => {
  const policy = { baseMs: 100, capMs: 1000 };
  const tooMany = (value: string) => new KubeError({ verb: 'watch', target: 'nodes', code: '429', status: 429, detail: '', retryAfterMs: parseRetryAfter(value) });
  assert.equal(retryDelay(tooMany('7'), 1, policy, () => 1), 7000);
  assert.equal(retryDelay(tooMany('86400'), 1, policy, () => 1), MAX_RETRY_AFTER_MS);
  const date = new Date(Date.now() + 5000).toUTCString();
  const fromDate = retryDelay(tooMany(date), 1, policy, () => 1);
  assert.ok(fromDate > 3000 && fromDate <= 5000, String(fromDate));
  assert.equal(retryDelay(new Error('ECONNREFUSED'), 3, policy, () => 1), 400);
});

test('transitions come from the annotations on the Node: new failures warn, fixes resolve, unknown is silent', () => {
  const before = seedReport();
  const onNode = renderAnnotations(before);
  assert.deepEqual(transitions(warnedRulesOnNode(onNode), before), []);
  const after = report([
    finding('etcd-fsync-latency', 'unknown'),
    finding('kernel-tick-rate', 'pass', { observed: 'CONFIG_HZ=1000' }),
    finding('new-rule', 'fail', { severity: 'critical', remediation: { summary: 'do it', text: 'do it', commands: ['sysctl -w x=1'] } }),
  ]);
  const got = transitions(warnedRulesOnNode(onNode), after);
  assert.deepEqual(got.map((e) => [e.type, e.reason, e.ruleId]), [
    ['Warning', 'TuningRecommendation', 'new-rule'],
    ['Normal', 'TuningResolved', 'cpu-governor'],
    ['Normal', 'TuningResolved', 'kernel-tick-rate'],
  ]);
  assert.equal(got[0]?.message, 'CRIT new-rule: observed for new-rule; want expected for new-rule — do it');
  assert.match(got[1]?.message ?? '', /no longer in the rule set/);
  assert.equal(transitions(new Map(), before).length, 3, 'no annotation yet: every failing rule warns once');
});
