import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runScan } from '../../src/scan.ts';
import type { FindingStatus } from '../../src/report/types.ts';
import { fixtureHost } from '../helpers/fixtures.ts';

// These fixtures exercise the host rules; rules/etcd.yaml has its own tests (test/unit/etcd-rules.test.ts).
const HOST_RULES = ['kernel-tick-rate', 'cpu-governor', 'tuned-profile'];

async function statuses(host: string) {
  const report = await runScan({ hostRoot: fixtureHost(host), sleep: async () => {}, only: HOST_RULES });
  const byRule = Object.fromEntries(report.findings.map((finding) => [finding.ruleId, finding.status])) as Record<string, FindingStatus>;
  return { report, byRule };
}

test('Intel intel_pstate powersave + EPP power: governor and tick fail, tuned not applicable; score 80 (B)', async () => {
  const { report, byRule } = await statuses('intel-pstate-epp-power');
  assert.deepEqual(byRule, { 'cpu-governor': 'fail', 'kernel-tick-rate': 'fail', 'tuned-profile': 'not-applicable' });
  assert.deepEqual([report.score, report.grade, report.node], [80, 'B', 'build-node-01']);
  const governor = report.findings.find((finding) => finding.ruleId === 'cpu-governor');
  assert.equal(governor?.observed, 'governor powersave, driver intel_pstate, EPP power');
  assert.ok(governor?.remediation.commands.includes('tuned-adm profile throughput-performance'));
});

test('intel_pstate powersave with EPP performance passes the governor rule (adaptive driver)', async () => {
  const { report, byRule } = await statuses('intel-pstate-epp-performance');
  assert.equal(byRule['cpu-governor'], 'pass');
  assert.equal(report.score, 95);
});

test('AMD acpi-cpufreq ondemand with tuned balanced: governor and tuned fail; score 70 (C)', async () => {
  const { report, byRule } = await statuses('amd-acpi-cpufreq-ondemand');
  assert.deepEqual(byRule, { 'cpu-governor': 'fail', 'tuned-profile': 'fail', 'kernel-tick-rate': 'fail' });
  assert.deepEqual([report.score, report.grade], [70, 'C']);
});

test('mixed governors fail, and the finding shows which policy runs what', async () => {
  const { report, byRule } = await statuses('mixed-governors');
  assert.equal(byRule['cpu-governor'], 'fail');
  const evidence = report.findings.find((finding) => finding.ruleId === 'cpu-governor')?.evidence.find((item) => item.fact === 'cpu.governor');
  assert.equal(evidence?.detail, 'performance on policy0,policy1; powersave on policy2,policy3');
});

test('a VM without cpufreq: governor not applicable, tick still judged', async () => {
  const { report, byRule } = await statuses('vm-no-cpufreq');
  assert.deepEqual(byRule, { 'kernel-tick-rate': 'fail', 'cpu-governor': 'not-applicable', 'tuned-profile': 'not-applicable' });
  assert.equal(report.findings.find((finding) => finding.ruleId === 'cpu-governor')?.message, 'Not applicable here: a virtual machine: yes; CPU frequency scaling (cpufreq): no.');
});

test('RHEL-like host with HZ=1000 and two merged tuned profiles passes everything: 100 (A)', async () => {
  const { report, byRule } = await statuses('rhel-hz1000-tuned-merged');
  assert.deepEqual(byRule, { 'cpu-governor': 'pass', 'kernel-tick-rate': 'pass', 'tuned-profile': 'pass' });
  assert.deepEqual([report.score, report.grade], [100, 'A']);
  assert.equal(report.facts['node.role']?.value, 'control-plane');
});

test('no kernel config: the tick rule is unknown (coverage, not points), never a pass; a dead tuned daemon fails', async () => {
  const { report, byRule } = await statuses('no-kernel-config');
  assert.deepEqual(byRule, { 'tuned-profile': 'fail', 'kernel-tick-rate': 'unknown', 'cpu-governor': 'not-applicable' });
  assert.deepEqual([report.score, report.grade], [90, 'B'], 'a failing warning caps the grade at B');
  assert.deepEqual(report.counts, { fail: 1, unknown: 1, pass: 0, 'not-applicable': 1 });
  assert.deepEqual(report.coverage, { decided: 1, applicable: 2, unknown: 1, criticalUnknown: 0 });
});

test('the JSON report has the documented top-level shape', async () => {
  const { report } = await statuses('vm-no-cpufreq');
  assert.deepEqual(Object.keys(report).sort(), ['counts', 'coverage', 'facts', 'findings', 'generatedAt', 'grade', 'hostRoot', 'node', 'schemaVersion', 'score']);
  assert.deepEqual(Object.keys(report.findings[0] ?? {}).sort(), [
    'category', 'evidence', 'expected', 'message', 'observed', 'references', 'remediation', 'ruleId', 'scoreImpact', 'severity', 'status', 'title', 'weight',
  ]);
  assert.equal(report.schemaVersion, 1);
});
