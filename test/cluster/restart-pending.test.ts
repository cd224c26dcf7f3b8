// `report` counts the nodes whose agent published kubelet-restart-pending failing: once per node
// whatever the annotation lists, with the severity and category of report's own rule set, in the
// head line (table and markdown) and the JSON summary; nothing counted when the rule set lacks the rule.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FleetTally } from '../../src/cluster/fleet.ts';
import type { NodeRow } from '../../src/cluster/nodes.ts';
import type { ClusterReport } from '../../src/cluster/report.ts';
import type { RuleEntry } from '../../src/wire/annotations.ts';
import { judge } from '../../src/report/score.ts';
import { renderClusterMarkdown, renderClusterTable } from '../../src/publish/cluster-report.ts';

const PENDING = 'kubelet-restart-pending';
const RULE_SET = new Map([[PENDING, { severity: 'warning' as const, category: 'kubelet' }], ['kernel-tick-rate', { severity: 'warning' as const, category: 'kernel' }]]);

function node(name: string, rules: RuleEntry[]): NodeRow {
  return {
    name, roles: ['worker'], agent: 'ok',
    report: { schemaVersion: 2, score: 90, grade: 'A', counts: { pass: 0, fail: rules.length, unknown: 0, 'not-applicable': 0 }, omitted: 0, rules },
  };
}
const failing = (rule: string, extra: Partial<RuleEntry> = {}): RuleEntry => ({ rule, status: 'fail', severity: 'warning', ...extra });

function fold(rows: NodeRow[], ruleSet = RULE_SET): FleetTally {
  const tally = new FleetTally({ limit: 10, ruleOf: (rule) => ruleSet.get(rule) });
  for (const row of rows) tally.add(row);
  return tally;
}

function clusterReport(tally: FleetTally): ClusterReport {
  const { score, grade, coverage } = judge([]);
  return {
    schemaVersion: 2, kind: 'ClusterReport', generatedAt: '2026-12-07T00:00:00Z', selector: null, summary: tally.summary, nodes: tally.worstRows(), rest: tally.rest(), fleet: tally.fleet(),
    cluster: { score, grade, counts: { fail: 0, unknown: 0, pass: 0, 'not-applicable': 0 }, coverage, findings: [], facts: {} },
    api: { requests: 1, bytesReceived: 0, pageSize: 500, byResource: {}, bytesByResource: {}, failed: [], restarted: [] },
  };
}

describe('report: nodes with a kubelet restart pending', () => {
  it('counts each node once, with the rule set\'s severity and category, in the head line and the JSON', () => {
    const hostile = Array.from({ length: 50 }, () => failing(PENDING, { severity: 'critical', category: 'made-up' }));
    const tally = fold([
      node('a', [failing(PENDING)]), node('b', hostile), node('c', [failing('kernel-tick-rate'), { rule: PENDING, status: 'pass', severity: 'warning' }]),
      { name: 'd', roles: ['worker'], agent: 'none' }, node('e', [{ rule: PENDING, status: 'unknown', severity: 'warning' }]),
      { ...node('f', [failing(PENDING)]), heartbeat: { state: 'stale', reason: 'no heartbeat for 20 min' } },
    ]);
    const summary = JSON.parse(JSON.stringify(tally.summary));
    assert.deepEqual(summary.restartPending, { rule: PENDING, severity: 'warning', category: 'kubelet', nodes: 2, examples: ['a', 'b'] });
    const group = tally.fleet().find((g) => g.rule === PENDING);
    assert.deepEqual([group?.count, group?.of], [2, 4], 'the fleet line counts node b once too, out of the 4 nodes with a report');
    const report = clusterReport(tally);
    const head = renderClusterTable(report, { width: 200 }).split('\n')[0];
    assert.equal(head, 'node-tuning-advisor report · 6 nodes (4 with agent, 1 stale, 1 no agent) · kubelet restart pending on 2 nodes', 'a stale node\'s report is not counted, as in withAgent');
    assert.match(renderClusterMarkdown(report), /^node-tuning-advisor report · 6 nodes \(4 with agent, 1 stale, 1 no agent\) · kubelet restart pending on 2 nodes$/m);
  });

  it('none pending: no words in the head line, 0 in the JSON; a rule set without the rule counts nothing (null)', () => {
    const none = fold([node('a', [failing('kernel-tick-rate')])]);
    assert.equal(none.summary.restartPending?.nodes, 0);
    assert.doesNotMatch(renderClusterTable(clusterReport(none), { width: 200 }), /restart pending/);
    const other = fold([node('a', [failing(PENDING)])], new Map([['kernel-tick-rate', { severity: 'warning' as const, category: 'kernel' }]]));
    assert.equal(other.summary.restartPending, null);
    assert.equal(other.summary.unknownRules.nodes, 1, 'an id the rule set lacks is tallied apart, as any other');
  });
});
