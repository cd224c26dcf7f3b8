// measure's flags and inputs: every mistake is one sentence naming the flag, exit 2, before any
// request; an unreachable API server is a clear error too.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { createServer, type Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { freePort } from '../helpers/control-plane.ts';
import { runCli } from '../helpers/cli.ts';

test('usage and flag mistakes: exit 2 with the flag named', async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'nta-measure-cli-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const help = await runCli(['measure', '--help']);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /Usage: node-tuning-advisor measure pod-startup --node NODE/);
  assert.equal((await runCli(['measure', 'pod-startup', '--help'])).code, 0);
  assert.equal((await runCli(['measure'])).code, 2);
  const cases: [string[], RegExp][] = [
    [['fsync'], /unknown measurement "fsync"; there are: measure pod-startup, measure show/],
    [['pod-startup'], /--node is required/],
    [['pod-startup', '--node', 'n', '--pods', '1e3'], /--pods must be a whole number from 1 to 1000 \(got "1e3"\)/],
    [['pod-startup', '--node', 'n', '--pods', '1001'], /--pods must be a whole number from 1 to 1000/],
    [['pod-startup', '--node', 'n', '--placement', 'anywhere'], /--placement must be one of scheduler, node-name \(got "anywhere"\)/],
    [['pod-startup', '--node', 'n', '--timeout', '10x'], /--timeout "10x" is not a duration/],
    [['pod-startup', '--node', 'n', '--output', 'yaml'], /--output must be one of table, json, markdown/],
    [['pod-startup', '--node', 'n', '--pvc-size', 'big'], /--pvc-size "big" is not a size; use e\.g\. 1Gi/],
    [['pod-startup', '--node', 'n', '--image', 'a b'], /--image must be an image reference/],
    [['pod-startup', '--node', 'n', 'extra'], /unexpected argument "extra"/],
    [['pod-startup', '--node', 'n', '--compare', path.join(dir, 'none.json')], /--compare .*none\.json: cannot read it \(ENOENT\)/],
    [['pod-startup', '--node', 'n', '--save', path.join(dir, 'no/such/dir.json')], /--save .*dir\.json: cannot write there \(ENOENT\)/],
    [['pod-startup', '--node', 'n', '--html', path.join(dir, 'no/such/page.html')], /--html .*page\.html: cannot write there \(ENOENT\)/],
    [['pod-startup', '--node', 'n', '--kubeconfig', path.join(dir, 'missing.kubeconfig')], /missing\.kubeconfig/],
    [['show'], /measure show needs the file a run saved \(measure pod-startup --save FILE\)/],
    [['show', 'a.json', 'b.json'], /one saved file, then --compare for a second \(got 2 files\)/],
    [['show', path.join(dir, 'none.json')], /measure show .*none\.json: cannot read it \(ENOENT\)/],
    [['show', 'a.json', '--html', path.join(dir, 'no/such/page.html')], /--html .*page\.html: cannot write there \(ENOENT\)/],
    [['show', 'a.json', '--output', 'html'], /--output must be one of table, json, markdown \(got "html"\)/],
  ];
  for (const [args, message] of cases) {
    const run = await runCli(['measure', ...args]);
    assert.equal(run.code, 2, `${args.join(' ')}: ${run.stderr}`);
    assert.match(run.stderr, message);
    assert.doesNotMatch(run.stderr, /\n\s+at /, 'no stack trace');
  }
});

test('an API server that cannot be reached: exit 2 naming the request, nothing else tried', async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'nta-measure-cli-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const kubeconfig = path.join(dir, 'kubeconfig');
  await writeFile(kubeconfig, JSON.stringify({
    apiVersion: 'v1', kind: 'Config', 'current-context': 'c',
    clusters: [{ name: 'c', cluster: { server: `https://127.0.0.1:${await freePort()}`, 'insecure-skip-tls-verify': true } }],
    users: [{ name: 'u', user: { token: 't' } }], contexts: [{ name: 'c', context: { cluster: 'c', user: 'u' } }],
  }));
  const run = await runCli(['measure', 'pod-startup', '--node', 'worker-1', '--kubeconfig', kubeconfig]);
  assert.equal(run.code, 2);
  assert.match(run.stderr, /^node-tuning-advisor measure: cannot get nodes "worker-1": cannot reach the API server https:\/\/127\.0\.0\.1:\d+: ECONNREFUSED\n$/);
});

for (const [signal, exit] of [['SIGTERM', 143], ['SIGHUP', 129]] as const) {
  test(`${signal} while the checks wait on a server that never answers: exit ${exit} at once, nothing created`, async (t) => {
    const dir = await mkdtemp(path.join(tmpdir(), 'nta-measure-cli-'));
    const sockets = new Set<Socket>();
    const silent = createServer((socket) => { sockets.add(socket); });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    t.after(async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
      await rm(dir, { recursive: true, force: true });
    });
    const kubeconfig = path.join(dir, 'kubeconfig');
    await writeFile(kubeconfig, JSON.stringify({
      apiVersion: 'v1', kind: 'Config', 'current-context': 'c',
      clusters: [{ name: 'c', cluster: { server: `https://127.0.0.1:${(silent.address() as { port: number }).port}`, 'insecure-skip-tls-verify': true } }],
      users: [{ name: 'u', user: { token: 't' } }], contexts: [{ name: 'c', context: { cluster: 'c', user: 'u' } }],
    }));
    const cli = fileURLToPath(new URL('../../bin/node-tuning-advisor.js', import.meta.url));
    const child = spawn(process.execPath, [cli, 'measure', 'pod-startup', '--node', 'worker-1', '--kubeconfig', kubeconfig], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => { stderr += c.toString(); });
    while (sockets.size === 0) await new Promise((r) => setTimeout(r, 20));
    const signalled = performance.now();
    child.kill(signal);
    const code = await new Promise((resolve) => child.on('close', resolve));
    assert.equal(code, exit, stderr);
    assert.ok(performance.now() - signalled < 2_000, 'at once, not after the 30 s request deadline');
    assert.match(stderr, new RegExp(`${signal}: stopping and cleaning up \\(${signal} again`));
    assert.match(stderr, /interrupted before anything was created\n$/);
  });
}
