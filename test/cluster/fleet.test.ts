// The fold over the Node list against the obvious computation on the whole list: whatever the
// nodes and the --limit, the bounded tally gives the same worst rows, groups, counts and fleet lines.
// The JSON stream against JSON.stringify of the whole document. Workload selectors as the API takes them.
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { FleetTally, MAX_EXAMPLES } from '../../src/cluster/fleet.ts';
import { failingRules, isStale, nodeRow, slimRow, worstFirst, type NodeRow } from '../../src/cluster/nodes.ts';
import { REPORT_KEY } from '../../src/wire/annotations.ts';
import { judge, scoreImpact } from '../../src/report/score.ts';
import { finding } from '../helpers/reports.ts';
import { TopN } from '../../src/cluster/top.ts';
import { selectorString } from '../../src/cluster/workloads.ts';
import { parse } from 'yaml';
import { ClusterReportStream } from '../../src/publish/cluster-stream.ts';

const RULES = ['kernel-tick-rate', 'cpu-governor', 'etcd-fsync-latency', 'tuned-profile'] as const;
const SEVERITY = { 'kernel-tick-rate': 'warning', 'cpu-governor': 'warning', 'etcd-fsync-latency': 'critical', 'tuned-profile': 'info' } as const;

const rowArb: fc.Arbitrary<Omit<NodeRow, 'name'>> = fc.oneof(
  { weight: 8, arbitrary: fc.record({ score: fc.integer({ min: 0, max: 100 }), failing: fc.subarray([...RULES]), roles: fc.subarray(['control-plane', 'worker', 'infra'], { minLength: 1 }),
    heartbeat: fc.constantFrom('current', 'stale', 'unknown') })
    .map(({ score, failing, roles, heartbeat }) => ({
      roles, agent: 'ok' as const, heartbeat: { state: heartbeat, reason: heartbeat },
      report: {
        schemaVersion: 1, score, grade: score >= 90 ? 'A' as const : score >= 80 ? 'B' as const : score >= 70 ? 'C' as const : score >= 60 ? 'D' as const : 'F' as const,
        counts: { pass: 1, fail: failing.length, unknown: 0, 'not-applicable': 0 }, omitted: 0,
        rules: [...failing.map((rule) => ({ rule, status: 'fail' as const, severity: SEVERITY[rule], category: 'x' })), { rule: 'ok-rule', status: 'pass' as const, severity: 'info' as const, category: 'x' }],
      },
    })) },
  { weight: 1, arbitrary: fc.constant({ roles: ['worker'], agent: 'none' as const }).map((r) => ({ ...r, roles: [...r.roles] })) },
  { weight: 1, arbitrary: fc.constant({ roles: ['worker'], agent: 'unreadable' as const, problem: 'not JSON' }).map((r) => ({ ...r, roles: [...r.roles] })) },
);
const fleetArb = fc.array(rowArb, { maxLength: 60 }).map((rows) => rows.map((r, i) => ({ ...r, name: `node-${String(i).padStart(3, '0')}` }) as NodeRow));

describe('FleetTally: the fold equals the computation over the whole list', () => {
  it('worst rows, groups, summary and fleet lines for any fleet and --limit', () => {
    fc.assert(fc.property(fleetArb, fc.integer({ min: 0, max: 70 }), (rows, limit) => {
      const tally = new FleetTally({ limit });
      for (const row of rows) tally.add(row);
      const sorted = [...rows].sort(worstFirst);
      assert.deepEqual(tally.worstRows(), sorted.slice(0, limit).map(slimRow));
      const rest = sorted.slice(limit);
      assert.equal(tally.rest().reduce((n, g) => n + g.count, 0), rest.length, 'every other node in one group');
      for (const group of tally.rest()) {
        const members = rest.filter((r) => r.agent === group.agent && r.report?.grade === group.grade && isStale(r) === (group.stale === true)
          && (r.agent !== 'ok' || isStale(r) || failingRules(r).map((e) => e.rule).sort().join() === group.failing.join()));
        assert.equal(group.count, members.length, group.text);
      }
      // Stale reports are counted apart and in nothing else; an unknown heartbeat counts as current.
      const reporting = rows.filter((r) => r.agent === 'ok' && !isStale(r));
      assert.equal(tally.summary.stale, rows.filter(isStale).length);
      assert.equal(tally.summary.withAgent, reporting.length);
      const ranks = tally.worstRows().map((r) => (r.agent === 'ok' ? (isStale(r) ? 1 : 0) : 2));
      assert.deepEqual(ranks, [...ranks].sort(), 'current reports first, then stale ones, then the rest');
      assert.equal(tally.summary.noAgent, rows.filter((r) => r.agent === 'none').length);
      for (const line of tally.fleet()) {
        const failing = reporting.filter((r) => failingRules(r).some((e) => e.rule === line.rule));
        assert.equal(line.count, failing.length);
        assert.equal(line.of, reporting.length);
        assert.deepEqual(line.examples, failing.slice(0, MAX_EXAMPLES).map((r) => r.name));
        for (const role of line.roles) {
          assert.equal(role.count, failing.filter((r) => r.roles.includes(role.role)).length);
          assert.equal(role.of, reporting.filter((r) => r.roles.includes(role.role)).length);
        }
      }
      const critical = reporting.filter((r) => failingRules(r).some((e) => e.severity === 'critical')).length;
      assert.equal(tally.summary.failing.critical, critical);
    }), { numRuns: 300 });
  });

  it('groups read as an operator says them', () => {
    const tally = new FleetTally({ limit: 0 });
    const row = (name: string, score: number, failing: string[]): NodeRow => ({
      name, roles: ['worker'], agent: 'ok',
      report: { schemaVersion: 1, score, grade: score >= 90 ? 'A' : 'B', counts: { pass: 0, fail: 0, unknown: 0, 'not-applicable': 0 }, omitted: 0, rules: failing.map((rule) => ({ rule, status: 'fail', severity: 'warning', category: 'kernel' })) },
    });
    for (let i = 0; i < 4812; i++) tally.add(row(`a-${i}`, 100, []));
    tally.add(row('b-1', 85, ['kernel-tick-rate']));
    tally.add({ name: 'c-1', roles: ['worker'], agent: 'none' });
    tally.add({ ...row('d-1', 40, ['kernel-tick-rate']), heartbeat: { state: 'stale', reason: 'x' } });
    assert.deepEqual(tally.rest().map((g) => g.text), ['1 node grade B, failing kernel-tick-rate', '4 812 nodes grade A, no failing rule',
      '1 node stale (no heartbeat from the agent), last published grade B', '1 node without agent (no report annotation)']);
    assert.equal(tally.fleet()[0]?.text, 'kernel-tick-rate on 1/4 813 worker nodes');
  });
});

