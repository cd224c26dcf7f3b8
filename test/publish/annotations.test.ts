import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  FINDINGS_KEY, MAX_TOTAL_BYTES, REPORT_KEY, SUMMARY_KEY, diffAnnotations, warnedRulesOnNode,
  parseAnnotations, renderAnnotations, totalBytes,
} from '../../src/wire/annotations.ts';
import { transitions } from '../../src/publish/events.ts';
import { byteLength, truncateBytes } from '../../src/text/bytes.ts';
import type { Finding, FindingStatus, Severity } from '../../src/report/types.ts';
import { finding, report, seedReport } from '../helpers/reports.ts';

test('summary fits on the key line of kubectl describe (key + value ≤ 138 bytes)', () => {
  const rendered = renderAnnotations(seedReport());
  const summary = rendered[SUMMARY_KEY] as string;
  assert.equal(summary, '73/100 C: 3 failing, 1 unknown; hz=250 gov=powersave');
  assert.ok(byteLength(SUMMARY_KEY) + byteLength(summary) <= 138);
});

test('findings list non-passing rules, most severe first, failing before unknown, one line each with the short fix', () => {
  const lines = (renderAnnotations(seedReport())[FINDINGS_KEY] as string).split('\n');
  assert.deepEqual(lines.map((l) => l.split(':')[0]), [
    'CRIT etcd-fsync-latency', 'WARN cpu-governor', 'WARN kernel-tick-rate', 'UNKN tuned-profile',
  ]);
  assert.equal(lines[0], "CRIT etcd-fsync-latency: fsync p99 18.2 ms on sdb (rotational); want p99 ≤ 10 ms — move etcd's data dir to SSD/NVMe");
  assert.equal(lines[2], 'WARN kernel-tick-rate: CONFIG_HZ=250; want CONFIG_HZ=1000 — fix kernel-tick-rate quickly');
  assert.equal(lines[3], 'UNKN tuned-profile: cannot read the fact behind tuned-profile');
  for (const line of lines) assert.ok(byteLength(line) <= 138 && !line.includes('…'), line);
});

test('a long multi-byte observed value is cut on a character boundary; "want" goes first and the fix is never cut', () => {
  const long = finding('x', 'fail', { observed: 'ü'.repeat(200), remediation: { summary: 'ß'.repeat(20), text: '', commands: [] } });
  const line = (renderAnnotations(report([long]))[FINDINGS_KEY] as string);
  assert.ok(byteLength(line) <= 138 && byteLength(line) > 130, `${byteLength(line)}`);
  assert.ok(line.endsWith(` — ${'ß'.repeat(20)}`) && line.includes('ü… — ') && !line.includes('want') && !line.includes('\uFFFD'), line);
  assert.equal(truncateBytes('abc', 3), 'abc');
});

test('report annotation (version 2): head, then one line per failing or unknown rule; passing rules are counts', () => {
  const rendered = renderAnnotations(seedReport());
  const lines = (rendered[REPORT_KEY] as string).split('\n');
  assert.equal(lines.length, 1 + 4);
  const parsed = JSON.parse(rendered[REPORT_KEY] as string);
  assert.deepEqual({ ...parsed, rules: undefined }, {
    schemaVersion: 2, score: 73, grade: 'C', counts: { pass: 1, fail: 3, unknown: 1, 'not-applicable': 1 }, rules: undefined,
  });
  assert.deepEqual(parsed.rules[0], { rule: 'etcd-fsync-latency', status: 'fail', severity: 'critical', observed: 'fsync p99 18.2 ms on sdb (rotational)' });
  assert.deepEqual(parsed.rules[3], { rule: 'tuned-profile', status: 'unknown', severity: 'info' });
  assert.deepEqual([...warnedRulesOnNode(rendered)], [['etcd-fsync-latency', 'critical'], ['cpu-governor', 'warning'], ['kernel-tick-rate', 'warning']]);
  assert.equal(warnedRulesOnNode({ [REPORT_KEY]: '{broken' }).size, 0);
});

