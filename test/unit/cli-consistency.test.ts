// One CLI (issue 24): every view honours --output, one width rule for every table (the terminal,
// else $COLUMNS, else 100 columns when piped: scan and report alike), and bad flags exit 2.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { runCli } from '../helpers/cli.ts';
import { startCluster } from '../helpers/cluster-fixture.ts';
import { PIPED_COLUMNS, terminalWidth } from '../../src/text/width.ts';

const HOST = fileURLToPath(new URL('../fixtures/hosts/seed-000-before', import.meta.url));
const widest = (text: string) => Math.max(...text.split('\n').map((l) => [...l].length));

test('explain and rules list honour --output json|yaml; an unknown format exits 2 naming the flag', async () => {
  const json = JSON.parse((await runCli(['explain', 'kubelet-api-qps', '-o', 'json'])).stdout);
  assert.equal(json.rule.id, 'kubelet-api-qps');
  assert.equal(json.finding, undefined);
  const onHost = parse((await runCli(['explain', 'kubelet-api-qps', '--host-root', HOST, '--output', 'yaml'])).stdout);
  assert.deepEqual([onHost.node, onHost.finding.ruleId, onHost.finding.status], ['master1', 'kubelet-api-qps', 'fail']);
  assert.equal(onHost.finding.remediation.summary, 'raise kubeAPIQPS/kubeAPIBurst to 170/220');
  const list = parse((await runCli(['rules', 'list', '-o', 'yaml'])).stdout) as { id: string }[];
  assert.ok(list.some((r) => r.id === 'kernel-tick-rate'));
  const bad = await runCli(['explain', 'kubelet-api-qps', '-o', 'html']);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--output must be one of text, json, yaml \(got "html"\)/);
});

test('one width rule: terminal columns, else $COLUMNS, else 100 when piped, for scan and report alike', async (t) => {
  assert.equal(terminalWidth({ stdout: { isTTY: true, columns: 132 }, env: { COLUMNS: '90' } }), 132);
  assert.equal(terminalWidth({ stdout: {}, env: { COLUMNS: '90' } }), 90);
  assert.equal(terminalWidth({ stdout: {}, env: {} }), PIPED_COLUMNS);
  assert.equal(terminalWidth({ stdout: {}, env: { COLUMNS: '10' } }), 40);
  const scan = await runCli(['scan', '--host-root', HOST, '--fail-on', 'never']);
  const server = await startCluster();
  t.after(() => server.stop());
  const report = await runCli(['report', '--kubeconfig', server.writeKubeconfig(), '--fail-on', 'never']);
  assert.equal(report.code, 0, report.stderr);
  for (const [name, out] of [['scan', scan.stdout], ['report', report.stdout]] as const) {
    assert.ok(widest(out) <= 100 && widest(out) > 80, `${name} piped is laid out for 100 columns (widest ${widest(out)})`);
  }
  const narrow = await runCli(['report', '--kubeconfig', server.writeKubeconfig(), '--fail-on', 'never'], { COLUMNS: '72' });
  assert.ok(widest(narrow.stdout) <= 72, 'report follows $COLUMNS');
});

test('probe fsync: bad flags exit 2, a --dir that is missing or a file included', async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'nta-probe-flags-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  await writeFile(path.join(dir, 'file'), '');
  const missing = await runCli(['probe', 'fsync', '--dir', path.join(dir, 'nope')]);
  assert.equal(missing.code, 2, missing.stderr);
  assert.match(missing.stderr, /pass an existing directory with --dir/);
  const file = await runCli(['probe', 'fsync', '--dir', path.join(dir, 'file')]);
  assert.equal(file.code, 2, file.stderr);
  assert.match(file.stderr, /is not a directory: pass a directory, not a file, with --dir/);
  assert.equal((await runCli(['probe', 'fsync', '--dir', dir, '--bogus'])).code, 2);
  assert.equal((await runCli(['probe', 'fsync', '--dir', dir, '--size', 'lots'])).code, 2);
});

test('every field report a rule references is summarized in docs/field-reports.md, which the package ships', async () => {
  const { readFile, readdir } = await import('node:fs/promises');
  const repo = fileURLToPath(new URL('../..', import.meta.url));
  const doc = await readFile(path.join(repo, 'docs/field-reports.md'), 'utf8');
  const pkg = JSON.parse(await readFile(path.join(repo, 'package.json'), 'utf8')) as { files: string[] };
  assert.ok(pkg.files.includes('docs/field-reports.md'));
  const seeds = new Set<string>();
  for (const file of await readdir(path.join(repo, 'rules'))) {
    for (const m of (await readFile(path.join(repo, 'rules', file), 'utf8')).matchAll(/seed: (\d{3})_([0-9a-f]+)\.txt/g)) seeds.add(`${m[1]}_${m[2]}`);
  }
  assert.ok(seeds.size >= 4);
  for (const seed of seeds) {
    const [number] = seed.split('_');
    assert.match(doc, new RegExp(`^## ${number} — .+\\n\\nSource: \`${seed}\\.txt\`$`, 'm'), seed);
  }
  const explain = await runCli(['explain', 'kernel-tick-rate']);
  assert.match(explain.stdout, /^ {2}field report 000 \(docs\/field-reports\.md\)$/m);
  assert.doesNotMatch(explain.stdout, /\.txt/, 'no file that is not shipped');
});