describe('a compromised agent\'s annotation (issue 37 item 3)', () => {
  /** A worker Node as report lists it, its report annotation naming these failing rules (as the agent writes v2). */
  const worker = (name: string, rules: { rule: string; severity: string }[]): NodeRow => nodeRow({
    metadata: {
      name, labels: {},
      annotations: { [REPORT_KEY]: JSON.stringify({ schemaVersion: 2, score: 10, grade: 'F', counts: { pass: 0, fail: rules.length, unknown: 0, 'not-applicable': 0 }, rules: rules.map((r) => ({ ...r, status: 'fail' })) }) },
    },
  });
  const ruleSet = new Map([['kubelet-api-qps', { severity: 'warning' as const, category: 'api-client' }], ['etcd-fsync-latency', { severity: 'critical' as const, category: 'etcd' }]]);

  it('one rule repeated 110 times counts once per node; severity and category are the rule set\'s, not the first node\'s', () => {
    const tally = new FleetTally({ limit: 10, ruleOf: (rule) => ruleSet.get(rule) });
    // Sorted first, it names a warning rule 110 times as critical and a real critical as info.
    tally.add(worker('aaa-forged', [...Array.from({ length: 110 }, () => ({ rule: 'kubelet-api-qps', severity: 'critical' })), { rule: 'etcd-fsync-latency', severity: 'info' }]));
    tally.add(worker('worker-1', [{ rule: 'etcd-fsync-latency', severity: 'critical' }]));
    const fleet = tally.fleet().map(({ rule, severity, category, count, of, text }) => ({ rule, severity, category, count, of, text }));
    assert.deepEqual(fleet, [
      { rule: 'etcd-fsync-latency', severity: 'critical', category: 'etcd', count: 2, of: 2, text: 'etcd-fsync-latency on 2/2 worker nodes' },
      { rule: 'kubelet-api-qps', severity: 'warning', category: 'api-client', count: 1, of: 2, text: 'kubelet-api-qps on 1/2 worker nodes' },
    ]);
    assert.deepEqual(tally.summary.failing, { critical: 2, warning: 1, info: 0 });
    assert.deepEqual(failingRules(tally.worstRows()[0] as NodeRow).map((e) => e.rule), ['kubelet-api-qps', 'etcd-fsync-latency'], 'the row lists each rule once');
  });
});

describe('TopN keeps the first N in order', () => {
  it('as sorting and slicing would, and hands back what falls out', () => {
    fc.assert(fc.property(fc.array(fc.integer()), fc.integer({ min: 0, max: 20 }), (items, n) => {
      const top = new TopN<number>(n, (a, b) => a - b);
      const out: number[] = [];
      for (const item of items) { const dropped = top.offer(item); if (dropped !== undefined) out.push(dropped); }
      const sorted = [...items].sort((a, b) => a - b);
      assert.deepEqual(top.sorted(), sorted.slice(0, n));
      assert.deepEqual(out.sort((a, b) => a - b), sorted.slice(n));
    }));
  });
});

