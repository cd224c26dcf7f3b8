import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { affinityMode } from '../../src/cluster/tekton.ts';
import { attachFor } from '../../src/cluster/storage.ts';
import { parseAnnotations, renderAnnotations, REPORT_KEY } from '../../src/wire/annotations.ts';
import { nodeRow } from '../../src/cluster/nodes.ts';
import { EventsSplitTally } from '../../src/cluster/report.ts';
import { FactSet } from '../../src/facts/fact-set.ts';
import { nodeLines } from '../../src/publish/cluster-report.ts';
import { scopeErrors } from '../../src/rules/validate.ts';
import { loadRuleSet } from '../../src/rules/rule-set.ts';
import { finding, report, seedReport } from '../helpers/reports.ts';

describe('affinity-assistant mode (Tekton GetAffinityAssistantBehavior)', () => {
  const cases: [Record<string, string>, string][] = [
    [{}, 'per-workspace'],
    [{ 'disable-affinity-assistant': 'false', coschedule: 'workspaces' }, 'per-workspace'],
    [{ 'disable-affinity-assistant': 'true' }, 'disabled'],
    [{ 'disable-affinity-assistant': 'true', coschedule: 'workspaces' }, 'disabled'],
    [{ 'disable-affinity-assistant': 'true', coschedule: 'pipelineruns' }, 'per-pipelinerun'],
    [{ 'disable-affinity-assistant': 'true', coschedule: 'isolate-pipelinerun' }, 'isolate-pipelinerun'],
    [{ coschedule: 'disabled' }, 'disabled'],
    [{ coschedule: 'pipelineruns' }, 'per-pipelinerun'],
  ];
  for (const [data, mode] of cases) it(`${JSON.stringify(data)} → ${mode}`, () => assert.equal(affinityMode(data).mode, mode));
});

describe('attach requirement of a storage class', () => {
  const view = (drivers: object[]) => ({
    classes: { ok: true as const, value: [{ metadata: { name: 'ebs' }, provisioner: 'ebs.csi.aws.com' }, { metadata: { name: 'lp' }, provisioner: 'rancher.io/local-path' }] },
    drivers: { ok: true as const, value: drivers as Record<string, unknown>[] },
  });
  it('no CSIDriver object: unknown, never "no attach"', () => assert.equal(attachFor('ebs', view([])).attach, null));
  it('attachRequired false skips attach; unset attaches', () => {
    assert.equal(attachFor('ebs', view([{ metadata: { name: 'ebs.csi.aws.com' }, spec: { attachRequired: false } }])).attach, false);
    assert.equal(attachFor('ebs', view([{ metadata: { name: 'ebs.csi.aws.com' }, spec: {} }])).attach, true);
  });
  it('local-path does not attach; no default class is unknown', () => {
    assert.equal(attachFor('lp', view([])).attach, false);
    assert.equal(attachFor(undefined, view([])).attach, null);
  });
});