test('a node where nothing fails: summary and a one-line report, each on its key line in kubectl describe', () => {
  const healthy = report([finding('a', 'pass'), finding('b', 'not-applicable'), ...Array.from({ length: 98 }, (_, i) => finding(`p${i}`, 'pass'))]);
  const rendered = renderAnnotations(healthy);
  assert.deepEqual(Object.keys(rendered).sort(), [REPORT_KEY, SUMMARY_KEY]);
  for (const key of [REPORT_KEY, SUMMARY_KEY]) {
    assert.ok(!(rendered[key] as string).includes('\n') && byteLength(key) + byteLength(rendered[key] as string) <= 138, rendered[key]);
  }
  assert.deepEqual(JSON.parse(rendered[REPORT_KEY] as string), {
    schemaVersion: 2, score: 100, grade: 'A', counts: { pass: 99, fail: 0, unknown: 0, 'not-applicable': 1 },
  });
});

test('the previous release\'s annotation (version 1, every rule listed) still reads, so a rollout sends no duplicate Events', () => {
  // As an agent of the previous release wrote it on a node (kubectl get node -o yaml, shortened to four rules).
  const v1 = [
    '{"schemaVersion":1,"score":13,"grade":"F","counts":{"fail":1,"unknown":1,"pass":1,"not-applicable":1},"omitted":0,"rules":[',
    '{"rule":"kubelet-api-qps","status":"fail","severity":"warning","category":"api-client","observed":"kubeAPIQPS 5, kubeAPIBurst 10 (ku…"},',
    '{"rule":"kernel-tick-rate","status":"unknown","severity":"warning","category":"kernel","observed":"CONFIG_HZ=?"},',
    '{"rule":"controller-manager-api-qps","status":"pass","severity":"warning","category":"api-client"},',
    '{"rule":"cpu-governor","status":"not-applicable","severity":"warning","category":"cpu"}',
    ']}',
  ].join('\n');
  const parsed = parseAnnotations({ [REPORT_KEY]: v1 });
  assert.equal(parsed.state, 'ok');
  assert.equal(parsed.state === 'ok' && parsed.report.rules.length, 4);
  assert.deepEqual([...warnedRulesOnNode({ [REPORT_KEY]: v1 })], [['kubelet-api-qps', 'warning']]);
  const next = renderAnnotations(report([finding('kubelet-api-qps', 'fail'), finding('kernel-tick-rate', 'unknown')]));
  assert.deepEqual(transitions(warnedRulesOnNode({ [REPORT_KEY]: v1 }), report([finding('kubelet-api-qps', 'fail')])), []);
  assert.equal(parseAnnotations(next).state, 'ok');
  assert.match((parseAnnotations({ [REPORT_KEY]: '{"schemaVersion":3}' }) as { reason: string }).reason, /schemaVersion 3; this version reads 1 and 2/);
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
  assert.deepEqual(Object.keys(patch ?? {}).sort(), [FINDINGS_KEY, REPORT_KEY, SUMMARY_KEY, 'node-tuning-advisor.io/rule.gone'].sort());
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
  remediation: { summary: r.fix, text: r.fix, commands: [] },
}));

test('property: any report renders within every byte limit and as valid JSON', () => {
  fc.assert(fc.property(fc.uniqueArray(findingArb, { maxLength: 150, selector: (f) => f.ruleId }), (findings) => {
    const rendered = renderAnnotations(report(findings));
    assert.ok(totalBytes(rendered) <= MAX_TOTAL_BYTES, `total ${totalBytes(rendered)}`);
    for (const value of [rendered[SUMMARY_KEY], rendered[FINDINGS_KEY], rendered[REPORT_KEY]]) {
      for (const line of (value ?? '').split('\n')) assert.ok(byteLength(line) <= 138, line);
    }
    const parsed = JSON.parse(rendered[REPORT_KEY] as string);
    const nonPassing = findings.filter((f) => f.status === 'fail' || f.status === 'unknown').length;
    assert.equal((parsed.rules ?? []).length + (parsed.omitted ?? 0), nonPassing);
  }), { numRuns: 150 });
});
