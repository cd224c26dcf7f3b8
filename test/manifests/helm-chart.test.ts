// The Helm chart (charts/node-tuning-advisor) is generated from the kustomizations
// (scripts/sync-chart.ts: the base, each distribution's overlay, the prometheus-operator and
// grafana-dashboard overlays), so it cannot drift from manifests/: the files on disk must be what the
// generator makes of the real kubectl's output now (else: npm run chart:sync). The real Helm lints it
// (--strict) and shows its README; test/manifests/helm-render.test.ts renders it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { parse } from 'yaml';
import { CHART, helm } from '../helpers/helm.ts';
import { requireLayerTool } from '../helpers/real-tools.ts';
import { CHART_DIR, HAND_WRITTEN, TEMPLATES_DIR, chartTemplates, isGenerated, kustomizeAll, readChartDefaults } from '../../scripts/sync-chart.ts';

test('charts/node-tuning-advisor/templates is what scripts/sync-chart.ts makes of the kustomizations now (else: npm run chart:sync)', async (t) => {
  const kubectl = await requireLayerTool(t, 'kubectl');
  if (!kubectl) return;
  const expected = chartTemplates(kustomizeAll(kubectl), readChartDefaults());
  const onDisk = await readdir(TEMPLATES_DIR);
  assert.deepEqual(onDisk.filter(isGenerated).sort(), [...expected.keys()].sort(), 'one template per object, and the distributions partial');
  assert.deepEqual(onDisk.filter((f) => !isGenerated(f)).sort(), [...HAND_WRITTEN].sort(), 'the files written by hand');
  for (const [name, text] of expected) assert.equal(await readFile(path.join(TEMPLATES_DIR, name), 'utf8'), text, `${name} is current`);
  assert.ok(!onDisk.some((f) => f.startsWith('namespace-')), 'no Namespace: helm install -n NS --create-namespace');
});

test('Chart.yaml: apiVersion v2, the package\'s name and version, home and sources', async () => {
  const chart = parse(await readFile(path.join(CHART_DIR, 'Chart.yaml'), 'utf8'));
  const pkg = JSON.parse(await readFile(path.join(CHART_DIR, '../../package.json'), 'utf8'));
  assert.equal(chart.apiVersion, 'v2');
  assert.equal(chart.name, pkg.name);
  assert.equal(chart.version, pkg.version);
  assert.equal(chart.appVersion, pkg.version);
  assert.match(chart.home, /^https:\/\/\S+\/node-tuning-advisor$/);
  assert.deepEqual(chart.sources, [chart.home]);
});

test('helm lint --strict passes (the real Helm 4), and helm show readme shows the chart\'s README', async (t) => {
  if (!(await requireLayerTool(t, 'helm'))) return;
  const lint = await helm(['lint', '--strict', CHART]);
  assert.equal(lint.code, 0, lint.stdout + lint.stderr);
  assert.match(lint.stdout, /1 chart\(s\) linted, 0 chart\(s\) failed/);
  assert.doesNotMatch(lint.stdout, /\[(WARNING|ERROR)\]/, lint.stdout);
  const readme = await helm(['show', 'readme', CHART]);
  assert.equal(readme.code, 0, readme.stderr);
  assert.equal(readme.stdout.trimEnd(), (await readFile(path.join(CHART, 'README.md'), 'utf8')).trimEnd());
  assert.match(readme.stdout, /^# node-tuning-advisor\n/);
  assert.match(readme.stdout, /helm install node-tuning-advisor /, 'how to install');
});