describe('annotations: the parser reads what the renderer writes', () => {
  it('round-trips score, grade, counts and every rule status', () => {
    const statuses = fc.constantFrom('pass' as const, 'fail' as const, 'unknown' as const, 'not-applicable' as const);
    const severities = fc.constantFrom('info' as const, 'warning' as const, 'critical' as const);
    fc.assert(fc.property(fc.uniqueArray(fc.tuple(fc.stringMatching(/^[a-z]{1,12}(-[a-z]{1,8}){0,3}$/), statuses, severities, fc.string({ maxLength: 300 })), { selector: (t) => t[0], maxLength: 40 }), (rules) => {
      const r = report(rules.map(([id, status, severity, observed]) => finding(id, status, { severity, observed, scoreImpact: status === 'fail' ? 1 : 0 })));
      const parsed = parseAnnotations(renderAnnotations(r));
      assert.equal(parsed.state, 'ok');
      if (parsed.state !== 'ok') return;
      assert.equal(parsed.report.score, r.score);
      assert.equal(parsed.report.grade, r.grade);
      assert.deepEqual(parsed.report.counts, r.counts);
      const failing = r.findings.filter((f) => f.status === 'fail').map((f) => f.ruleId).sort();
      const kept = parsed.report.rules.filter((e) => e.status === 'fail').map((e) => e.rule).sort();
      assert.equal(kept.length + parsed.report.omitted >= failing.length, true);
      for (const rule of kept) assert.ok(failing.includes(rule));
    }), { numRuns: 150 });
  });
  it('garbage is unreadable with a reason, never a crash', () => {
    fc.assert(fc.property(fc.oneof(fc.string(), fc.json()), (raw) => {
      const parsed = parseAnnotations({ [REPORT_KEY]: raw });
      assert.ok(parsed.state === 'unreadable' || parsed.state === 'ok');
    }), { numRuns: 300 });
    assert.equal(parseAnnotations({}).state, 'none');
    const newer = parseAnnotations({ [REPORT_KEY]: '{"schemaVersion":3}' });
    assert.equal(newer.state, 'unreadable');
    assert.match(newer.state === 'unreadable' ? newer.reason : '', /schemaVersion 3/);
    const empty = parseAnnotations({ [REPORT_KEY]: '{"schemaVersion":2}' });
    assert.match(empty.state === 'unreadable' ? empty.reason : '', /does not have the advisor's shape \(score, grade, counts, rules\)/);
    assert.equal(parseAnnotations(renderAnnotations(seedReport())).state, 'ok');
  });
});

describe('Events split, as the control-plane nodes\' agents published it', () => {
  const controlPlane = (name: string, annotations: Record<string, string>) =>
    nodeRow({ metadata: { name, labels: { 'node-role.kubernetes.io/control-plane': '' }, annotations } });
  const published = (split: boolean | undefined, rule: 'pass' | 'fail' | 'not-applicable') => {
    const r = report([finding('etcd-events-split', rule, { severity: 'info' })]);
    if (split !== undefined) r.facts = { ...r.facts, 'etcd.eventsSplit': { value: split, source: '/etc/kubernetes/manifests/kube-apiserver.yaml' } };
    return renderAnnotations(r);
  };
  const tally = (...rows: ReturnType<typeof nodeRow>[]) => {
    const events = new EventsSplitTally();
    rows.forEach((row) => events.add(row));
    const facts = new FactSet();
    events.facts(facts, { nodes: rows.length, withAgent: rows.length } as never, undefined);
    return facts.get('cluster.etcd.eventsSplit');
  };

  it('a split cluster reads as split: the passing rule is not in the report annotation, the summary says events=split', () => {
    const row = controlPlane('cp-1', published(true, 'pass'));
    assert.equal(row.report?.rules.some((e) => e.rule === 'etcd-events-split'), false, 'version 2 leaves passing rules out');
    assert.equal(row.eventsSplit, true);
    assert.deepEqual([tally(row)?.value, tally(row)?.detail], [true, 'cp-1: split']);
  });
  it('shared: from the token, or from the failing rule of an agent without tokens; external etcd (rule not applicable) still tells', () => {
    assert.equal(tally(controlPlane('cp-1', published(false, 'fail')))?.value, false);
    assert.equal(tally(controlPlane('cp-2', published(undefined, 'fail')))?.value, false);
    assert.equal(tally(controlPlane('cp-3', published(true, 'not-applicable')))?.value, true);
  });
  it('nobody could tell: unknown with the reason, never a pass', () => {
    const fact = tally(controlPlane('cp-1', published(undefined, 'pass')), nodeRow({ metadata: { name: 'w-1', annotations: published(true, 'pass') } }));
    assert.ok(fact?.unknown?.includes('events='), fact?.unknown);
  });
});

describe('rule scope', () => {
  const base = { id: 'x', title: 't', category: 'c', severity: 'info' as const, weight: 1, observed: '', expected: '', message: 'm', remediation: { summary: 'r', text: 'r' }, references: [{ seed: 's' }] };
  it('a node rule naming a cluster fact, or a cluster rule naming a node fact, is an error', () => {
    assert.match(scopeErrors({ ...base, failsWhen: { fact: 'cluster.nodes.count', op: 'Gt', value: 1 } }, [])[0]?.message ?? '', /give the rule scope: cluster/);
    assert.match(scopeErrors({ ...base, scope: 'cluster', failsWhen: { fact: 'kernel.hz', op: 'Gt', value: 1 } }, [])[0]?.message ?? '', /only cluster\.\* facts/);
    assert.match(scopeErrors({ ...base, scope: 'cluster', message: '{{kernel.hz}}', failsWhen: { fact: 'cluster.nodes.count', op: 'Gt', value: 1 } }, [])[0]?.message ?? '', /templates names kernel.hz/);
    assert.deepEqual(scopeErrors({ ...base, scope: 'cluster', failsWhen: { fact: 'cluster.nodes.count', op: 'Gt', value: 1 } }, []), []);
  });
  it('node scans load no cluster rule; report loads only cluster rules', async () => {
    const node = await loadRuleSet({ scope: 'node' });
    const cluster = await loadRuleSet({ scope: 'cluster' });
    assert.ok(node.length > 0 && cluster.length > 0);
    assert.ok(node.every((r) => (r.scope ?? 'node') === 'node'));
    assert.ok(cluster.every((r) => r.scope === 'cluster'));
    await assert.rejects(loadRuleSet({ scope: 'node', only: ['csi-provisioner-throttling'] }), /is not a node-scope rule/);
  });
});

describe('node table', () => {
  it('wraps a long node name, its roles and its failing rules inside their columns instead of cutting them', () => {
    const name = 'ip-10-0-113-27.eu-west-1.compute.internal';
    const rows = [{ metadata: { name, labels: { 'node-role.kubernetes.io/control-plane': '', 'node-role.kubernetes.io/etcd': '' },
      annotations: renderAnnotations(report(['etcd-fsync-latency', 'etcd-wal-fsync', 'etcd-disk-rotational', 'kernel-tick-rate'].map((id) => finding(id, 'fail')))) } }].map((n) => nodeRow(n));
    const lines = nodeLines(rows, 80);
    for (const line of lines) assert.ok([...line].length <= 80, line);
    assert.equal(lines.join(' ').includes('…'), false);
    const text = lines.slice(1).join('\n');
    for (const id of ['etcd-fsync-latency', 'etcd-wal-fsync', 'etcd-disk-rotational', 'kernel-tick-rate']) assert.match(text, new RegExp(id));
    assert.equal(lines.slice(1).map((l) => l.slice(0, 20).trim()).join(''), name);
  });
});
