// Issue 17 item 12: rule files are read only when they are regular files of at most 256 KiB (1 MiB before issue 37). A FIFO in
// --rules used to hang the CLI forever; a 50 MB scalar took seconds and gigabytes to parse. Item 16:
// the wrong kind for a file's list gets a message that says so, not "did you mean" the same key.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { runCli } from '../helpers/cli.ts';
import { tempHost } from '../helpers/fixtures.ts';

const HEADER = 'apiVersion: node-tuning-advisor.io/v1\n';

test('a FIFO given as --rules, or inside a rules directory, is refused at once instead of blocking', { timeout: 20_000 }, async (t) => {
  const dir = await tempHost(t, { 'rules/ok.yaml': `${HEADER}kind: RuleOverrides\noverrides: []\n` });
  execFileSync('mkfifo', [path.join(dir, 'pipe.yaml'), path.join(dir, 'rules', 'zz.yaml')]);
  for (const target of [path.join(dir, 'pipe.yaml'), path.join(dir, 'rules')]) {
    const result = await runCli(['rules', 'lint', target]);
    assert.equal(result.code, 2);
    assert.match(result.stderr, /\.yaml:0:0: is a FIFO, not a regular file; --rules takes YAML files or directories of them/);
  }
  const device = await runCli(['scan', '--host-root', dir, '--no-bundled-rules', '--rules', '/dev/zero']);
  assert.equal(device.code, 2);
  assert.match(device.stderr, /\/dev\/zero:0:0: is a character device, not a regular file/);
});

test('a 50 MB rule file is refused by its size, without parsing it', { timeout: 20_000 }, async (t) => {
  const dir = await tempHost(t, {});
  const file = path.join(dir, 'huge.yaml');
  await writeFile(file, `${HEADER}kind: RuleSet\nrules:\n  - id: huge\n    title: "${'x'.repeat(50 * 1024 * 1024)}"\n`);
  const before = process.memoryUsage().rss;
  const result = await runCli(['rules', 'lint', file]);
  assert.equal(result.code, 2);
  assert.match(result.stderr, /huge\.yaml:0:0: is larger than 256 KiB; a rule file is at most that/);
  assert.ok(process.memoryUsage().rss - before < 200 * 1024 * 1024, 'the file was not parsed');
});

test('the other kind\'s list key is explained, not "did you mean" itself; a wrong kind is reported alone', async (t) => {
  const dir = await tempHost(t, {
    'overrides-with-rules.yaml': `${HEADER}kind: RuleOverrides\nrules:\n  - id: kernel-tick-rate\n`,
    'ruleset-with-overrides.yaml': `${HEADER}kind: RuleSet\noverrides:\n  - id: kernel-tick-rate\n`,
    'bad-kind.yaml': `${HEADER}kind: Rules\nrules: []\n`,
  });
  const lint = async (name: string) => (await runCli(['rules', 'lint', path.join(dir, name)])).stderr;
  assert.equal(await lint('overrides-with-rules.yaml'), `${dir}/overrides-with-rules.yaml:3:1: rules: "rules:" belongs in a kind: RuleSet file, but this file says kind: RuleOverrides; set kind: RuleSet, or put the entries under "overrides:"\n1 problem(s) in rule files\n`);
  assert.match(await lint('ruleset-with-overrides.yaml'), /:3:1: overrides: "overrides:" belongs in a kind: RuleOverrides file, but this file says kind: RuleSet; set kind: RuleOverrides, or put the entries under "rules:"\n1 problem/);
  assert.equal(await lint('bad-kind.yaml'), `${dir}/bad-kind.yaml:2:7: kind: must be one of RuleSet, RuleOverrides\n1 problem(s) in rule files\n`);
  assert.doesNotMatch(await lint('overrides-with-rules.yaml'), /did you mean "rules"/);
});
