// Only bad input exits 2 (an InputError: a flag, a file, a kubeconfig); any other error is a bug:
// one line naming the command, exit 3 (1 means a rule failed), and where to report it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough, Writable } from 'node:stream';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { main } from '../../src/cli/main.ts';

function capture(): { stream: PassThrough; text: () => string } {
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (c: Buffer) => { text += c.toString(); });
  return { stream, text: () => text };
}

test('a failure that is not bad input is reported as a bug: exit 3, one line, a hint to report it', async () => {
  const stderr = capture();
  // stdout breaks in a way no input explains: `rules list` cannot write its table.
  const stdout = new Writable({ write() { throw new TypeError('cannot write:\nthe\u001b[31m stream'); } });
  const code = await main(['rules', 'list'], { stdout, stderr: stderr.stream, env: {} });
  assert.equal(code, 3);
  const lines = stderr.text().split('\n').filter(Boolean);
  assert.equal(lines.length, 1, stderr.text());
  assert.match(lines[0]!, /^node-tuning-advisor rules: internal error: cannot write: the ?\[31m stream \(a bug: please report it/);
  assert.doesNotMatch(stderr.text(), /\u001b|at .*\.ts:\d+/, 'no control characters, no stack');
});

test('bad input exits 2 with its sentence: a flag, a rule file, a kubeconfig (no longer wrapped, still input)', async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'nta-exit-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const run = async (argv: string[]) => {
    const out = capture(), err = capture();
    const code = await main(argv, { stdout: out.stream, stderr: err.stream, env: {} });
    return { code, stderr: err.text() };
  };
  const flag = await run(['scan', '--outptu', 'json']);
  assert.deepEqual([flag.code, /Unknown option '--outptu'/.test(flag.stderr)], [2, true], flag.stderr);
  await writeFile(path.join(dir, 'bad.yaml'), 'apiVersion: node-tuning-advisor.io/v1\nkind: RuleSet\nrules: [{id: x}]\n');
  const rules = await run(['rules', 'lint', path.join(dir, 'bad.yaml')]);
  assert.equal(rules.code, 2, rules.stderr);
  await writeFile(path.join(dir, 'kubeconfig'), 'apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "ftp://x"}}]\nusers: [{name: u, user: {token: t}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n');
  for (const command of ['report', 'describe']) {
    const kube = await run([command, ...(command === 'describe' ? ['node-a'] : []), '--kubeconfig', path.join(dir, 'kubeconfig')]);
    assert.equal(kube.code, 2, `${command}: ${kube.stderr}`);
    assert.match(kube.stderr, /is not an http\(s\) URL/);
    assert.doesNotMatch(kube.stderr, /internal error/);
  }
});
