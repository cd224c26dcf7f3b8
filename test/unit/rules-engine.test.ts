import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FactSet } from '../../src/facts/fact-set.ts';
import { evaluate, parseVersion } from '../../src/rules/conditions.ts';
import { applyOverrides, evaluateRule, renderTemplate, type EffectiveRule } from '../../src/rules/engine.ts';
import type { Condition } from '../../src/rules/schema.ts';
import type { LoadedRule } from '../../src/rules/rule-file.ts';
import { coverageOf, coverageText, gradeOf, scoreImpact, scoreOf } from '../../src/report/score.ts';
import type { Finding } from '../../src/report/types.ts';

function facts(entries: Record<string, unknown>): FactSet {
  const set = new FactSet();
  for (const [key, value] of Object.entries(entries)) {
    if (value === 'UNKNOWN') set.unknown(key, 'could not read it');
    else set.set(key, value as never, `/fixture/${key}`);
  }
  return set;
}

const truth = (condition: Condition, entries: Record<string, unknown>, params = {}) => evaluate(condition, facts(entries), params).truth;

test('operators: In/NotIn on scalars and lists, numbers, booleans, versions, existence', () => {
  assert.equal(truth({ fact: 'g', op: 'In', values: ['performance'] }, { g: 'performance' }), true);
  assert.equal(truth({ fact: 'g', op: 'NotIn', values: ['performance'] }, { g: 'powersave' }), true);
  assert.equal(truth({ fact: 'chain', op: 'In', values: ['throughput-performance'] }, { chain: ['mine', 'throughput-performance'] }), true);
  assert.equal(truth({ fact: 'chain', op: 'NotIn', values: ['throughput-performance'] }, { chain: [] }), true);
  assert.equal(truth({ fact: 'hz', op: 'Lt', value: 1000 }, { hz: 250 }), true);
  assert.equal(truth({ fact: 'hz', op: 'Ge', value: 1000 }, { hz: '1000' }), true);
  assert.equal(truth({ fact: 'hz', op: 'GtLt', values: [100, 300] }, { hz: 250 }), true);
  assert.equal(truth({ fact: 'hz', op: 'GtLt', values: [100, 250] }, { hz: 250 }), false);
  assert.equal(truth({ fact: 'vm', op: 'IsFalse' }, { vm: false }), true);
  assert.equal(truth({ fact: 'v', op: 'VersionGe', value: '1.27' }, { v: 'v1.27.3-eks.1' }), true);
  assert.equal(truth({ fact: 'v', op: 'VersionLt', value: '1.27' }, { v: 'v1.26.15' }), true);
  assert.equal(truth({ fact: 'epp', op: 'Exists' }, { epp: null }), false);
  assert.equal(truth({ fact: 'epp', op: 'DoesNotExist' }, { epp: null }), true);
  assert.equal(truth({ fact: 'hz', op: 'Lt', param: 'minHz' }, { hz: 300 }, { minHz: 1000 }), true);
});

test('missing or unknown facts make a leaf unknown, and type mismatches too', () => {
  assert.equal(truth({ fact: 'hz', op: 'Lt', value: 1000 }, {}), 'unknown');
  assert.equal(truth({ fact: 'hz', op: 'Lt', value: 1000 }, { hz: 'UNKNOWN' }), 'unknown');
  assert.equal(truth({ fact: 'hz', op: 'Exists' }, { hz: 'UNKNOWN' }), 'unknown');
  assert.equal(truth({ fact: 'vm', op: 'IsTrue' }, { vm: 'yes' }), 'unknown');
  assert.equal(truth({ fact: 'v', op: 'VersionGe', value: '1.27' }, { v: 'garbage' }), 'unknown');
});

test('three-valued all/any/not: unknown never turns into a decided answer unless another part decides', () => {
  const unknownLeaf: Condition = { fact: 'missing', op: 'IsTrue' };
  const trueLeaf: Condition = { fact: 'a', op: 'IsTrue' };
  const falseLeaf: Condition = { fact: 'b', op: 'IsTrue' };
  const known = { a: true, b: false };
  assert.equal(truth({ all: [unknownLeaf, falseLeaf] }, known), false);
  assert.equal(truth({ all: [unknownLeaf, trueLeaf] }, known), 'unknown');
  assert.equal(truth({ any: [unknownLeaf, trueLeaf] }, known), true);
  assert.equal(truth({ any: [unknownLeaf, falseLeaf] }, known), 'unknown');
  assert.equal(truth({ not: unknownLeaf }, known), 'unknown');
  assert.equal(truth({ not: falseLeaf }, known), true);
});

