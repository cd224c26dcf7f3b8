// Before → after: the verdict per phase (a change counts from its noise floor: 100 ms, or 10 % of
// the total when that is more), every part of the total compared (statusDelay included), the facts
// that changed, and what makes two runs less comparable.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compareMeasurements, noiseFloor, phaseChange } from '../../src/measure/compare.ts';
import { largest, partStats, phaseStats, sloVerdict, phaseTable, TIMED_PARTS } from '../../src/measure/result.ts';
import { measurement, samples } from '../helpers/measurements.ts';

const stats = (p50: number, p99: number) => ({ samples: 10, p50Ms: p50, p90Ms: p99, p99Ms: p99, maxMs: p99 });
const FLOOR = { p50Ms: 100, p99Ms: 100 };

test('a phase improves or worsens only beyond its noise floor, on p50 or p99; both ways is mixed', () => {
  assert.equal(phaseChange('creation', stats(5500, 6000), stats(1000, 1200), FLOOR).verdict, 'improved');
  assert.equal(phaseChange('creation', stats(1000, 1200), stats(5500, 6000), FLOOR).verdict, 'worse');
  assert.equal(phaseChange('scheduling', stats(60, 80), stats(30, 40), FLOOR).verdict, 'unchanged', '-50 % but 40 ms: noise');
  const total = (a: [number, number], b: [number, number]) => phaseChange('total', stats(...a), stats(...b), noiseFloor(stats(...a), stats(...b)));
  assert.equal(total([20_000, 21_000], [19_500, 20_500]).verdict, 'unchanged', '500 ms but 2.5 % of the total');
  assert.equal(total([2000, 9000], [1000, 12_000]).verdict, 'mixed');
  assert.equal(phaseChange('total', stats(2000, 9000), { ...stats(0, 0), p50Ms: null, p99Ms: null }, FLOOR).verdict, 'not comparable');
  assert.equal(phaseChange('statusDelay', undefined, stats(10, 20), FLOOR).verdict, 'not comparable', 'a file of an older version has none');
  const change = phaseChange('creation', stats(4000, 5000), stats(1000, 1000), FLOOR);
  assert.deepEqual([change.p50ChangeMs, change.p99ChangeMs, change.p50ChangePct, change.p99ChangePct], [-3000, -4000, -75, -80]);
  assert.equal(phaseChange('readiness', stats(0, 0), stats(0, 0), FLOOR).p50ChangePct, null, 'no percentage of 0');
  assert.deepEqual(noiseFloor(stats(900, 37_400), stats(400, 4_100)), { p50Ms: 100, p99Ms: 3740 });
});

/** The 5/10 → 50/100 node: nearly all of the 37.6 s is the status write's wait; small phases jitter. */
function kubeletFix() {
  const before = measurement(samples(Array.from({ length: 60 }, (_, i) => [300 + (i === 59 ? 579 : 0), 7, 15, 5, 600 * i + 2000] as [number, number, number, number, number])));
  const after = measurement(samples(Array.from({ length: 60 }, (_, i) => [200, i === 59 ? 107 : 20, i === 59 ? 115 : 30, 5, 60 * i + 500] as [number, number, number, number, number])));
  return { before, after };
}

test('5/10 → 50/100: phases under 100 ms or under 10 % of the total are unchanged, whatever their percentage; none is worse', () => {
  const { before, after } = kubeletFix();
  const c = compareMeasurements(before, after);
  assert.deepEqual(c.phases.map((p) => p.phase), ['scheduling', 'initialization', 'creation', 'readiness', 'statusDelay', 'total'], 'every part of the total, the status write included');
  const by = Object.fromEntries(c.phases.map((p) => [p.phase, p]));
  assert.equal(by.initialization?.p99ChangePct, 1429, '7 → 107 ms: a huge percentage');
  assert.deepEqual([by.initialization?.verdict, by.initialization?.withinNoise.p99], ['unchanged', true], '… of a phase far below 10 % of a 37 s total');
  assert.deepEqual([by.creation?.verdict, by.statusDelay?.verdict, by.total?.verdict], ['unchanged', 'improved', 'improved']);
  assert.deepEqual(c.phases.filter((p) => p.verdict === 'worse'), [], 'no phase worse beyond its noise floor');
  assert.equal(c.noiseFloor.p99Ms, Math.round(0.1 * (before.phases.total.p99Ms as number)));
  assert.deepEqual(c.caveats, []);
});

test('the largest phase is the part of the total with the highest p99, the status write (statusDelay) included', () => {
  const { before, after } = kubeletFix();
  assert.equal(before.slo.largestPhase, 'statusDelay');
  for (const m of [before, after]) {
    const p99s = TIMED_PARTS.map((part) => partStats(m, part)?.p99Ms ?? -1);
    assert.equal(partStats(m, m.slo.largestPhase as 'statusDelay')?.p99Ms, Math.max(...p99s));
  }
  assert.equal(largest({ phases: before.phases }), 'scheduling', 'without a statusDelay (an older file) the kubelet\'s phases only');
});

