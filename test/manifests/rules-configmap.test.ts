// The rules ConfigMap is generated from rules/: manifests/base/rules/ must hold the same files.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { runCli } from '../helpers/cli.ts';
import { BASE, configMapVolume, kustomize } from '../helpers/manifests.ts';
import { requireLayerTool } from '../helpers/real-tools.ts';
import { MANIFEST_RULES_DIR, RULES_DIR, kustomization, ruleFiles } from '../../scripts/sync-manifest-rules.ts';

test('manifests/base/rules is rules/ as of now (else: npm run manifests:rules)', async () => {
  const files = await ruleFiles(RULES_DIR);
  assert.ok(files.length > 0);
  assert.deepEqual(await ruleFiles(MANIFEST_RULES_DIR), files, 'same rule files');
  for (const f of files) {
    assert.equal(await readFile(path.join(MANIFEST_RULES_DIR, f), 'utf8'), await readFile(path.join(RULES_DIR, f), 'utf8'), `${f} is current`);
  }
  assert.equal(await readFile(path.join(MANIFEST_RULES_DIR, 'kustomization.yaml'), 'utf8'), kustomization(files));
});

test('the generated ConfigMap, mounted the way kubelet lays out a configMap volume, gives the agent the bundled rules', async (t) => {
  const kubectl = await requireLayerTool(t, 'kubectl');
  if (!kubectl) return;
  const cm = kustomize(kubectl, BASE).find((o) => o.kind === 'ConfigMap' && o.metadata.name.startsWith('node-tuning-advisor-rules-'));
  assert.ok(cm, 'a hash-suffixed rules ConfigMap');
  const dir = await configMapVolume(t, cm.data as Record<string, string>);
  const ids = async (args: string[]) => {
    const result = await runCli(['rules', 'list', ...args]);
    assert.equal(result.code, 0, result.stderr);
    return result.stdout;
  };
  assert.equal(await ids(['--no-bundled-rules', '--rules', dir]), await ids([]));
});