const baseRule: LoadedRule = {
  id: 'tick', title: 'Tick', category: 'kernel', severity: 'warning', weight: 2, params: { minHz: 1000 },
  appliesWhen: { fact: 'linux', op: 'IsTrue' },
  failsWhen: { fact: 'kernel.hz', op: 'Lt', param: 'minHz' },
  observed: 'CONFIG_HZ={{kernel.hz}}', expected: 'CONFIG_HZ={{params.minHz}}', message: 'ticks at {{kernel.hz}} Hz',
  evidence: ['kernel.release'],
  remediation: { summary: 'rebuild', text: 'rebuild', commands: ['make'] }, references: [{ seed: '000_27ac7eb1e25f66b9.txt' }], file: 'x.yaml', line: 1,
};
const rule = (overrides: Partial<LoadedRule> = {}): EffectiveRule => applyOverrides([{ ...baseRule, ...overrides }], [])[0] as EffectiveRule;

test('a rule fails with its rendered message and evidence from the facts it read', () => {
  const finding = evaluateRule(rule(), facts({ linux: true, 'kernel.hz': 250, 'kernel.release': '6.1.0' }));
  assert.equal(finding.status, 'fail');
  assert.equal(finding.message, 'ticks at 250 Hz');
  assert.equal(finding.observed, 'CONFIG_HZ=250');
  assert.equal(finding.expected, 'CONFIG_HZ=1000');
  assert.deepEqual(finding.evidence.map((item) => [item.fact, item.value, item.source]), [
    ['kernel.hz', 250, '/fixture/kernel.hz'],
    ['kernel.release', '6.1.0', '/fixture/kernel.release'],
    ['linux', true, '/fixture/linux'],
  ]);
  assert.equal(finding.scoreImpact, 10);
});

test('pass, not-applicable and unknown results say why', () => {
  assert.equal(evaluateRule(rule(), facts({ linux: true, 'kernel.hz': 1000 })).status, 'pass');
  const notApplicable = evaluateRule(rule(), facts({ linux: false, 'kernel.hz': 250 }));
  assert.deepEqual([notApplicable.status, notApplicable.message, notApplicable.engineReason], ['not-applicable', 'Not applicable here: linux: no.', 'linux = false']);
  const unknown = evaluateRule(rule(), facts({ linux: true, 'kernel.hz': 'UNKNOWN' }));
  assert.deepEqual([unknown.status, unknown.message, unknown.engineReason], ['unknown', 'Cannot decide: kernel.hz: could not read it.', 'kernel.hz is unknown: could not read it']);
  assert.equal(unknown.observed, '', 'nothing observed decided it: no "CONFIG_HZ=?" to show anywhere');
  assert.equal(notApplicable.observed, '');
  assert.equal(unknown.scoreImpact, 0, 'unknown is coverage, not points');
});

test('enoughDataWhen: too few samples is not applicable for lack of data, in the rule\'s words; enough is judged', () => {
  const windowed = rule({
    params: { minHz: 1000, minSamples: 10 },
    enoughDataWhen: { fact: 'samples', op: 'Ge', param: 'minSamples' },
    notEnoughData: 'fewer than {{params.minSamples}} pods started in the last {{window}}',
    observed: 'p99 {{kernel.hz}} ms over {{samples}} pods',
  });
  const empty = evaluateRule(windowed, facts({ linux: true, samples: 0, window: '1h', 'kernel.hz': null }));
  assert.deepEqual([empty.status, empty.lacksData, empty.message, empty.engineReason, empty.observed],
    ['not-applicable', true, 'Not applicable here: fewer than 10 pods started in the last 1h.', 'samples = 0', '']);
  assert.equal(empty.evidence[0]?.fact, 'samples', 'the data fact decided it: first in the evidence');
  const linuxOff = evaluateRule(windowed, facts({ linux: false, samples: 0 }));
  assert.deepEqual([linuxOff.status, linuxOff.lacksData], ['not-applicable', undefined], 'not applying is not lacking data');
  const unknown = evaluateRule(windowed, facts({ linux: true, samples: 'UNKNOWN' }));
  assert.deepEqual([unknown.status, unknown.lacksData, unknown.message], ['unknown', undefined, 'Cannot decide: samples: could not read it.']);
  const judged = evaluateRule(windowed, facts({ linux: true, samples: 12, window: '1h', 'kernel.hz': 250 }));
  assert.deepEqual([judged.status, judged.observed], ['fail', 'p99 250 ms over 12 pods']);
});

test('reasons name facts by their labels; the engine\'s text is kept apart (issue 24)', () => {
  const labelled: EffectiveRule = { ...rule(), factLabels: { 'kernel.hz': "the kernel's timer tick", linux: 'a Linux host' } };
  const none = evaluateRule(labelled, facts({ linux: true, 'kernel.hz': null }));
  assert.deepEqual([none.status, none.message, none.engineReason], ['unknown', "Cannot decide: the kernel's timer tick: cannot be judged, nothing on this host gives it.", 'kernel.hz = none cannot be compared with Lt 1000']);
  const withDetail = facts({ linux: true });
  withDetail.set('kernel.hz', null, '/boot', 'no kernel config readable (tried: /boot/config-6.1).');
  const why = evaluateRule(labelled, withDetail);
  assert.equal(why.message, "Cannot decide: the kernel's timer tick: cannot be judged, no kernel config readable (tried: /boot/config-6.1).", 'a null value\'s detail says why');
  const text = evaluateRule(labelled, facts({ linux: true, 'kernel.hz': 'fast' }));
  assert.equal(text.message, 'Cannot decide: the kernel\'s timer tick: "fast" is not a number.');
  const missing = evaluateRule(labelled, facts({ linux: true }));
  assert.deepEqual([missing.message, missing.engineReason], ["Cannot decide: the kernel's timer tick: not collected on this host.", 'kernel.hz was not collected']);
  assert.equal(evaluateRule(labelled, facts({ linux: false })).message, 'Not applicable here: a Linux host: no.');
  assert.equal(evaluateRule(labelled, facts({ linux: true, 'kernel.hz': 250 })).engineReason, undefined, 'a fail has no engine reason');
});

