// The Helm chart (charts/node-tuning-advisor) renders the same objects as `kubectl kustomize manifests/`.
// No Helm binary is available here, so the chart holds no Helm logic: its templates are the
// kustomize output, one object a file (scripts/sync-chart.ts), the only template action being the
// escape of a literal `{{`. The test builds the base with the real kubectl and compares: the same
// files, and each template with the escape undone is the object kustomize built.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { parse } from 'yaml';
import { BASE, kustomize } from '../helpers/manifests.ts';
import { requireTool } from '../helpers/tools.ts';
import { CHART_DIR, HELM_ESCAPED_BRACES, TEMPLATES_DIR, chartTemplates, kustomizeBase } from '../../scripts/sync-chart.ts';

test('charts/node-tuning-advisor/templates is `kubectl kustomize manifests/` as of now (else: npm run chart:sync)', async (t) => {
  const kubectl = requireTool(t, 'kubectl', 'kubectl');
  if (!kubectl) return;
  const expected = chartTemplates(kustomizeBase(kubectl));
  assert.deepEqual((await readdir(TEMPLATES_DIR)).sort(), [...expected.keys()].sort(), 'one template per object');
  for (const [name, text] of expected) assert.equal(await readFile(path.join(TEMPLATES_DIR, name), 'utf8'), text, `${name} is current`);
});

test('each template, rendered (its only action, the escaped braces, undone), is the object kustomize builds', async (t) => {
  const kubectl = requireTool(t, 'kubectl', 'kubectl');
  if (!kubectl) return;
  const built = kustomize(kubectl, BASE);
  const rendered = [];
  for (const name of (await readdir(TEMPLATES_DIR)).sort()) {
    const text = await readFile(path.join(TEMPLATES_DIR, name), 'utf8');
    const literal = text.replaceAll(HELM_ESCAPED_BRACES, '');
    assert.ok(!literal.includes('{{'), `${name}: no template action but the escape`);
    rendered.push(parse(text.replaceAll(HELM_ESCAPED_BRACES, '{{')));
  }
  const key = (o: { kind: string; metadata: { name: string } }) => `${o.kind}/${o.metadata.name}`;
  assert.deepEqual(rendered.sort((a, b) => key(a).localeCompare(key(b))), built.sort((a, b) => key(a).localeCompare(key(b))));
  assert.ok(built.some((o) => o.kind === 'DaemonSet'), 'the agent is in it');
});

test('Chart.yaml: apiVersion v2, the package\'s name and version', async () => {
  const chart = parse(await readFile(path.join(CHART_DIR, 'Chart.yaml'), 'utf8'));
  const pkg = JSON.parse(await readFile(path.join(CHART_DIR, '../../package.json'), 'utf8'));
  assert.equal(chart.apiVersion, 'v2');
  assert.equal(chart.name, pkg.name);
  assert.equal(chart.version, pkg.version);
  assert.equal(chart.appVersion, pkg.version);
});
