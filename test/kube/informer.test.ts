// The Informer on the apiserver stand-in: the versions it lists and watches from, a handler that
// throws (contained, counted as 'handler', the watch lists again), and stop() during a backoff wait.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { TokenBucket } from '../../src/kube/backoff.ts';
import { KubeClient } from '../../src/kube/client.ts';
import { Informer, type WatchErrorReason } from '../../src/kube/informer.ts';
import type { KubeObject } from '../../src/kube/objects.ts';
import { PODS } from '../../src/kube/resources.ts';
import { FakeApiServer } from '../helpers/fake-apiserver.ts';
import { podObject } from '../helpers/pods.ts';

async function setup(t: TestContext): Promise<{ server: FakeApiServer; client: KubeClient }> {
  const server = new FakeApiServer();
  await server.start();
  t.after(() => server.stop());
  const client = KubeClient.fromKubeconfig(server.writeKubeconfig(), { limiter: new TokenBucket(1000, 1000), timeoutMs: 2_000 });
  t.after(() => client.stop());
  return { server, client };
}

async function until(what: string, check: () => boolean, timeoutMs = 5_000): Promise<void> {
  const end = performance.now() + timeoutMs;
  while (!check()) {
    if (performance.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

const lists = (server: FakeApiServer) => server.requests.filter((r) => r.path === '/api/v1/pods' && r.query.get('watch') !== 'true');
const watches = (server: FakeApiServer) => server.requests.filter((r) => r.path === '/api/v1/pods' && r.query.get('watch') === 'true');

test('first LIST from the cache (resourceVersion 0), watches from the list; after 410 a LIST of the latest state', async (t) => {
  const { server, client } = await setup(t);
  server.pods.upsert(podObject('a', { createdAt: Date.now() }));
  const seen: string[] = [];
  const informer = new Informer<KubeObject>(client, PODS, { name: 'pods', what: 'pods', fieldSelector: 'spec.nodeName=worker-1', backoff: { baseMs: 10, capMs: 20 } })
    .on({ added: (p) => seen.push(`+${p.metadata.name}`), updated: (p) => seen.push(`~${p.metadata.name}`), deleted: (p) => seen.push(`-${p.metadata.name}`) });
  informer.start();
  t.after(() => informer.stop());
  await until('the watch', () => server.pods.watching === 1);
  assert.equal(lists(server)[0]?.query.get('resourceVersion'), '0');
  assert.equal(watches(server)[0]?.query.get('resourceVersion'), lists(server)[0] && String(Number(server.pods.get('a', 'ci')?.metadata.resourceVersion)));
  assert.equal(watches(server)[0]?.query.get('allowWatchBookmarks'), 'true');
  server.expireWatches();
  server.pods.remove('a', 'ci');
  server.pods.upsert(podObject('b', { createdAt: Date.now() }));
  await until('the re-list', () => seen.includes('+b') && seen.includes('-a'));
  assert.equal(lists(server).length, 2);
  assert.equal(lists(server)[1]?.query.has('resourceVersion'), false, 'after 410: the latest state, not the cache');
  assert.deepEqual(informer.items().map((p) => p.metadata.name), ['b']);
});

test('a handler that throws is contained: counted as "handler", logged, the informer lists again and goes on', async (t) => {
  const { server, client } = await setup(t);
  server.pods.upsert(podObject('a', { createdAt: Date.now() }));
  const errors: WatchErrorReason[] = [];
  const logs: string[] = [];
  let calls = 0;
  const informer = new Informer<KubeObject>(client, PODS, {
    name: 'pods', what: 'pods on node worker-1', backoff: { baseMs: 10, capMs: 20 }, log: (l) => logs.push(l), onError: (reason) => errors.push(reason),
  }).on({
    added: () => { calls += 1; if (calls === 1) throw new TypeError('cannot read x of undefined'); },
    updated: () => { calls += 1; }, // the LIST after the failure delivers every object again
  });
  informer.start();
  t.after(() => informer.stop());
  await until('the second LIST', () => calls === 2 && server.pods.watching === 1);
  assert.deepEqual(errors, ['handler']);
  assert.match(logs[0] ?? '', /^watch on pods on node worker-1 failed \(a handler of pods on node worker-1 threw: cannot read x of undefined\); retrying in \d+\.\d s$/);
});

test('stop() during the backoff wait ends it at once; nothing is opened after it', async (t) => {
  const { server, client } = await setup(t);
  server.inject('GET', '/api/v1/pods', { status: 500 });
  const informer = new Informer<KubeObject>(client, PODS, { name: 'pods', what: 'pods', backoff: { baseMs: 60_000, capMs: 60_000 } });
  informer.start();
  await until('the failed LIST', () => lists(server).length === 1);
  const before = server.requests.length;
  const started = performance.now();
  await informer.stop();
  assert.ok(performance.now() - started < 1_000, 'not the 30–60 s backoff');
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(server.requests.length, before);
});
