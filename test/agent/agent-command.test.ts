// The `agent` command end to end: the real CLI process, a real scan of a fixture host, the
// stand-in apiserver; SIGTERM ends it cleanly while /metrics kept serving.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PassThrough } from 'node:stream';
import { main } from '../../src/cli/main.ts';
import { ANNOTATION_PREFIX, SUMMARY_KEY } from '../../src/wire/annotations.ts';
import { FakeApiServer } from '../helpers/fake-apiserver.ts';
import { SOURCE_NODE_FLAGS } from '../helpers/source-node.ts';

const BIN = fileURLToPath(new URL('../../bin/node-tuning-advisor.js', import.meta.url));
const HOST = fileURLToPath(new URL('../fixtures/hosts/intel-pstate-epp-power', import.meta.url));

async function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (d) => { out += d; });
  stderr.on('data', (d) => { err += d; });
  const code = await main(args, { stdout, stderr, env: {} });
  return { code, out, err };
}

// Each with its own stand-in, waiting mostly on the agent's 1 request/s client limit: side by side.
describe('the agent command against the stand-in', { concurrency: true }, () => {
  test('agent --once --dry-run scans the host and prints the patch; bad flags name the flag', async (t) => {
    const server = new FakeApiServer();
    await server.start();
    t.after(() => server.stop());
    server.addNode('worker-1');
    const kubeconfig = server.writeKubeconfig();
    const run = await cli(['agent', '--kubeconfig', kubeconfig, '--node-name', 'worker-1', '--host-root', HOST, '--once', '--dry-run']);
    assert.equal(run.code, 0, run.err);
    assert.match(run.out, /dry-run: PATCH \/api\/v1\/nodes\/worker-1/);
    assert.match(run.out, /"node-tuning-advisor.io\/summary": "\d+\/100 [A-F]: \d+ failing/);
    assert.equal(server.writes(), 0);

    const bad = await cli(['agent', '--kubeconfig', kubeconfig, '--node-name', 'worker-1', '--interval', '5 minutes']);
    assert.equal(bad.code, 2);
    assert.match(bad.err, /--interval "5 minutes" is not a duration; use e\.g\. 30s, 5m/);
    const window = await cli(['agent', '--kubeconfig', kubeconfig, '--node-name', 'worker-1', '--interval', '10m', '--startup-window', '5m']);
    assert.equal(window.code, 2);
    assert.match(window.err, /--startup-window 5m is shorter than --interval 10m: .*set --startup-window to at least 10m/);
    const noNode = await cli(['agent', '--kubeconfig', kubeconfig]);
    assert.match(noNode.err, /pass --node-name NAME or set NODE_NAME/);
    const addr = await cli(['agent', '--kubeconfig', kubeconfig, '--node-name', 'w', '--metrics-addr', 'nope']);
    assert.match(addr.err, /--metrics-addr "nope" is not HOST:PORT/);
    const ca = await cli(['agent', '--kubeconfig', kubeconfig, '--node-name', 'w', '--kubelet-ca-file', '/nonexistent/kubelet-ca.crt']);
    assert.equal(ca.code, 2);
    assert.match(ca.err, /--kubelet-ca-file \/nonexistent\/kubelet-ca\.crt: cannot be read \(ENOENT\); give a PEM file with the CA that signed the kubelet's serving certificate/);
    const notPem = await cli(['agent', '--kubeconfig', kubeconfig, '--node-name', 'w', '--kubelet-ca-file', kubeconfig]);
    assert.equal(notPem.code, 2);
    assert.match(notPem.err, /--kubelet-ca-file .*: holds no PEM certificate/);
    // A FIFO at the flag's path: refused before it is opened (opening it blocked the agent's start).
    const fifoDir = mkdtempSync(path.join(os.tmpdir(), 'nta-ca-fifo-'));
    const fifo = path.join(fifoDir, 'ca.crt');
    spawnSync('mkfifo', [fifo]);
    const fromFifo = await cli(['agent', '--kubeconfig', kubeconfig, '--node-name', 'w', '--kubelet-ca-file', fifo]);
    rmSync(fifoDir, { recursive: true, force: true });
    assert.equal(fromFifo.code, 2);
    assert.match(fromFifo.err, /--kubelet-ca-file .*: is a FIFO, not a regular file/);
    const address = await cli(['agent', '--kubeconfig', kubeconfig, '--node-name', 'w', '--kubelet-address', 'node-1.example']);
    assert.equal(address.code, 2);
    assert.match(address.err, /--kubelet-address node-1\.example is not an IP address/);
    assert.doesNotMatch(ca.err + notPem.err + address.err, /\n\s+at /, 'no stack trace');
  });

  test('agent process publishes, serves /metrics, and exits 0 on SIGTERM', async (t) => {
    const server = new FakeApiServer();
    await server.start();
    t.after(() => server.stop());
    server.addNode('worker-1');
    const child = spawn(process.execPath, [BIN, 'agent', '--kubeconfig', server.writeKubeconfig(), '--node-name', 'worker-1',
      '--host-root', HOST, '--interval', '1h', '--startup-jitter', '1ms', '--metrics-addr', '127.0.0.1:0'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d) => { err += d; });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    t.after(() => { if (child.exitCode === null) child.kill('SIGKILL'); });
    // Until the publish (or the process ends); the deadline only ends a hang: at 1 request/s the first
    // publish takes seconds, and longer on a loaded machine.
    const deadline = Date.now() + 120_000;
    while ((server.count('PATCH') === 0 || !/on 127\.0\.0\.1:\d+/.test(err)) && child.exitCode === null && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.equal(server.count('PATCH'), 1, err);
    assert.match(server.node('worker-1')?.metadata.annotations[SUMMARY_KEY], /^\d+\/100 [A-F]: \d+ failing, \d+ unknown; hz=/);
    const port = /on 127\.0\.0\.1:(\d+)/.exec(err)?.[1];
    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    assert.match(metrics, /^node_tuning_advisor_score \d+$/m);
    assert.match(metrics, /^node_tuning_advisor_api_requests_total\{verb="patch",code="200"\} 1$/m);
    assert.equal((await fetch(`http://127.0.0.1:${port}/readyz`)).status, 200);
    child.kill('SIGTERM');
    assert.equal(await exited, 0, err);
    assert.ok(Object.keys(server.node('worker-1')?.metadata.annotations).every((k: string) => k.startsWith(ANNOTATION_PREFIX)));
  });
});

test('--interval 1000h (issue 37 item 7): refused at start, naming the bound, instead of a timer that fires every millisecond', async (t) => {
  const server = new FakeApiServer();
  await server.start();
  t.after(() => server.stop());
  server.addNode('worker-1');
  const child = spawn(process.execPath, [...SOURCE_NODE_FLAGS, BIN, 'agent', '--kubeconfig', server.writeKubeconfig(), '--node-name', 'worker-1',
    '--host-root', HOST, '--interval', '1000h', '--startup-jitter', '0s', '--metrics-addr', '127.0.0.1:0', '--probe-interval', 'off'], { stdio: ['ignore', 'ignore', 'pipe'] });
  t.after(() => { if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL'); });
  let err = '';
  // The event either way: it exits, or it logs a second cycle (one --interval of 1000 h must separate them).
  const outcome = await new Promise<string>((resolve) => {
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString();
      if ((err.match(/^agent: (?:scan|publish): /gm) ?? []).length >= 2) resolve('a second cycle');
    });
    child.on('exit', (code) => resolve(`exit ${code}`));
  });
  assert.equal(outcome, 'exit 2', err.slice(0, 2000));
  assert.match(err, /--interval "1000h" is longer than 576h \(24 days\), the longest a timer waits/);
  assert.equal(server.writes(), 0, 'nothing published');
});

test('last resort: a rejection nobody handles is logged (cleaned) and counted, and the process keeps running', () => {
  const module = new URL('../../src/cli/commands/agent.ts', import.meta.url).href;
  const script = `
    const { keepServingOnUnhandledRejection } = await import(${JSON.stringify(module)});
    keepServingOnUnhandledRejection((line) => process.stderr.write(line + '\\n'), () => process.stdout.write('counted\\n'));
    Promise.reject(new Error('boom \\u001b[31mred'));
    setTimeout(() => process.stdout.write('still serving\\n'), 50);`;
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  assert.equal(run.stdout, 'counted\nstill serving\n');
  assert.equal(run.stderr, 'internal error (unhandled rejection, kept running): boom [31mred\n', 'no control character reaches the log');
});
