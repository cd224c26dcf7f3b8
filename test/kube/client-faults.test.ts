// The Kubernetes client against a scripted HTTP server, for what a real API server never does on
// demand: bodies that stall, responses and watch lines too large, Retry-After on 429/503, a proxy's
// HTML error page, malformed JSON, a silent watch; and stop() aborting everything in flight.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { TokenBucket } from '../../src/kube/backoff.ts';
import { KubeClient, type ClientOptions } from '../../src/kube/client.ts';
import { decodeList, decodeWatchLine } from '../../src/kube/decode.ts';
import { Malformed } from '../../src/kube/objects.ts';
import { KubeError } from '../../src/kube/errors.ts';
import { CONFIGMAPS, NODES, PODS } from '../../src/kube/resources.ts';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

interface Scripted {
  client: (opts?: ClientOptions) => KubeClient;
  /** Connections the server saw closed (by the client) so far. */
  closed: () => number;
  open: () => number;
  requests: string[];
}

async function scripted(t: TestContext, handler: Handler): Promise<Scripted> {
  const sockets = new Set<Socket>();
  let closed = 0;
  const requests: string[] = [];
  const server = createServer((req, res) => { requests.push(`${req.method} ${req.url}`); handler(req, res); });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => { sockets.delete(socket); closed += 1; });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }));
  const dir = await mkdtemp(path.join(tmpdir(), 'nta-kube-faults-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'kubeconfig');
  await writeFile(file, JSON.stringify({
    apiVersion: 'v1', kind: 'Config', 'current-context': 'c',
    clusters: [{ name: 'k', cluster: { server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, 'insecure-skip-tls-verify': true } }],
    users: [{ name: 'u', user: { token: 'secret-token' } }],
    contexts: [{ name: 'c', context: { cluster: 'k', user: 'u' } }],
  }));
  const clients: KubeClient[] = [];
  t.after(() => Promise.all(clients.map((c) => c.stop())));
  return {
    client: (opts = {}) => {
      const c = KubeClient.fromKubeconfig(file, { limiter: new TokenBucket(1000, 1000), ...opts });
      clients.push(c);
      return c;
    },
    closed: () => closed, open: () => sockets.size, requests,
  };
}

async function until(what: string, check: () => boolean, timeoutMs = 5_000): Promise<void> {
  const end = performance.now() + timeoutMs;
  while (!check()) {
    if (performance.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

const failure = (p: Promise<unknown>): Promise<KubeError> => p.then(
  () => { throw new Error('expected a KubeError'); },
  (err: unknown) => { assert.ok(err instanceof KubeError, String(err)); return err; },
);

test('a body that stalls mid-way is aborted at the deadline and its connection closed', async (t) => {
  const s = await scripted(t, (_, res) => { res.writeHead(200, { 'content-type': 'application/json' }); res.write('{"kind":"PodList","items":['); });
  const err = await failure(s.client({ timeoutMs: 300 }).list(PODS));
  assert.equal(err.code, 'timeout');
  assert.equal(err.message, 'cannot list pods: list timed out after 0.3 s');
  await until('the server to see the connection closed', () => s.open() === 0);
});

test('responses and watch lines over their caps: too-large, connection closed', async (t) => {
  const s = await scripted(t, (req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    if (req.url?.includes('watch=true')) res.write(`{"type":"ADDED","object":{"metadata":{"name":"${'n'.repeat(5000)}`);
    else res.end(JSON.stringify({ items: [{ metadata: { name: 'x'.repeat(5000) } }] }));
  });
  const client = s.client({ maxResponseBytes: 1000, maxWatchLineBytes: 1000 });
  const list = await failure(client.list(NODES));
  assert.equal(list.code, 'too-large');
  assert.match(list.message, /^cannot list nodes: response larger than 1000 bytes$/);
  const watch = await failure(client.watch(NODES, {}, () => {}));
  assert.equal(watch.code, 'too-large');
  assert.match(watch.message, /watch event longer than 1000 bytes/);
  await until('no connection left open', () => s.open() === 0);
});

test('429 and 503 carry Retry-After (seconds or date) on lists, writes and watches alike', async (t) => {
  const later = new Date(Date.now() + 30_000).toUTCString();
  const s = await scripted(t, (req, res) => {
    const retryAfter = req.method === 'PATCH' ? later : '7';
    res.writeHead(req.method === 'PATCH' ? 503 : 429, { 'content-type': 'application/json', 'retry-after': retryAfter })
      .end(JSON.stringify({ kind: 'Status', code: 429, reason: 'TooManyRequests', message: 'slow down' }));
  });
  const client = s.client();
  const list = await failure(client.list(PODS, { namespace: 'ci' }));
  assert.equal(list.retryAfterMs, 7000);
  assert.equal(list.message, 'cannot list pods in namespace ci: HTTP 429: slow down');
  const watch = await failure(client.watch(PODS, { fieldSelector: 'spec.nodeName=n1' }, () => {}));
  assert.equal(watch.retryAfterMs, 7000);
  assert.equal(watch.reason, 'TooManyRequests');
  const patch = await failure(client.patch(NODES, 'n1', { metadata: {} }));
  assert.ok((patch.retryAfterMs ?? 0) > 20_000 && (patch.retryAfterMs ?? 0) <= 30_000, String(patch.retryAfterMs));
});

test('a proxy\'s HTML error page and malformed JSON are errors that name the defect, never echo the body', async (t) => {
  const bodies: Record<string, [number, string]> = {
    '/api/v1/nodes/html': [502, '<html><body>Bad Gateway \u001b[31mred</body></html>'],
    '/api/v1/nodes/garbage': [200, 'not json \u001b]0;title\u0007'],
    '/api/v1/nodes/array': [200, '[1,2,3]'],
    '/api/v1/nodes/nameless': [200, '{"metadata":{"name":42}}'],
    '/api/v1/nodes': [200, '{"items":[{"metadata":{"name":"ok"}},null]}'],
  };
  const s = await scripted(t, (req, res) => {
    const [status, body] = bodies[(req.url ?? '').split('?')[0] as string] ?? [404, '{}'];
    res.writeHead(status, { 'content-type': status === 502 ? 'text/html' : 'application/json' }).end(body);
  });
  const client = s.client();
  const html = await failure(client.get(NODES, 'html'));
  assert.equal(html.message, 'cannot get nodes "html": HTTP 502: Bad Gateway');
  assert.equal((await failure(client.get(NODES, 'garbage'))).message, 'cannot get nodes "garbage": malformed response: not JSON');
  assert.equal((await failure(client.get(NODES, 'array'))).message, 'cannot get nodes "array": malformed response: not an object (an array)');
  assert.equal((await failure(client.get(NODES, 'nameless'))).message, 'cannot get nodes "nameless": malformed response: metadata.name is a number');
  assert.equal((await failure(client.list(NODES))).message, 'cannot list nodes: malformed list: items[1] not an object (null)');
  assert.equal((await failure(client.get(NODES, '../secrets'))).code, 'invalid', 'a name is one path segment');
});

test('a watch that goes silent is aborted after its timeout plus the grace', async (t) => {
  const s = await scripted(t, (_, res) => { res.writeHead(200, { 'content-type': 'application/json' }); res.flushHeaders(); });
  const err = await failure(s.client({ watchIdleGraceMs: 100 }).watch(CONFIGMAPS, { namespace: 'x', timeoutSeconds: 1 }, () => {}));
  assert.equal(err.code, 'timeout');
  assert.match(err.message, /^cannot watch configmaps in namespace x: watch sent nothing for 1 s$/);
  await until('the connection closed', () => s.open() === 0);
});

test('stop(): reads and watches end at once, a write gets its grace, later requests are refused, no socket stays', async (t) => {
  let release: (() => void) | undefined;
  const s = await scripted(t, (req, res) => {
    if (req.method === 'PATCH') {
      release = () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"metadata":{"name":"n1","resourceVersion":"9"}}');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.flushHeaders();
  });
  const client = s.client();
  const watch = failure(client.watch(NODES, {}, () => {}));
  const list = failure(client.list(NODES));
  const patch = client.patch(NODES, 'n1', { metadata: { annotations: { a: 'b' } } });
  await until('three requests at the server', () => s.requests.length === 3);
  const stopped = client.stop(5_000);
  assert.equal((await watch).code, 'stopped');
  assert.equal((await list).code, 'stopped');
  release?.();
  assert.equal((await patch).metadata.resourceVersion, '9', 'the write in flight finished within the grace');
  await stopped;
  assert.equal((await failure(client.get(NODES, 'n1'))).code, 'stopped');
  await until('every connection closed', () => s.open() === 0);
});

test('decoders: any JSON is either a valid object/list/event or a Malformed error, never another exception', () => {
  const json = fc.jsonValue({ maxDepth: 4 });
  const shaped = fc.record({ type: fc.constantFrom('ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK', 'ERROR', 'x'), object: fc.oneof(json, fc.record({ metadata: fc.oneof(json, fc.record({ name: json, resourceVersion: json, labels: json })) })) });
  fc.assert(fc.property(fc.oneof(json, shaped), fc.string(), (value, junk) => {
    for (const text of [JSON.stringify(value), junk]) {
      for (const decode of [decodeWatchLine, decodeList]) {
        try {
          const out = decode(text) as any;
          if ('event' in out) assert.equal(typeof out.event.object.metadata, 'object');
          if ('items' in out) for (const item of out.items) assert.equal(typeof item.metadata.name, 'string');
        } catch (err) {
          if (!(err instanceof Malformed)) throw err;
        }
      }
    }
  }), { numRuns: 2000 });
});