test('overrides change severity, weight and params, or disable a rule', () => {
  const located = { file: 'o.yaml', line: 1 };
  const [changed] = applyOverrides([{ ...baseRule }], [{ id: 'tick', severity: 'info', weight: 1, params: { minHz: 250 }, ...located }]);
  assert.deepEqual([changed?.severity, changed?.weight, changed?.params.minHz], ['info', 1, 250]);
  assert.equal(evaluateRule(changed as EffectiveRule, facts({ linux: true, 'kernel.hz': 250 })).status, 'pass');
  assert.deepEqual(applyOverrides([{ ...baseRule }], [{ id: 'tick', disabled: true, ...located }]), []);
});

test('templates render lists, null and unknown facts readably', () => {
  const set = facts({ chain: ['a', 'b'], none: null, gone: 'UNKNOWN' });
  assert.equal(renderTemplate('{{chain}} / {{none}} / {{gone}} / {{missing}} / {{params.x}}', set, { x: [1, 2] }), 'a, b / none / ? / ? / 1, 2');
});

test('score: weight × severity points per failing rule, nothing for unknown; grades by tens, capped by the worst failing severity', () => {
  const finding = (scoreImpact: number) => ({ scoreImpact }) as never;
  assert.equal(scoreOf([finding(15), finding(5), finding(2.5)]), 78);
  assert.equal(scoreOf([finding(90), finding(45)]), 0);
  assert.deepEqual([90, 89, 70, 60, 59].map((score) => gradeOf(score)), ['A', 'B', 'C', 'D', 'F']);
  assert.deepEqual([gradeOf(100, 'info'), gradeOf(95, 'warning'), gradeOf(95, 'critical'), gradeOf(40, 'critical')], ['A', 'B', 'C', 'F']);
  assert.equal(scoreImpact('unknown', 'critical', 4), 0, 'could not check is coverage, not a failure');
  assert.equal(scoreImpact('fail', 'critical', 4), 60);
  assert.deepEqual(parseVersion('v1.30.2+k3s1'), [1, 30, 2]);
});

test('coverage: decided of the rules that apply, and the critical ones undecided', () => {
  const f = (status: Finding['status'], severity: Finding['severity'] = 'warning') => ({ status, severity });
  const coverage = coverageOf([f('pass'), f('fail'), f('unknown', 'critical'), f('unknown'), f('not-applicable')]);
  assert.deepEqual(coverage, { decided: 2, applicable: 4, unknown: 2, criticalUnknown: 1 });
  assert.equal(coverageText(coverage), 'checked 2 of 4 rules (1 critical undecided)');
  assert.equal(coverageText(coverageOf([f('pass'), f('not-applicable')])), 'checked 1 of 1 rule');
  assert.equal(coverageText(coverageOf([f('not-applicable')])), 'no rule applies');
});

test('{{params.name[fact]}} renders the param chosen by the fact value; unknown fact or no such param gives ?', () => {
  const params = { governedBy_creation: 'cpu-governor, kernel-tick-rate', governedBy_scheduling: 'scheduler-api-qps' };
  const template = 'largest: {{phase}}, see {{params.governedBy[phase]}}';
  assert.equal(renderTemplate(template, facts({ phase: 'creation' }), params), 'largest: creation, see cpu-governor, kernel-tick-rate');
  assert.equal(renderTemplate(template, facts({ phase: 'UNKNOWN' }), params), 'largest: ?, see ?');
  assert.equal(renderTemplate(template, facts({ phase: 'readiness' }), params), 'largest: readiness, see ?');
});

test('two leaves on the same unknown fact give its reason once (etcd-io-priority said it twice)', () => {
  const condition: Condition = { any: [
    { fact: 'io.class', op: 'In', values: ['none', 'idle'] },
    { all: [{ fact: 'io.class', op: 'In', values: ['best-effort'] }, { fact: 'io.level', op: 'Gt', value: 0 }] },
  ] };
  assert.deepEqual(evaluate(condition, facts({ 'io.class': 'UNKNOWN', 'io.level': 'UNKNOWN' }), {}).reasons,
    ['io.class is unknown: could not read it', 'io.level is unknown: could not read it']);
});
