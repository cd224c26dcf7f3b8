// The Helm chart (charts/node-tuning-advisor) is generated from the kustomizations
// (scripts/sync-chart.ts: the base, each distribution's overlay, the prometheus-operator overlay), so
// it cannot drift from manifests/: the files on disk must be what the generator makes of the real
// kubectl's output now (else: npm run chart:sync). test/manifests/helm-render.test.ts renders them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { parse } from 'yaml';
import { requireTool } from '../helpers/tools.ts';
import { CHART_DIR, HAND_WRITTEN, TEMPLATES_DIR, chartTemplates, isGenerated, kustomizeAll, readChartDefaults } from '../../scripts/sync-chart.ts';

test('charts/node-tuning-advisor/templates is what scripts/sync-chart.ts makes of the kustomizations now (else: npm run chart:sync)', async (t) => {
  const kubectl = requireTool(t, 'kubectl', 'kubectl');
  if (!kubectl) return;
  const expected = chartTemplates(kustomizeAll(kubectl), readChartDefaults());
  const onDisk = await readdir(TEMPLATES_DIR);
  assert.deepEqual(onDisk.filter(isGenerated).sort(), [...expected.keys()].sort(), 'one template per object, and the distributions partial');
  assert.deepEqual(onDisk.filter((f) => !isGenerated(f)).sort(), [...HAND_WRITTEN].sort(), 'the files written by hand');
  for (const [name, text] of expected) assert.equal(await readFile(path.join(TEMPLATES_DIR, name), 'utf8'), text, `${name} is current`);
  assert.ok(!onDisk.some((f) => f.startsWith('namespace-')), 'no Namespace: helm install -n NS --create-namespace');
});

test('Chart.yaml: apiVersion v2, the package\'s name and version', async () => {
  const chart = parse(await readFile(path.join(CHART_DIR, 'Chart.yaml'), 'utf8'));
  const pkg = JSON.parse(await readFile(path.join(CHART_DIR, '../../package.json'), 'utf8'));
  assert.equal(chart.apiVersion, 'v2');
  assert.equal(chart.name, pkg.name);
  assert.equal(chart.version, pkg.version);
  assert.equal(chart.appVersion, pkg.version);
});