test('seed 000: scheduling fixed by client QPS, then creation by the tick; the facts that changed are named', () => {
  const before = measurement(samples(Array(10).fill([7700, 10, 500, 100])), { facts: {
    'kernel.hz': { value: 250, from: 'w1' }, 'scheduler.kubeAPIQPS': { value: 50, from: 'cp-1' }, 'cpu.governor': { value: 'performance', from: 'w1' },
  } });
  const after = measurement(samples(Array(10).fill([500, 10, 1500, 100])), { facts: {
    'kernel.hz': { value: 1000, from: 'w1' }, 'scheduler.kubeAPIQPS': { value: 150, from: 'cp-1' }, 'cpu.governor': { value: 'performance', from: 'w1' },
  } });
  const c = compareMeasurements(before, after);
  assert.deepEqual(c.phases.map((p) => [p.phase, p.verdict]), [
    ['scheduling', 'improved'], ['initialization', 'unchanged'], ['creation', 'worse'], ['readiness', 'unchanged'], ['statusDelay', 'unchanged'], ['total', 'improved'],
  ]);
  assert.deepEqual(c.facts.filter((f) => f.changed === true).map((f) => f.fact), ['kernel.hz', 'scheduler.kubeAPIQPS']);
  assert.deepEqual(c.facts.find((f) => f.fact === 'cpu.governor')?.changed, false);
  assert.equal(c.facts.find((f) => f.fact === 'kubelet.kubeAPIQPS')?.changed, 'unknown');
  assert.deepEqual([c.before.sloMet, c.after.sloMet], [false, true]);
  assert.deepEqual(c.caveats, []);
});

test('differences in how the runs were made are caveats; attach compared when both have it', () => {
  const base = measurement(samples([[100, 10, 900, 50]]));
  const other = measurement(samples([[100, 10, 900, 50], [100, 10, 900, 50]]), {
    node: 'worker-2', settings: { ...base.settings, pods: 2, placement: 'node-name', pvcStorageClass: 'longhorn' }, outcome: 'timeout',
    attach: phaseStats([11_000, 12_000]),
  });
  const c = compareMeasurements(base, other);
  assert.deepEqual(c.caveats, [
    'node differs: worker-1 before, worker-2 after', 'pod count differs: 1 before, 2 after', 'placement differs: scheduler before, node-name after',
    'PVC storage class differs: none before, longhorn after', 'this run timed out: only 2 of 2 pods became Ready',
  ]);
  assert.equal(c.phases.some((p) => p.phase === 'attach'), false);
  const withAttach = compareMeasurements({ ...other, attach: phaseStats([11_000]) }, other);
  assert.equal(withAttach.phases.find((p) => p.phase === 'attach')?.verdict, 'worse', 'p99 11 → 12 s: beyond 10 % of a 1 s total');
});

test('a kubelet upgrade across 1.36 moves the line between initialization and creation: a caveat says so', () => {
  const before = measurement(samples([[100, 10, 900, 50]]), { kubeletVersion: 'v1.35.4' });
  const after = measurement(samples([[100, 600, 310, 50]]));
  assert.deepEqual(compareMeasurements(before, after).caveats, [
    'initialization and creation are split differently: kubelet v1.35.4 before, v1.36.2 after (from 1.36 the sandbox, network and volumes count in initialization, before in creation); compare their sum',
  ]);
  assert.deepEqual(compareMeasurements(after, { ...after, kubeletVersion: 'v1.37.0' }).caveats, [], 'both 1.36 or later: the same split');
});

test('the SLO verdict counts pods that never became Ready as slower than any that did', () => {
  const ready = samples(Array(99).fill([100, 10, 900, 50]));
  const phases = phaseTable(ready);
  assert.deepEqual(sloVerdict(ready, 100, phases), { thresholdMs: 5000, p99TotalMs: 1060, met: true, largestPhase: 'creation' });
  assert.equal(sloVerdict(ready, 100, phases, phaseStats(Array(99).fill(1500))).largestPhase, 'statusDelay', 'the status write counts as a phase');
  const fewer = ready.slice(0, 98);
  const missed = sloVerdict(fewer, 100, phaseTable(fewer));
  assert.deepEqual([missed.met, missed.p99TotalMs, missed.note], [false, null, '2 of 100 pods did not become Ready: more than 1 %']);
  assert.equal(sloVerdict(samples([[1000, 0, 3999, 0]]), 1, phases).met, true, 'p99 4999 ms < 5 s');
  assert.equal(sloVerdict(samples([[1000, 0, 4000, 0]]), 1, phases).met, false, 'p99 5000 ms is not under 5 s');
  assert.deepEqual(phaseStats([300, 100, 200, 400]), { samples: 4, p50Ms: 200, p90Ms: 400, p99Ms: 400, maxMs: 400 });
});
