// The agent process and SIGTERM (issue 17, item 6), and a malformed watch stream against the real
// process (item 5: it used to exit 1, a crash loop behind a misbehaving proxy). Each case spawns the
// CLI against the stand-in, puts the agent in one state (idle, waiting to reconnect a watch, a PATCH
// in flight that never answers, a watch waiting for its headers), sends SIGTERM and expects exit 0
// with no request sent after the signal. Each state is one the agent would stay in for an hour or
// more (a 1 h interval, a request that never answers, a 10 min Retry-After): an exit at all is
// the agent ending it on the signal, so no duration is asserted (how long it takes is printed).
import { describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { FakeApiServer, type Fault } from '../helpers/fake-apiserver.ts';
import { parseAnnotations } from '../../src/wire/annotations.ts';
import { SOURCE_NODE_FLAGS } from '../helpers/source-node.ts';

const BIN = fileURLToPath(new URL('../../bin/node-tuning-advisor.js', import.meta.url));
const HOST = fileURLToPath(new URL('../fixtures/hosts/intel-pstate-epp-power', import.meta.url));
/** Only a hang guard: every state below lasts ≥ 10 min unless SIGTERM ends it. */
const HANG_GUARD_MS = 120_000;

interface Running {
  server: FakeApiServer;
  child: ChildProcess;
  stderr: () => string;
  exited: Promise<number | null>;
}

async function startAgent(t: TestContext, faults: [string, string, Fault[]][] = []): Promise<Running> {
  const server = new FakeApiServer();
  await server.start();
  t.after(() => server.stop());
  server.addNode('worker-1');
  for (const [method, prefix, list] of faults) server.inject(method, prefix, ...list);
  const child = spawn(process.execPath, [...SOURCE_NODE_FLAGS, BIN, 'agent', '--kubeconfig', server.writeKubeconfig(), '--node-name', 'worker-1',
    '--host-root', HOST, '--interval', '1h', '--startup-jitter', '1ms', '--metrics-addr', '127.0.0.1:0', '--probe-interval', 'off'],
  { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr?.on('data', (d) => { err += d; });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  t.after(() => { if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL'); });
  return { server, child, stderr: () => err, exited };
}

async function until(what: string, check: () => boolean, timeoutMs = HANG_GUARD_MS): Promise<void> {
  const end = performance.now() + timeoutMs;
  while (!check()) {
    if (performance.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** SIGTERM (or `signal`); exit 0 (not the hang guard's SIGKILL); no request may arrive after the signal. */
async function terminate(t: TestContext, run: Running, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  const requestsBefore = run.server.requests.length;
  const sent = performance.now();
  run.child.kill(signal);
  const timer = setTimeout(() => run.child.kill('SIGKILL'), HANG_GUARD_MS);
  const code = await run.exited;
  clearTimeout(timer);
  t.diagnostic(`exited ${(performance.now() - sent).toFixed(0)} ms after SIGTERM`);
  assert.equal(code, 0, run.stderr());
  assert.deepEqual(run.server.requests.slice(requestsBefore).map((r) => `${r.method} ${r.path}?${r.query}`), [], 'requests after SIGTERM');
}

/** The first publish is complete: the PATCH landed and one Event per failing rule was created. */
function published(server: FakeApiServer): boolean {
  const parsed = parseAnnotations(server.node('worker-1')?.metadata.annotations);
  return parsed.state === 'ok' && server.events.length === parsed.report.rules.filter((r) => r.status === 'fail').length;
}

const isNodeWatch = (r: { path: string; query: URLSearchParams }) => r.path === '/api/v1/nodes' && r.query.get('watch') === 'true';

// Each case has its own stand-in and agent process, and mostly waits on the agent's 1 request/s
// client limit: they run side by side.
describe('the agent process and SIGTERM', { concurrency: true }, () => {
  test('idle (the next scan an hour away): SIGTERM ends the agent', async (t) => {
    const run = await startAgent(t);
    await until('the first publish', () => published(run.server) && run.server.requests.some(isNodeWatch));
    await terminate(t, run);
  });

  test('idle, started by hand over SSH: SIGHUP (the session dropped) ends it as SIGTERM does (issue 37 item 5)', async (t) => {
    const run = await startAgent(t);
    await until('the first publish', () => published(run.server) && run.server.requests.some(isNodeWatch));
    await terminate(t, run, 'SIGHUP');
  });

  test('waiting to reconnect a failed watch (Retry-After: 10 min): SIGTERM ends it, and no watch reopens', async (t) => {
    const failures = [{ status: 500, watch: true }, { status: 503, retryAfter: 600, watch: true }] satisfies Fault[];
    const run = await startAgent(t, [['GET', '/api/v1/nodes', failures]]);
    // And the whole first publish (PATCH and its Events): on a loaded machine its Events could still be due after the signal.
    await until('two failed Node watches (the second asking for 10 min), and the publish', () => run.server.requests.filter(isNodeWatch).length >= 2
      && /watch on node worker-1 failed \(HTTP 503[^\n]*retrying in 600\.0 s/.test(run.stderr()) && published(run.server));
    await terminate(t, run);
  });

  test('a PATCH in flight that never answers: SIGTERM aborts it', async (t) => {
    const run = await startAgent(t, [['PATCH', '/api/v1/nodes/', [{ status: 200, hang: true }]]]);
    await until('the PATCH to be sent', () => run.server.count('PATCH') === 1);
    await terminate(t, run);
    await until('the server to see the PATCH connection closed', () => run.server.abandoned === 1);
  });

  test('a watch waiting for its response headers: SIGTERM aborts it', async (t) => {
    const run = await startAgent(t, [['GET', '/api/v1/nodes', [{ status: 200, hang: true, watch: true }]]]);
    // The whole first publish (PATCH and its Events), so no write of it is still due after the signal.
    await until('the hung Node watch and the publish', () => run.server.requests.some(isNodeWatch) && published(run.server));
    await terminate(t, run);
  });

  test('malformed watch lines do not end the process: it keeps serving and exits 0 on SIGTERM', async (t) => {
    const lines: Fault = { status: 200, watch: true, lines: ['[1,2,3]', '{"type":"MODIFIED","object":null}', '{"type":"BOOKMARK"}'] };
    const run = await startAgent(t, [['GET', '/api/v1/nodes', [lines]], ['GET', '/api/v1/pods', [lines]]]);
    await until('the Node watch to be opened again after the bad stream, or the process to end', () => run.child.exitCode !== null
      || (run.server.requests.filter(isNodeWatch).length >= 2 && published(run.server)));
    assert.equal(run.child.exitCode, null, `the agent ended:\n${run.stderr()}`);
    await terminate(t, run);
  });
});
