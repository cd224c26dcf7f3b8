// The kubelet reader's bounds, against real TLS sockets on free ports (a certificate made by openssl
// for 127.0.0.1): a body over the cap is not read, a server that never answers is given up on at the
// deadline, a redirect is not followed, a certificate issued for another name is refused; and the
// token is the in-cluster service account's, re-read from its file (KubeClient.bearerAndCa).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { KubeletMetricsReader, kubeletTarget } from '../../src/agent/kubelet-metrics.ts';
import { kubeletMetricsReader } from '../../src/agent/kubelet-sli.ts';
import { KubeClient } from '../../src/kube/client.ts';
import { SERVICE_ACCOUNT_DIR } from '../../src/kube/config.ts';

const run = promisify(execFile);

async function selfSigned(dir: string, san: string): Promise<{ cert: string; key: string }> {
  const base = path.join(dir, san.replace(/\W/g, '_'));
  await run('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', `${base}.key`, '-subj', '/CN=kubelet',
    '-days', '1', '-addext', `subjectAltName=${san}`, '-out', `${base}.crt`]);
  return { cert: await readFile(`${base}.crt`, 'utf8'), key: await readFile(`${base}.key`, 'utf8') };
}

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as { port: number }).port;
}

test('bounded: body cap, deadline, no redirects, the certificate must be this node\'s', async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'nta-kubelet-bounds-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const [ours, another] = await Promise.all([selfSigned(dir, 'IP:127.0.0.1'), selfSigned(dir, 'DNS:other-node')]);
  const behaviour: { mode: 'big' | 'silent' | 'redirect' | 'ok' } = { mode: 'ok' };
  const server = createServer({ ...ours }, (_req, res) => {
    if (behaviour.mode === 'big') { res.writeHead(200); res.end('x'.repeat(64 * 1024)); return; }
    if (behaviour.mode === 'redirect') { res.writeHead(302, { location: 'https://example.invalid/metrics' }).end(); return; }
    if (behaviour.mode === 'silent') return; // never answers
    res.writeHead(200).end('kubelet_pod_start_sli_duration_seconds_count 0\n');
  });
  const port = await listen(server);
  t.after(() => { server.closeAllConnections(); server.close(); });
  const target = kubeletTarget({ status: { daemonEndpoints: { kubeletEndpoint: { Port: port } }, addresses: [{ type: 'InternalIP', address: '127.0.0.1' }] } }, 'node-1');
  assert.deepEqual(target, { address: '127.0.0.1', port, names: ['node-1', '127.0.0.1'] });
  const reader = new KubeletMetricsReader({ credentials: async () => ({ token: 't', ca: ours.cert }), timeoutMs: 500, maxBytes: 16 * 1024 });

  assert.equal((await reader.read(target!, '/metrics', kubeletMetricsReader().lines)).ok, true);
  behaviour.mode = 'big';
  const big = await reader.read(target!, '/metrics', kubeletMetricsReader().lines);
  assert.ok(!big.ok && big.result === 'error' && /sent more than 16384 bytes|announces 65536 bytes/.test(big.reason), JSON.stringify(big));
  behaviour.mode = 'redirect';
  const redirect = await reader.read(target!, '/metrics', kubeletMetricsReader().lines);
  assert.ok(!redirect.ok && /redirects are not followed/.test(redirect.reason), JSON.stringify(redirect));
  behaviour.mode = 'silent';
  const silent = await reader.read(target!, '/metrics', kubeletMetricsReader().lines);
  assert.ok(!silent.ok && silent.result === 'unreachable' && /no complete answer within 500 ms/.test(silent.reason), JSON.stringify(silent));

  // Signed by a trusted CA (itself) but issued for another node: refused.
  const foreign = createServer({ ...another }, (_req, res) => res.writeHead(200).end(''));
  const foreignPort = await listen(foreign);
  t.after(() => foreign.close());
  const wrongName = await new KubeletMetricsReader({ credentials: async () => ({ token: 't', ca: another.cert }) }).read({ ...target!, port: foreignPort }, '/metrics', kubeletMetricsReader().lines);
  assert.ok(!wrongName.ok && wrongName.result === 'tls' && /ERR_TLS_CERT_ALTNAME_INVALID/.test(wrongName.reason), JSON.stringify(wrongName));
});

test('in-cluster: the token from the service account\'s file (re-read when it rotates), the CA from its ca.crt', async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'nta-kubelet-sa-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const sa = path.join(dir, SERVICE_ACCOUNT_DIR);
  await mkdir(sa, { recursive: true });
  const ca = await selfSigned(dir, 'IP:127.0.0.1');
  await writeFile(path.join(sa, 'token'), 'first-token\n');
  await writeFile(path.join(sa, 'ca.crt'), ca.cert);
  const client = KubeClient.fromSource({ kind: 'in-cluster', root: dir, host: '127.0.0.1', port: '6443' });
  const first = await client.bearerAndCa();
  assert.equal(first.token, 'first-token');
  assert.match(first.ca ?? '', /BEGIN CERTIFICATE/);
  await writeFile(path.join(sa, 'token'), 'rotated-token-longer\n');
  assert.equal((await client.bearerAndCa()).token, 'rotated-token-longer');
});
