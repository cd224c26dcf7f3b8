// Alert rules: the raw file and the PrometheusRule carry the same groups; promtool checks them
// and runs the unit tests in manifests/prometheus/alerts.test.yaml; each alert has for, severity,
// summary, description and an absolute runbook_url naming its runbook in docs/runbooks/.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { access, readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { parse } from 'yaml';
import { requireTool } from '../helpers/tools.ts';
import { REPO } from '../helpers/manifests.ts';
import { FIX_RECORD, FIX_TARGETS, bundledRules, withFixGroup } from '../../scripts/alert-fixes.ts';

const ALERTS = path.join(REPO, 'manifests/prometheus/alerts.yaml');
const raw = parse(await readFile(ALERTS, 'utf8'));
const rule = parse(await readFile(path.join(REPO, 'manifests/components/prometheus-operator/prometheusrule.yaml'), 'utf8'));
/** The chart's default base of runbook_url (values.yaml prometheusOperator.runbookBaseUrl): this release's docs/runbooks. */
const RUNBOOK_BASE = parse(await readFile(path.join(REPO, 'charts/node-tuning-advisor/values.yaml'), 'utf8')).prometheusOperator.runbookBaseUrl;
const REQUIRED = ['NodeTuningCriticalFinding', 'NodeTuningCriticalUnknown', 'NodeTuningCoverageLow', 'NodeTuningScoreLow', 'EtcdDiskFsyncSlow', 'KubeClientThrottling',
  'PodStartupSLOBreached', 'NodeTuningAdvisorDown', 'NodeTuningAdvisorScanStale', 'NodeTuningAdvisorHeartbeatStale'];
type AlertRule = { alert: string; record?: string; expr: string; for?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
const alerts: AlertRule[] = raw.groups.flatMap((g: { rules: AlertRule[] }) => g.rules).filter((r: AlertRule) => r.alert !== undefined);

test('the PrometheusRule holds exactly the groups of alerts.yaml', () => {
  assert.equal(rule.kind, 'PrometheusRule');
  assert.deepEqual(rule.spec.groups, raw.groups);
});

test('every required alert, each with for, severity, summary, description and an existing runbook', async () => {
  assert.deepEqual(alerts.map((a) => a.alert).sort(), [...REQUIRED].sort());
  for (const a of alerts) {
    assert.match(a.for ?? '', /^\d+[smh]$/, `${a.alert} for`);
    assert.ok(['info', 'warning', 'critical'].includes(a.labels?.severity ?? ''), `${a.alert} severity`);
    assert.ok(a.annotations?.summary && a.annotations.description, `${a.alert} summary/description`);
    assert.equal(a.annotations?.runbook_url, `${RUNBOOK_BASE}/${a.alert}.md`, 'absolute: it opens from Alertmanager or a pager');
    const runbook = await readFile(path.join(REPO, 'docs/runbooks', `${a.alert}.md`), 'utf8');
    for (const section of ['## Meaning', '## Confirm', '## Fix']) assert.ok(runbook.includes(section), `${a.alert} runbook: ${section}`);
  }
});

test('each rule\'s fix is a static series generated from rules/*.yaml, in both files; no metric label carries free text', async () => {
  const rules = await bundledRules();
  for (const target of FIX_TARGETS) {
    const text = await readFile(target.file, 'utf8');
    assert.equal(text, withFixGroup(text, rules, target.indent), `${path.relative(REPO, target.file)} is stale: npm run alerts:fixes`);
  }
  const fixes = raw.groups.flatMap((g: { rules: AlertRule[] }) => g.rules).filter((r: AlertRule) => r.record === FIX_RECORD);
  assert.deepEqual(fixes.map((r: AlertRule) => r.labels?.rule).sort(), rules.map((r) => r.id).sort());
  assert.ok(fixes.every((r: AlertRule) => !/\{\{/.test(r.labels?.fix ?? '{{')), 'no template left in a static fix');
  assert.ok(alerts.every((a) => !/\$labels\.fix/.test(JSON.stringify(a))), 'no alert reads a fix label');
});

test('promtool check rules and promtool test rules', async (t) => {
  const promtool = requireTool(t, 'promtool', 'prometheus');
  if (!promtool) return;
  const run = promisify(execFile);
  const check = await run(promtool, ['check', 'rules', ALERTS]);
  const rules = await bundledRules();
  assert.match(check.stdout, new RegExp(`SUCCESS: ${REQUIRED.length + rules.length} rules found`));
  const tests = path.join(REPO, 'manifests/prometheus/alerts.test.yaml');
  await access(tests);
  const result = await run(promtool, ['test', 'rules', tests]).catch((e: { stdout: string; stderr: string }) => {
    assert.fail(`promtool test rules failed:\n${e.stdout}\n${e.stderr}`);
  });
  assert.match(result.stdout + result.stderr, /SUCCESS/);
});