describe('the JSON and YAML streams', () => {
  it('JSON: exactly JSON.stringify(document, null, 2); YAML: the same document; one node held at a time', async () => {
    await fc.assert(fc.asyncProperty(fc.constantFrom('json' as const, 'yaml' as const), fc.array(fc.jsonValue(), { maxLength: 5 }), fc.dictionary(fc.stringMatching(/^[a-z][a-zA-Z]{0,9}$/), fc.jsonValue(), { minKeys: 1, maxKeys: 4 }), async (format, nodes, tail) => {
      const out = new PassThrough();
      const chunks: Buffer[] = [];
      out.on('data', (c: Buffer) => chunks.push(c));
      const head = { schemaVersion: 2, kind: 'ClusterReport', selector: null };
      const stream = new ClusterReportStream(out, format, head);
      for (const node of nodes) await stream.node(node as unknown as NodeRow);
      const safeTail = Object.fromEntries(Object.entries(tail).filter(([k]) => !(k in head) && k !== 'nodes'));
      await stream.finish(safeTail);
      const text = Buffer.concat(chunks).toString('utf8');
      const whole = { ...head, nodes, ...safeTail };
      if (format === 'json') assert.equal(text, `${JSON.stringify(whole, null, 2)}\n`);
      else assert.deepEqual(parse(text), JSON.parse(JSON.stringify(whole)));
    }), { numRuns: 200, examples: [['yaml', [{ '': -0 }], { a: {} }]] });
  });

  it('a node list that broke off still ends as valid JSON, with the reason', async () => {
    const out = new PassThrough();
    const chunks: Buffer[] = [];
    out.on('data', (c: Buffer) => chunks.push(c));
    const stream = new ClusterReportStream(out, 'json', { kind: 'ClusterReport' });
    await stream.node({ name: 'a' } as NodeRow);
    await stream.abort('cannot list nodes: HTTP 500');
    assert.deepEqual(JSON.parse(Buffer.concat(chunks).toString('utf8')), { kind: 'ClusterReport', nodes: [{ name: 'a' }], error: 'cannot list nodes: HTTP 500' });
  });
});

describe('a workload\'s selector as a labelSelector query', () => {
  it('matchLabels and every matchExpressions operator', () => {
    assert.deepEqual(selectorString({ matchLabels: { app: 'ebs-csi-controller', 'app.kubernetes.io/name': 'x' }, matchExpressions: [
      { key: 'tier', operator: 'In', values: ['a', 'b'] }, { key: 'env', operator: 'NotIn', values: ['dev'] }, { key: 'k', operator: 'Exists' }, { key: 'gone', operator: 'DoesNotExist' },
    ] }), { selector: 'app=ebs-csi-controller,app.kubernetes.io/name=x,tier in (a,b),env notin (dev),k,!gone' });
  });
  it('an empty or hostile selector is refused with the reason, never sent', () => {
    assert.deepEqual(selectorString({}), { problem: 'its selector is empty' });
    assert.ok('problem' in selectorString({ matchLabels: { app: 'x,y=z' } }));
    assert.ok('problem' in selectorString({ matchExpressions: [{ key: 'a', operator: 'Gt', values: ['1'] }] }));
    fc.assert(fc.property(fc.anything(), (garbage) => {
      const result = selectorString(garbage);
      if ('selector' in result) assert.match(result.selector, /^[A-Za-z0-9_./,=!() -]+$/);
    }));
  });
});

describe('report orders nodes by what fails on them, then score: unknown never outranks broken', () => {
  const row = (name: string, entries: { rule: string; status: 'fail' | 'unknown'; severity: 'info' | 'warning' | 'critical' }[]): NodeRow => {
    const findings = entries.map((e) => finding(e.rule, e.status, { severity: e.severity, scoreImpact: scoreImpact(e.status, e.severity, 3) }));
    const judged = judge(findings);
    const counts = { pass: 5, fail: findings.filter((f) => f.status === 'fail').length, unknown: findings.filter((f) => f.status === 'unknown').length, 'not-applicable': 0 };
    return { name, roles: ['worker'], agent: 'ok', report: { schemaVersion: 2, score: judged.score, grade: judged.grade, counts, omitted: 0, rules: entries.map((e) => ({ ...e })) } };
  };
  it('2 failing infos and 9 unknowns rank below the node that breached the SLO; a critical first', () => {
    const unreadable = row('mostly-unknown', [
      { rule: 'image-pull-serialized', status: 'fail', severity: 'info' }, { rule: 'etcd-events-split', status: 'fail', severity: 'info' },
      ...Array.from({ length: 9 }, (_, i) => ({ rule: `unknown-${i}`, status: 'unknown' as const, severity: 'critical' as const })),
    ]);
    const slo = row('slo-breached', [{ rule: 'pod-startup-slo', status: 'fail', severity: 'warning' }]);
    const critical = row('etcd-slow', [{ rule: 'etcd-fsync-latency', status: 'fail', severity: 'critical' }]);
    const clean = row('clean', []);
    assert.deepEqual([clean, unreadable, slo, critical].sort(worstFirst).map((r) => r.name), ['etcd-slow', 'slo-breached', 'mostly-unknown', 'clean']);
    assert.ok((unreadable.report?.score ?? 0) > (slo.report?.score ?? 100), 'unknowns take no points');
    assert.deepEqual([clean.report?.grade, slo.report?.grade, critical.report?.grade], ['A', 'B', 'F']);
  });
});
