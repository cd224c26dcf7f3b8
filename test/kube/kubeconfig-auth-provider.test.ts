// Issue 22 item 11: a kubeconfig `auth-provider` entry made client-node run a command (gcp and azure
// run `cmd-path` with `cmd-args` through a shell) or send any file as a token (`tokenFile` under any
// provider name). kubectl ≥ 1.26 refuses those entries; the CLI refuses them with kubectl's words,
// exit 2, before anything runs: the real CLI process and the real kubectl on the same file.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runCli } from '../helpers/cli.ts';
import { CLI } from '../helpers/measure-cli.ts';
import { requireTool } from '../helpers/tools.ts';

interface Run { code: number; stderr: string }

function run(file: string, args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(file, args, { timeout: 30_000, env: { PATH: process.env.PATH, HOME: process.env.HOME } }, (err, _stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stderr });
    });
  });
}

async function kubeconfig(dir: string, provider: string, config: Record<string, string>): Promise<string> {
  const file = path.join(dir, `kubeconfig-${provider}`);
  await writeFile(file, [
    'apiVersion: v1', 'kind: Config', 'current-context: c',
    'clusters:', '- name: k', '  cluster: {server: "https://127.0.0.1:1", insecure-skip-tls-verify: true}',
    'users:', '- name: ops', '  user:', '    auth-provider:', `      name: ${provider}`, `      config: ${JSON.stringify(config)}`,
    'contexts:', '- name: c', '  context: {cluster: k, user: ops}', '',
  ].join('\n'));
  return file;
}

test('auth-provider entries kubectl refuses are refused with its words, exit 2, and their command never runs', async (t) => {
  const kubectl = requireTool(t, 'kubectl', 'kubectl');
  const dir = await mkdtemp(path.join(tmpdir(), 'nta-auth-provider-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const marker = (name: string) => path.join(dir, `ran-${name}`);
  const secret = path.join(dir, 'secret');
  await writeFile(secret, 'not a token: a file the kubeconfig should never send\n');
  const cases = await Promise.all(['gcp', 'azure', 'corp-sso'].map(async (provider) => ({
    provider,
    file: await kubeconfig(dir, provider, provider === 'corp-sso'
      ? { tokenFile: secret, 'cmd-path': '/bin/sh', 'cmd-args': `-c 'touch ${marker(provider)}'` }
      : { 'cmd-path': '/bin/sh', 'cmd-args': `-c 'touch ${marker(provider)}; echo {}'`, 'token-key': '{.token}', 'expiry-key': '{.expiry}' }),
  })));
  // One real CLI process; the rest in-process (the same loader: a command would run the same way, execSync).
  const runs = await Promise.all(cases.flatMap(({ provider, file }) => [
    (provider === 'gcp' ? run(process.execPath, [CLI, 'report', '--kubeconfig', file]) : runCli(['report', '--kubeconfig', file]))
      .then((r) => ({ provider, file, what: 'report', ...r })),
    runCli(['agent', '--kubeconfig', file, '--node-name', 'worker-1', '--once', '--dry-run']).then((r) => ({ provider, file, what: 'agent', ...r })),
  ]));
  const kubectlSays = await Promise.all(cases.map(({ file }) => (kubectl ? run(kubectl, ['--kubeconfig', file, 'get', 'nodes']) : undefined)));
  for (const [i, { provider }] of cases.entries()) {
    const mine = runs.filter((r) => r.provider === provider);
    const theirs = kubectlSays[i];
    for (const r of mine) {
      assert.equal(r.code, 2, `${provider} ${r.what}: ${r.stderr}`);
      assert.ok(r.stderr.includes(`cannot use user "ops" of --kubeconfig ${r.file}: `), r.stderr);
      assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
      if (theirs) assert.ok(r.stderr.includes(theirs.stderr.replace(/^error: /, '').trim()), `kubectl says:\n${theirs.stderr}\nwe said:\n${r.stderr}`);
    }
    if (theirs) assert.notEqual(theirs.code, 0);
    assert.equal(existsSync(marker(provider)), false, `${provider}: the cmd-path command ran`);
  }
  assert.match(runs.find((r) => r.provider === 'gcp')!.stderr, /The gcp auth plugin has been removed\.\nPlease use the "gke-gcloud-auth-plugin"/);
  assert.match(runs.find((r) => r.provider === 'corp-sso')!.stderr, /no Auth Provider found for name "corp-sso"/);
});
