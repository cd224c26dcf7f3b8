// The Grafana dashboard: parses, has a datasource variable every query uses, has the panels the
// issue names, and its queries name only metrics the agent exports (from the code, at test time)
// or the few planned ones listed here, each of which must still be unexported and marked as planned.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parse } from 'yaml';
import { REPO } from '../helpers/manifests.ts';
import { exportedSeriesNames, metricNames } from '../helpers/promql.ts';

/** Metrics a panel or alert may use before the agent exports them: name → the issue bringing it. */
const PLANNED: Record<string, string> = {};
/** Metrics of other components the alerts use (scraped from them, not from the agent). */
const EXTERNAL = ['up', 'etcd_disk_wal_fsync_duration_seconds_bucket', 'kubelet_pod_start_sli_duration_seconds_bucket'];

type Panel = { title: string; description?: string; datasource?: { uid?: string }; targets?: { expr: string; datasource?: { uid?: string } }[] };
const dashboard = JSON.parse(await readFile(path.join(REPO, 'manifests/dashboard/node-tuning-advisor.json'), 'utf8'));
const panels: Panel[] = dashboard.panels;

test('metricNames picks metric names out of PromQL, not functions, labels or keywords', () => {
  assert.deepEqual(metricNames('histogram_quantile(0.99, sum by (phase, le) (rate(a_bucket{node=~"$node", x="y(z)"}[$__rate_interval])))'), ['a_bucket']);
  assert.deepEqual(metricNames('time() - max by (node) (b{}) > 1200 or c == 1 and on (node) d offset 5m'), ['b', 'c', 'd']);
});

test('dashboard: datasource variable, used by every panel and query; the issue\'s panels are there', () => {
  const variable = dashboard.templating.list.find((v: { type: string }) => v.type === 'datasource');
  assert.equal(variable?.query, 'prometheus');
  for (const p of panels) {
    assert.equal(p.datasource?.uid, `\${${variable.name}}`, p.title);
    for (const target of p.targets ?? []) assert.equal(target.datasource?.uid, `\${${variable.name}}`, p.title);
  }
  const titles = panels.map((p) => p.title).join(' | ');
  for (const words of [/Fleet: score and grade/, /Failing rules, by rule/, /etcd fsync p99/, /throttling/i, /Pod start-up p99 by phase/]) assert.match(titles, words);
});

test('dashboard and alerts name only metrics the agent exports, planned ones marked and still unexported', async () => {
  const exported = await exportedSeriesNames();
  assert.ok(exported.has('node_tuning_advisor_score') && exported.has('node_tuning_advisor_finding'), 'registry read');
  for (const [name, issue] of Object.entries(PLANNED)) {
    assert.ok(!exported.has(name), `${name} is exported now: remove it from PLANNED (${issue}) and its "PLANNED" notes`);
  }
  const used = new Set(panels.flatMap((p) => (p.targets ?? []).flatMap((t) => metricNames(t.expr))));
  assert.ok(used.size >= 8, `the queries name ${used.size} metrics`);
  for (const p of panels) {
    for (const name of (p.targets ?? []).flatMap((t) => metricNames(t.expr))) {
      if (name in PLANNED) assert.match(p.description ?? '', new RegExp(`PLANNED: .*${PLANNED[name]}`), `${p.title} says ${name} is planned`);
      else assert.ok(exported.has(name), `panel "${p.title}" queries ${name}, which the agent does not export`);
    }
  }
  const alerts = parse(await readFile(path.join(REPO, 'manifests/prometheus/alerts.yaml'), 'utf8'));
  for (const rule of alerts.groups.flatMap((g: { rules: { alert: string; expr: string }[] }) => g.rules)) {
    for (const name of metricNames(rule.expr)) assert.ok(exported.has(name) || EXTERNAL.includes(name), `${rule.alert}: ${name}`);
  }
});
