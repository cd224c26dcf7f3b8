// Issue 17 item 9 (fetch handling): a fake etcd, or anything a process or config file names as etcd's
// metrics URL, must not steer requests or memory: the body is capped while it streams (before: 1.48 GB
// read), a gzip bomb is not inflated (before: 656 MB), redirects are not followed, and only loopback or
// this node's own addresses are called. Real HTTP servers on loopback play the fake etcd.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { gzipSync } from 'node:zlib';
import { fetchEtcdMetrics } from '../../src/collectors/etcd/metrics.ts';
import { localTarget } from '../../src/host/local-http.ts';

async function fakeEtcd(t: TestContext, handler: (req: IncomingMessage, res: ServerResponse) => void, host = '127.0.0.1'): Promise<{ server: Server; base: string }> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  t.after(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }));
  const { port } = server.address() as AddressInfo;
  return { server, base: `http://${host.includes(':') ? `[${host}]` : host}:${port}` };
}

test('an endless body is cut at the cap while it streams, not read to the end', async (t) => {
  let sent = 0;
  const chunk = Buffer.alloc(256 * 1024, 'a');
  const { base } = await fakeEtcd(t, (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    const pump = (): void => {
      while (!res.destroyed && sent < 4 * 1024 ** 3) {
        sent += chunk.length;
        if (!res.write(chunk)) return void res.once('drain', pump);
      }
    };
    res.on('close', () => undefined);
    pump();
  });
  const fetched = await fetchEtcdMetrics(base, 10_000);
  assert.equal(fetched.ok, false);
  assert.match(fetched.ok ? '' : fetched.reason, /sent more than 8388608 bytes; not read/);
  assert.ok(sent < 64 * 1024 * 1024, `the fake etcd got to send ${Math.round(sent / 1048576)} MiB before the client stopped reading`);
});

test('a gzip bomb is not inflated: a compressed body is refused (identity was asked for)', async (t) => {
  const bomb = gzipSync(Buffer.alloc(256 * 1024 * 1024, 0), { level: 9 });
  let acceptEncoding: string | undefined;
  const { base } = await fakeEtcd(t, (req, res) => {
    acceptEncoding = req.headers['accept-encoding'];
    res.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip', 'content-length': bomb.length }).end(bomb);
  });
  const before = process.memoryUsage().arrayBuffers;
  const fetched = await fetchEtcdMetrics(base, 10_000);
  assert.equal(acceptEncoding, 'identity');
  assert.match(fetched.ok ? '' : fetched.reason, /sent a gzip-compressed body though asked for identity; not read/);
  assert.ok(process.memoryUsage().arrayBuffers - before < 64 * 1024 * 1024, 'nothing was inflated');
});

test('a redirect is not followed', async (t) => {
  let elsewhere = 0;
  const other = await fakeEtcd(t, (_req, res) => { elsewhere += 1; res.end('etcd_server_has_leader 1\n'); });
  const { base } = await fakeEtcd(t, (_req, res) => res.writeHead(302, { location: `${other.base}/metrics` }).end());
  const fetched = await fetchEtcdMetrics(base, 10_000);
  assert.match(fetched.ok ? '' : fetched.reason, /answered a redirect \(HTTP 302\); redirects are not followed/);
  assert.equal(elsewhere, 0);
});

test('only loopback and this node\'s own addresses are called; names are not resolved', async () => {
  for (const url of ['http://10.255.255.1:2381', 'http://169.254.169.254', 'http://etcd.example:2381', 'http://[fd00::1]:2381']) {
    const fetched = await fetchEtcdMetrics(url, 1000, { ownAddresses: ['192.0.2.10'] });
    assert.match(fetched.ok ? '' : fetched.reason, /not fetched: .*(not loopback nor an address of this node|is a name, not an address)/, url);
  }
  assert.deepEqual(localTarget('192.0.2.10', ['192.0.2.10']), { ip: '192.0.2.10' });
  assert.deepEqual(localTarget('localhost', []), { ip: '127.0.0.1' });
  assert.deepEqual(localTarget('[::1]', []), { ip: '::1' });
});

test('a real answer from one of this node\'s own interface addresses is read', async (t) => {
  const own = Object.values(os.networkInterfaces()).flat().find((a) => a?.family === 'IPv4' && !a.internal)?.address;
  if (!own) return t.skip('no non-loopback IPv4 interface here');
  const { base } = await fakeEtcd(t, (_req, res) => res.end('etcd_server_leader_changes_seen_total 1\n'), own);
  const fetched = await fetchEtcdMetrics(base, 10_000);
  assert.deepEqual(fetched.ok && fetched.latency.leaderChanges, 1);
});
