import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  FINDINGS_KEY, MAX_TOTAL_BYTES, REPORT_KEY, SUMMARY_KEY, diffAnnotations, failingRulesOnNode,
  renderAnnotations, totalBytes,
} from '../../src/publish/annotations.ts';
import { FACTS_KEY } from '../../src/publish/fact-annotation.ts';
import { byteLength, truncateBytes } from '../../src/publish/text-bytes.ts';
import type { Finding, FindingStatus, Severity } from '../../src/report/types.ts';
import { finding, report, seedReport } from '../helpers/reports.ts';

test('summary fits on the key line of kubectl describe (key + value ≤ 138 bytes)', () => {
  const rendered = renderAnnotations(seedReport());
  const summary = rendered[SUMMARY_KEY] as string;
  assert.equal(summary, 'score 73/100 grade C: 1 critical, 2 warning, 0 info failing; 1 unknown, 1 pass');
  assert.ok(byteLength(SUMMARY_KEY) + byteLength(summary) <= 138);
});

test('findings list non-passing rules, most severe first, failing before unknown, one line each', () => {
  const lines = (renderAnnotations(seedReport())[FINDINGS_KEY] as string).split('\n');
  assert.deepEqual(lines.map((l) => l.split(':')[0]), [
    'CRIT etcd-fsync-latency', 'WARN cpu-governor', 'WARN kernel-tick-rate', 'UNKN tuned-profile',
  ]);
  assert.equal(lines[2], 'WARN kernel-tick-rate: CONFIG_HZ=250; want CONFIG_HZ=1000 — fix kernel-tick-rate');
  for (const line of lines) assert.ok(byteLength(line) <= 138, line);
});

test('a long multi-byte line is cut to 138 bytes on a character boundary', () => {
  const long = finding('x', 'fail', { observed: 'ü'.repeat(200) });
  const line = (renderAnnotations(report([long]))[FINDINGS_KEY] as string);
  assert.ok(byteLength(line) <= 138 && byteLength(line) > 130, `${byteLength(line)}`);
  assert.ok(line.endsWith('…') && !line.includes('\uFFFD'));
  assert.equal(truncateBytes('abc', 3), 'abc');
});

test('report annotation is JSON with every rule; failing state reads back from it', () => {
  const rendered = renderAnnotations(seedReport());
  const parsed = JSON.parse(rendered[REPORT_KEY] as string);
  assert.equal(parsed.score, 73);
  assert.equal(parsed.rules.length, 6);
  assert.deepEqual(parsed.rules[0], { rule: 'etcd-fsync-latency', status: 'fail', severity: 'critical', category: 'etcd', observed: 'fsync p99 18.2 ms on sdb (rotational)' });
  assert.deepEqual([...failingRulesOnNode(rendered)], [['etcd-fsync-latency', 'critical'], ['cpu-governor', 'warning'], ['kernel-tick-rate', 'warning']]);
  assert.equal(failingRulesOnNode({ [REPORT_KEY]: '{broken' }).size, 0);
});

test('nothing in the annotations changes when only the scan time changes', () => {
  const a = renderAnnotations(seedReport());
  const b = renderAnnotations({ ...seedReport(), generatedAt: '2027-01-01T00:00:00Z' });
  assert.deepEqual(a, b);
});

test('diff: no patch when equal; changed keys set; stale keys of our prefix nulled; foreign keys untouched', () => {
  const desired = renderAnnotations(seedReport());
  const foreign = { 'kubeadm.alpha.kubernetes.io/cri-socket': 'unix:///run/containerd/containerd.sock' };
  assert.equal(diffAnnotations(desired, { ...desired, ...foreign }), undefined);
  const patch = diffAnnotations(desired, { ...foreign, [SUMMARY_KEY]: 'old', 'node-tuning-advisor.io/rule.gone': 'x' });
  assert.deepEqual(Object.keys(patch ?? {}).sort(), [FACTS_KEY, FINDINGS_KEY, REPORT_KEY, SUMMARY_KEY, 'node-tuning-advisor.io/rule.gone'].sort());
  assert.equal(patch?.['node-tuning-advisor.io/rule.gone'], null);
  const allPass = renderAnnotations(report([finding('a', 'pass')]));
  assert.equal(diffAnnotations(allPass, desired)?.[FINDINGS_KEY], null);
});

const statusArb = fc.constantFrom<FindingStatus>('pass', 'fail', 'unknown', 'not-applicable');
const severityArb = fc.constantFrom<Severity>('info', 'warning', 'critical');
const textArb = fc.string({ unit: 'binary', maxLength: 300 });
const findingArb: fc.Arbitrary<Finding> = fc.record({
  id: fc.stringMatching(/^[a-z][a-z0-9-]{0,40}$/), status: statusArb, severity: severityArb,
  observed: textArb, expected: textArb, message: textArb, fix: textArb,
}).map((r) => finding(r.id, r.status, {
  severity: r.severity, observed: r.observed, expected: r.expected, message: r.message,
  remediation: { text: r.fix, commands: [] },
}));

test('property: any report renders within every byte limit and as valid JSON', () => {
  fc.assert(fc.property(fc.uniqueArray(findingArb, { maxLength: 150, selector: (f) => f.ruleId }), (findings) => {
    const rendered = renderAnnotations(report(findings));
    assert.ok(totalBytes(rendered) <= MAX_TOTAL_BYTES, `total ${totalBytes(rendered)}`);
    assert.ok(byteLength(SUMMARY_KEY) + byteLength(rendered[SUMMARY_KEY] as string) <= 138);
    for (const value of [rendered[FINDINGS_KEY], rendered[REPORT_KEY]]) {
      for (const line of (value ?? '').split('\n')) assert.ok(byteLength(line) <= 138, line);
    }
    const parsed = JSON.parse(rendered[REPORT_KEY] as string);
    assert.equal(parsed.rules.length + parsed.omitted, findings.length);
  }), { numRuns: 150 });
});
