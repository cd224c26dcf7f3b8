// The agent against a misbehaving API server or proxy (issue 17, items 5–8), on the stand-in,
// which can send what a real server never does on demand: malformed watch lines and list items,
// a watch that answers headers and then nothing, a PATCH that never answers, a 429 on a watch.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { ANNOTATION_PREFIX } from '../../src/wire/annotations.ts';
import { createAgentMetrics } from '../../src/publish/metrics.ts';
import { FakeApiServer } from '../helpers/fake-apiserver.ts';
import { runAgent } from '../helpers/agent-harness.ts';
import { seedReport } from '../helpers/reports.ts';
import { renderAnnotations } from '../../src/wire/annotations.ts';
import { WorkloadState } from '../../src/workload/state.ts';

async function cluster(t: TestContext): Promise<{ server: FakeApiServer; kubeconfig: string; rejections: unknown[] }> {
  const server = new FakeApiServer();
  await server.start();
  t.after(() => server.stop());
  server.addNode('worker-1');
  // A rejection nobody handles is the crash being tested for: record it instead of dying.
  const rejections: unknown[] = [];
  const record = (reason: unknown): void => { rejections.push(reason); };
  process.on('unhandledRejection', record);
  t.after(() => process.off('unhandledRejection', record));
  return { server, kubeconfig: server.writeKubeconfig(), rejections };
}

async function until(what: string, check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const end = performance.now() + timeoutMs;
  while (!check()) {
    if (performance.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

function ours(annotations: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(annotations).filter(([k]) => k.startsWith(ANNOTATION_PREFIX)));
}

const MALFORMED_WATCH_LINES = [
  '[1,2,3]', '{}', '"a JSON string"', 'not JSON at all', '{"type":"BOOKMARK"}', '{"type":"MODIFIED","object":null}',
  '{"type":"MODIFIED","object":{"kind":"Node","metadata":null}}', '{"type":"ADDED","object":[1]}', '{"type":"DELETED","object":{"metadata":{"name":7}}}',
  '{"type":"ERROR","object":"gone"}', 'null', '{"type":"MODIFIED","object":{"metadata":{"name":"worker-1"}}}',
];

test('malformed lines on every watch and null list items: no crash, each watch re-lists, the agent publishes', async (t) => {
  const { server, kubeconfig, rejections } = await cluster(t);
  const lines = { status: 200, watch: true, lines: MALFORMED_WATCH_LINES };
  server.inject('GET', '/api/v1/nodes', lines);
  server.inject('GET', '/api/v1/pods', lines, { status: 200, watch: false, lines: ['{"kind":"PodList","metadata":{"resourceVersion":"5"},"items":[null]}'] });
  server.inject('GET', '/apis/storage.k8s.io/v1/csidrivers', { status: 200, watch: false, lines: ['{"kind":"CSIDriverList","metadata":null,"items":[{"metadata":null}]}'] });
  server.inject('GET', '/apis/storage.k8s.io/v1/csinodes', { status: 200, watch: false, lines: ['[null]'] }, lines);
  const metrics = createAgentMetrics('test');
  const state = new WorkloadState({ nodeName: 'worker-1' });
  const run = runAgent(kubeconfig, () => seedReport(), { metrics, workload: state });
  t.after(async () => { run.agent.stop(); await run.result; });
  await until('the faults to be served and the agent to publish', () => server.count('PATCH') >= 1
    && ['/api/v1/pods', '/apis/storage.k8s.io/v1/csidrivers', '/apis/storage.k8s.io/v1/csinodes']
      .every((p) => server.count('GET', p, (r) => r.path === p && !r.query.has('watch')) >= 2));
  await until('every watch to list again', () => ['pods', 'csiDrivers', 'csiNode', 'node'].every((p) => state.hasListed(p as 'pods')));
  server.editNode('worker-1', (n) => { n.metadata.annotations[`${ANNOTATION_PREFIX}stale`] = 'x'; });
  await until('the repaired watch to deliver an edit', () => server.count('PATCH') >= 2);
  run.agent.stop();
  assert.equal(await run.result, 0);
  assert.deepEqual(rejections, [], 'no unhandled rejection');
  assert.deepEqual(ours(server.node('worker-1')?.metadata.annotations), renderAnnotations(seedReport()));
  const scrape = await metrics.registry.metrics();
  for (const watch of ['node', 'pods', 'csidrivers', 'csinode']) {
    assert.match(scrape, new RegExp(`^node_tuning_advisor_watch_errors_total\\{watch="${watch}",reason="malformed"\\} [1-9]`, 'm'), `${watch}\n${scrape}`);
  }
  assert.ok(run.logs.some((l) => /watch on node worker-1 failed \(malformed watch event/.test(l)), run.logs.join('\n'));
  assert.ok(run.logs.every((l) => !l.includes('not JSON at all')), 'a log line names the defect, never echoes the input');
});

test('a silent Node watch: the PATCH response is the newest Node, so later cycles write nothing', async (t) => {
  const { server, kubeconfig } = await cluster(t);
  server.inject('GET', '/api/v1/nodes', ...Array.from({ length: 50 }, () => ({ status: 200, silent: true, watch: true })));
  const run = runAgent(kubeconfig, () => seedReport(), { stopAfterScans: 6 });
  assert.equal(await run.result, 0);
  assert.equal(server.count('PATCH'), 1, 'one PATCH, not one per cycle');
  assert.equal(server.events.length, 3, 'one Event per failing rule, once');
});

test('a forbidden Node watch (LIST allowed): the agent writes once, not every cycle', async (t) => {
  const { server, kubeconfig } = await cluster(t);
  server.inject('GET', '/api/v1/nodes', ...Array.from({ length: 50 }, () => ({ status: 403, watch: true })));
  // Production backoff: the next LIST of the Node is minutes away, so the watch's copy stays old.
  const run = runAgent(kubeconfig, () => seedReport(), { stopAfterScans: 6, agent: { backoff: { baseMs: 60_000, capMs: 60_000 } } });
  assert.equal(await run.result, 0);
  assert.equal(server.count('PATCH'), 1);
  assert.equal(server.events.length, 3);
});

test('a 429 to the Node watch request: the next request waits for its Retry-After', async (t) => {
  const { server, kubeconfig } = await cluster(t);
  server.inject('GET', '/api/v1/nodes', { status: 429, retryAfter: 1, watch: true });
  const run = runAgent(kubeconfig, () => seedReport());
  t.after(async () => { run.agent.stop(); await run.result; });
  const nodeRequests = () => server.requests.filter((r) => r.path === '/api/v1/nodes');
  await until('a request after the 429', () => nodeRequests().length >= 3);
  run.agent.stop();
  const [, throttled, next] = nodeRequests();
  assert.equal(throttled?.query.get('watch'), 'true');
  assert.ok((next?.at ?? 0) - (throttled?.at ?? 0) >= 990, `waited ${((next?.at ?? 0) - (throttled?.at ?? 0)).toFixed(0)} ms for Retry-After: 1`);
});

test('a PATCH that never answers is aborted at its timeout: the socket is closed, not left open', async (t) => {
  const { server, kubeconfig } = await cluster(t);
  server.inject('PATCH', '/api/v1/nodes/', { status: 200, hang: true });
  const run = runAgent(kubeconfig, () => seedReport(), { agent: { once: true }, requestTimeoutMs: 500 });
  assert.equal(await run.result, 0);
  await until('the hung request to be closed by the client', () => server.abandoned === 1, 5_000);
});
