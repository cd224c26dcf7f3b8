// Unknown and not-applicable reasons name facts by the labels of the rule files' `facts:` maps
// (issue 24), and say why the value could not be judged, never "none found", which reads like a pass
// (issue 34): "kube-scheduler's log: cannot be judged, no such pod logs …"; the rule engine's text
// ("throttling.scheduler.count = none cannot be compared with Gt 0") is under --verbose and in JSON.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runCli } from '../helpers/cli.ts';

const HOST = fileURLToPath(new URL('../fixtures/hosts/kubeadm-1.30', import.meta.url));

const RULE = (facts: string) => `apiVersion: node-tuning-advisor.io/v1
kind: RuleSet
${facts}
rules:
  - id: own-tick
    title: Tick
    category: kernel
    severity: warning
    weight: 1
    failsWhen: { all: [{ fact: kernel.hz, op: Lt, value: 1000 }, { fact: cpu.virtualized, op: IsFalse }] }
    observed: "{{kernel.hz}}"
    expected: "1000"
    message: slow
    remediation: { summary: rebuild, text: rebuild }
    references: [{ url: "https://example.com" }]
`;

test('rules lint: every fact a condition reads has a label; a label is a few words on one line, no colon', async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'nta-labels-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  assert.equal((await runCli(['rules', 'lint'])).code, 0, 'the bundled rules label every condition fact');

  await writeFile(path.join(dir, 'partial.yaml'), RULE('facts:\n  kernel.hz: "the timer tick"'));
  const partial = await runCli(['rules', 'lint', '--no-bundled-rules', path.join(dir, 'partial.yaml')]);
  assert.equal(partial.code, 2);
  assert.match(partial.stderr, /partial\.yaml:\d+:1: own-tick: fact "cpu\.virtualized" has no label; add it to the file's top-level "facts:" map/);
  assert.doesNotMatch(partial.stderr, /"kernel\.hz" has no label/);

  await writeFile(path.join(dir, 'colon.yaml'), RULE('facts:\n  kernel.hz: "tick: rate"\n  cpu.virtualized: "a VM"'));
  const colon = await runCli(['rules', 'lint', '--no-bundled-rules', path.join(dir, 'colon.yaml')]);
  assert.equal(colon.code, 2);
  assert.match(colon.stderr, /colon\.yaml:4:\d+: facts\.kernel\.hz: a fact label is 3 to 80 characters on one line, without ":"/);

  // Without labels the file still loads for a scan: its reasons then name the keys.
  await writeFile(path.join(dir, 'bare.yaml'), RULE(''));
  const scan = await runCli(['scan', '--host-root', HOST, '--no-bundled-rules', '--rules', path.join(dir, 'bare.yaml'), '-o', 'json', '--fail-on', 'never']);
  assert.equal(scan.code, 0, scan.stderr);
  assert.match(JSON.parse(scan.stdout).findings[0].message, /^Cannot decide: kernel\.hz: .*; cpu\.virtualized: /);
});

test('scan: labelled reasons by default, the engine\'s under --verbose and as engineReason in JSON', async () => {
  const plain = await runCli(['scan', '--host-root', HOST, '--only', 'scheduler-api-qps', '--fail-on', 'never'], { COLUMNS: '100' });
  assert.match(plain.stdout, /reason client-side throttling lines in kube-scheduler's log: cannot be judged, no such pod logs\n +under \/var\/log\/pods on this node\n/);
  assert.doesNotMatch(plain.stdout, /none found/);
  assert.doesNotMatch(plain.stdout, /throttling\.scheduler\.count|cannot be compared/);

  const verbose = await runCli(['scan', '--host-root', HOST, '--only', 'scheduler-api-qps', '--fail-on', 'never', '--verbose'], { COLUMNS: '100' });
  assert.match(verbose.stdout, /\n {2}engine throttling\.scheduler\.count = none cannot be compared with Gt 0\n/);

  const json = JSON.parse((await runCli(['scan', '--host-root', HOST, '--only', 'scheduler-api-qps', '-o', 'json', '--fail-on', 'never'])).stdout);
  const [finding] = json.findings;
  assert.equal(finding.message, "Cannot decide: client-side throttling lines in kube-scheduler's log: cannot be judged, no such pod logs under /var/log/pods on this node.");
  assert.equal(finding.engineReason, 'throttling.scheduler.count = none cannot be compared with Gt 0');
});

test('facts unknown for one cause are said once, with all their labels (not a bare label after a cut)', async () => {
  const { sharingReasons } = await import('../../src/rules/conditions.ts');
  const why = 'no running etcd process found, so its I/O priority cannot be read';
  assert.deepEqual(sharingReasons([`etcd's I/O scheduling class: ${why}`, `etcd's I/O priority level: ${why}`, 'the disk: not measured']),
    [`etcd's I/O scheduling class and etcd's I/O priority level: ${why}`, 'the disk: not measured']);
  assert.deepEqual(sharingReasons(['a: x', 'b: x', 'c: x']), ['a, b and c: x']);
});
