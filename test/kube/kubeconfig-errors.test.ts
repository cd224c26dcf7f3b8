// Bad kubeconfig files (issue 17, item 16): an invalid server URL exits 2 at once instead of
// retrying forever, and a binary file's bytes never reach the terminal.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runCli, type CliResult } from '../helpers/cli.ts';

async function kubeconfigWithServer(dir: string, server: string): Promise<string> {
  const file = path.join(dir, `kubeconfig-${randomBytes(4).toString('hex')}`);
  await writeFile(file, [
    'apiVersion: v1', 'kind: Config', 'current-context: c',
    'clusters:', '- name: k', '  cluster:', `    server: ${JSON.stringify(server)}`, '    insecure-skip-tls-verify: true',
    'users:', '- name: u', '  user:', '    token: t',
    'contexts:', '- name: c', '  context: {cluster: k, user: u}', '',
  ].join('\n'));
  return file;
}

/** The CLI in-process, or a failure after `ms` (the bug being tested retried forever). */
async function cliWithin(args: string[], ms = 15_000): Promise<CliResult> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error(`${args.join(' ')}: no exit within ${ms} ms`)), ms); });
  try {
    return await Promise.race([runCli(args), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

const COMMANDS = (file: string) => [
  ['report', '--kubeconfig', file],
  ['agent', '--kubeconfig', file, '--node-name', 'worker-1', '--once', '--dry-run'],
];

test('a server that is not an http(s) URL: exit 2 at once, naming the file and the field', async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'nta-kubeconfig-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  for (const server of ['not a url', 'https://exa mple.invalid', 'ftp://127.0.0.1:1', 'https://[::1', '127.0.0.1:6443']) {
    const file = await kubeconfigWithServer(dir, server);
    for (const args of COMMANDS(file)) {
      const result = await cliWithin(args);
      assert.equal(result.code, 2, `${server}: ${args[0]}: ${result.stderr}`);
      assert.match(result.stderr, /server .* is not an http\(s\) URL/, result.stderr);
      assert.ok(result.stderr.includes(file), result.stderr);
      assert.doesNotMatch(result.stderr, /\n\s+at /, 'no stack trace');
    }
  }
});

test('a binary kubeconfig: exit 2 with a readable message, none of its bytes printed', async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'nta-kubeconfig-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'binary');
  const planted = Buffer.concat([Buffer.from('\x7fELF\x02\x01\x01\x00'), Buffer.from('\x1b]0;owned\x07\x1b[2J'), randomBytes(4096), Buffer.from('clusters: [\x1b[31m')]);
  await writeFile(file, planted);
  for (const args of COMMANDS(file)) {
    const result = await cliWithin(args);
    assert.equal(result.code, 2, result.stderr);
    assert.ok(result.stderr.includes(file), result.stderr);
    assert.match(result.stderr, /not a kubeconfig|cannot load/);
    assert.doesNotMatch(result.stderr, /[\x00-\x08\x0b-\x1f\x7f-\x9f\ufffd]/, JSON.stringify(result.stderr));
    assert.doesNotMatch(result.stderr, /owned|ELF/);
  }
});
