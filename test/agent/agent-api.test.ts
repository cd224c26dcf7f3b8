// The agent against the in-process apiserver stand-in, for what a real server does not do on demand:
// injected 500/503/429 with Retry-After, a PATCH that hangs or answers late, watch expiry on cue, a
// refused connection. Steady state, restarts and edits are proven on the real control plane
// (test/agent/agent-real.test.ts).
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { renderAnnotations, SUMMARY_KEY, ANNOTATION_PREFIX } from '../../src/wire/annotations.ts';
import { FakeApiServer } from '../helpers/fake-apiserver.ts';
import { runAgent } from '../helpers/agent-harness.ts';
import { seedReport } from '../helpers/reports.ts';

async function cluster(t: TestContext): Promise<{ server: FakeApiServer; kubeconfig: string }> {
  const server = new FakeApiServer();
  await server.start();
  t.after(() => server.stop());
  server.addNode('worker-1', { 'kubeadm.alpha.kubernetes.io/cri-socket': 'unix:///run/containerd/containerd.sock' });
  return { server, kubeconfig: server.writeKubeconfig() };
}

/** Polls the in-process stand-in; the guard only ends a hang (each step takes milliseconds). */
async function until(what: string, check: () => boolean, guardMs = 60_000): Promise<void> {
  const end = performance.now() + guardMs;
  while (!check()) {
    if (performance.now() > end) throw new Error(`never happened: ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

function ours(annotations: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(annotations).filter(([k]) => k.startsWith(ANNOTATION_PREFIX)));
}

test('500 ×3 then success converges to annotations equal to the report', async (t) => {
  const { server, kubeconfig } = await cluster(t);
  server.inject('PATCH', '/api/v1/nodes/', { status: 500 }, { status: 500 }, { status: 500 });
  const run = runAgent(kubeconfig, () => seedReport(), { agent: { once: true } });
  assert.equal(await run.result, 0);
  assert.equal(server.count('PATCH'), 4);
  assert.equal(server.count('POST'), 3, 'Events only after the patch landed, once each');
  assert.deepEqual(ours(server.node('worker-1')?.metadata.annotations), renderAnnotations(seedReport()));
  assert.equal(run.logs.filter((l) => /publish failed \(HTTP 500: injected 500\); attempt \d/.test(l)).length, 3);
});

test('429 honours Retry-After before retrying', async (t) => {
  const { server, kubeconfig } = await cluster(t);
  server.inject('PATCH', '/api/v1/nodes/', { status: 429, retryAfter: 1 });
  assert.equal(await runAgent(kubeconfig, () => seedReport(), { agent: { once: true } }).result, 0);
  const patches = server.requests.filter((r) => r.method === 'PATCH');
  assert.equal(patches.length, 2);
  assert.ok((patches[1]?.at ?? 0) - (patches[0]?.at ?? 0) >= 990, 'waited for Retry-After: 1');
});

test('a failed Event is retried without a second PATCH; an external edit is repaired with one PATCH', async (t) => {
  const { server, kubeconfig } = await cluster(t);
  server.inject('POST', '/api/v1/namespaces/default/events', { status: 503 });
  const run = runAgent(kubeconfig, () => seedReport());
  t.after(async () => { run.agent.stop(); await run.result; });
  await until('all three Events, the refused one sent again', () => server.events.length === 3);
  assert.equal(server.count('PATCH'), 1, 'the Event retried without a second PATCH');
  server.editNode('worker-1', (n) => { delete n.metadata.annotations[SUMMARY_KEY]; });
  await until('the repair', () => server.count('PATCH') === 2);
  const scans = run.scans();
  await until('two more scans', () => run.scans() >= scans + 2);
  run.agent.stop();
  assert.equal(await run.result, 0);
  assert.equal(server.events.length, 3, 'all three Events arrive once');
  const patches = server.requests.filter((r) => r.method === 'PATCH');
  assert.equal(patches.length, 2);
  assert.deepEqual(Object.keys((patches[1]?.body as any).metadata.annotations), [SUMMARY_KEY]);
});

test('watch expiry (410) re-lists and the agent keeps the Node current', async (t) => {
  // Each step waits for the stand-in to have seen the step before (not for a number of 40 ms scans).
  const { server, kubeconfig } = await cluster(t);
  const lists = () => server.count('GET', '/api/v1/nodes', (r) => !r.query.has('watch'));
  const watches = () => server.count('GET', '/api/v1/nodes', (r) => r.query.get('watch') === 'true');
  const run = runAgent(kubeconfig, () => seedReport());
  t.after(async () => { run.agent.stop(); await run.result; });
  await until('the first publish, with the Node watched', () => server.count('PATCH') === 1 && watches() >= 1);
  server.expireWatches();
  await until('a LIST after the 410, and a watch from it', () => lists() === 2 && watches() >= 2);
  server.editNode('worker-1', (n) => { n.metadata.annotations[`${ANNOTATION_PREFIX}stale`] = 'x'; });
  await until('a PATCH after the edit', () => server.count('PATCH') === 2);
  run.agent.stop();
  assert.equal(await run.result, 0);
  assert.equal(lists(), 2, 'LIST again after 410, once');
  assert.ok(server.requests.every((r) => r.path !== '/api/v1/nodes' || r.query.get('fieldSelector') === 'metadata.name=worker-1'));
  const last = server.requests.filter((r) => r.method === 'PATCH').at(-1);
  assert.deepEqual((last?.body as any).metadata.annotations, { [`${ANNOTATION_PREFIX}stale`]: null });
});

test('a watch whose response never starts is given up after the request timeout, not the hour-long idle one', async (t) => {
  // Seen on a real kube-apiserver restarting: a re-watch sent in that window got no answer, and the
  // agent missed every change to its Node for an hour (test/e2e/agent.test.ts).
  const { server, kubeconfig } = await cluster(t);
  let edited = false;
  const run = runAgent(kubeconfig, (scan) => {
    if (scan === 3 && !edited) {
      edited = true;
      server.inject('GET', '/api/v1/nodes', { status: 200, delayMs: 0 }, { status: 200, hang: true }); // the re-LIST passes, the re-watch hangs
      server.expireWatches();
      setTimeout(() => server.editNode('worker-1', (n) => { delete n.metadata.annotations[SUMMARY_KEY]; }), 1_500);
    }
    return seedReport();
  });
  t.after(async () => { run.agent.stop(); await run.result; });
  // The guard is far below the hour a watch waiting on the idle timeout would take.
  await until('the hand edit seen and repaired', () => server.count('PATCH') >= 2);
  assert.equal(server.count('PATCH'), 2, 'the hand edit was seen and repaired');
  assert.ok(server.count('GET', '/api/v1/nodes', (r) => r.query.get('watch') === 'true') >= 3, 'the hung watch was sent again');
});

test('a 429 on the Node LIST restarts the watch only after Retry-After', async (t) => {
  const { server, kubeconfig } = await cluster(t);
  server.inject('GET', '/api/v1/nodes', { status: 429, retryAfter: 1 });
  assert.equal(await runAgent(kubeconfig, () => seedReport(), { agent: { once: true } }).result, 0);
  const lists = server.requests.filter((r) => r.path === '/api/v1/nodes' && !r.query.has('watch'));
  assert.equal(lists.length, 2);
  assert.ok((lists[1]?.at ?? 0) - (lists[0]?.at ?? 0) >= 990);
  assert.equal(server.count('PATCH'), 1);
});

test('a PATCH that never answers times out and is retried', async (t) => {
  const { server, kubeconfig } = await cluster(t);
  server.inject('PATCH', '/api/v1/nodes/', { status: 200, hang: true });
  const run = runAgent(kubeconfig, () => seedReport(), { agent: { once: true }, requestTimeoutMs: 500 });
  assert.equal(await run.result, 0);
  assert.equal(server.count('PATCH'), 2);
  assert.ok(run.logs.some((l) => /publish failed \(patch timed out after 0.5 s\)/.test(l)), run.logs.join('\n'));
});

test('stop() during an in-flight PATCH lets it finish, then exits 0', async (t) => {
  const { server, kubeconfig } = await cluster(t);
  server.inject('PATCH', '/api/v1/nodes/', { status: 200, delayMs: 300 });
  const run = runAgent(kubeconfig, () => seedReport());
  while (server.count('PATCH') === 0) await new Promise((r) => setTimeout(r, 10));
  run.agent.stop();
  assert.equal(await run.result, 0);
  assert.deepEqual(ours(server.node('worker-1')?.metadata.annotations), renderAnnotations(seedReport()));
});

test('--dry-run prints the merge patch and sends no write', async (t) => {
  const { server, kubeconfig } = await cluster(t);
  const out = new PassThrough();
  let printed = '';
  out.on('data', (chunk) => { printed += chunk; });
  assert.equal(await runAgent(kubeconfig, () => seedReport(), { agent: { once: true }, dryRunOut: out }).result, 0);
  assert.equal(server.writes(), 0);
  assert.match(printed, /PATCH \/api\/v1\/nodes\/worker-1 \(Content-Type: application\/merge-patch\+json\)/);
  assert.match(printed, /"node-tuning-advisor.io\/summary": "73\/100 C: /);
  assert.match(printed, /Event Warning TuningRecommendation: CRIT etcd-fsync-latency/);
});

test('a missing Node and a refused connection give clear messages and back off, no crash', async (t) => {
  const { server, kubeconfig } = await cluster(t);
  server.editNode('worker-1', (n) => { n.metadata.name = 'other'; });
  const missing = runAgent(kubeconfig, () => seedReport(), { agent: { once: true, onceAttempts: 2 } });
  assert.equal(await missing.result, 1);
  assert.ok(missing.logs.some((l) => /node "worker-1" does not exist; check --node-name or NODE_NAME/.test(l)), missing.logs.join('\n'));
  await server.stop();
  const refused = runAgent(kubeconfig, () => seedReport(), { agent: { once: true, onceAttempts: 2, nodeReadTimeoutMs: 300 } });
  assert.equal(await refused.result, 1);
  assert.ok(refused.logs.some((l) => /ECONNREFUSED/.test(l)), refused.logs.join('\n'));
});
