// Before → after: the verdict per phase (a change counts from 10 % and 100 ms), the facts that
// changed, and what makes two runs less comparable.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compareMeasurements, phaseChange } from '../../src/measure/compare.ts';
import { phaseStats, sloVerdict, phaseTable } from '../../src/measure/result.ts';
import { measurement, samples } from '../helpers/measurements.ts';

const stats = (p50: number, p99: number) => ({ samples: 10, p50Ms: p50, p90Ms: p99, p99Ms: p99, maxMs: p99 });

test('a phase improves or worsens only by at least 10 % and 100 ms, on p50 or p99; both ways is mixed', () => {
  assert.equal(phaseChange('creation', stats(5500, 6000), stats(1000, 1200)).verdict, 'improved');
  assert.equal(phaseChange('creation', stats(1000, 1200), stats(5500, 6000)).verdict, 'worse');
  assert.equal(phaseChange('scheduling', stats(60, 80), stats(30, 40)).verdict, 'unchanged', '-50 % but 40 ms: noise');
  assert.equal(phaseChange('total', stats(20_000, 21_000), stats(19_500, 20_500)).verdict, 'unchanged', '500 ms but 2.5 %');
  assert.equal(phaseChange('total', stats(2000, 9000), stats(1000, 12_000)).verdict, 'mixed');
  assert.equal(phaseChange('total', stats(2000, 9000), { ...stats(0, 0), p50Ms: null, p99Ms: null }).verdict, 'not comparable');
  const change = phaseChange('creation', stats(4000, 5000), stats(1000, 1000));
  assert.deepEqual([change.p50ChangePct, change.p99ChangePct], [-75, -80]);
  assert.equal(phaseChange('readiness', stats(0, 0), stats(0, 0)).p50ChangePct, null, 'no percentage of 0');
});

test('seed 000: scheduling fixed by client QPS, then creation by the tick; the facts that changed are named', () => {
  const before = measurement(samples(Array(10).fill([7700, 10, 500, 100])), { facts: {
    'kernel.hz': { value: 250, from: 'w1' }, 'scheduler.kubeAPIQPS': { value: 50, from: 'cp-1' }, 'cpu.governor': { value: 'performance', from: 'w1' },
  } });
  const after = measurement(samples(Array(10).fill([500, 10, 1000, 100])), { facts: {
    'kernel.hz': { value: 1000, from: 'w1' }, 'scheduler.kubeAPIQPS': { value: 150, from: 'cp-1' }, 'cpu.governor': { value: 'performance', from: 'w1' },
  } });
  const c = compareMeasurements(before, after);
  assert.deepEqual(c.phases.map((p) => [p.phase, p.verdict]), [
    ['scheduling', 'improved'], ['initialization', 'unchanged'], ['creation', 'worse'], ['readiness', 'unchanged'], ['total', 'improved'],
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
  assert.equal(withAttach.phases.find((p) => p.phase === 'attach')?.verdict, 'unchanged');
});

test('the SLO verdict counts pods that never became Ready as slower than any that did', () => {
  const ready = samples(Array(99).fill([100, 10, 900, 50]));
  const phases = phaseTable(ready);
  assert.deepEqual(sloVerdict(ready, 100, phases), { thresholdMs: 5000, p99TotalMs: 1060, met: true, largestPhase: 'creation' });
  const fewer = ready.slice(0, 98);
  const missed = sloVerdict(fewer, 100, phaseTable(fewer));
  assert.deepEqual([missed.met, missed.p99TotalMs, missed.note], [false, null, '2 of 100 pods did not become Ready: more than 1 %']);
  assert.equal(sloVerdict(samples([[1000, 0, 3999, 0]]), 1, phases).met, true, 'p99 4999 ms < 5 s');
  assert.equal(sloVerdict(samples([[1000, 0, 4000, 0]]), 1, phases).met, false, 'p99 5000 ms is not under 5 s');
  assert.deepEqual(phaseStats([300, 100, 200, 400]), { samples: 4, p50Ms: 200, p90Ms: 400, p99Ms: 400, maxMs: 400 });
});
