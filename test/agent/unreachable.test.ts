// An API server that cannot be reached at start (issue 24): `agent --once`, `report` and the
// long-running agent say so in one line naming the server's URL and stop, instead of retrying for
// minutes. Real sockets: a port nobody listens on (refused) and a server that accepts TCP and never
// answers the TLS handshake (what a firewall dropping packets or a dead address looks like to a client).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { KubeClient } from '../../src/kube/client.ts';
import { KubeError } from '../../src/kube/errors.ts';
import { NODES } from '../../src/kube/resources.ts';
import { runCli } from '../helpers/cli.ts';
import { runAgent } from '../helpers/agent-harness.ts';
import { seedReport } from '../helpers/reports.ts';
import { freePort } from '../helpers/control-plane.ts';

const HOST = fileURLToPath(new URL('../fixtures/hosts/intel-pstate-epp-power', import.meta.url));

async function kubeconfigFor(dir: string, server: string): Promise<string> {
  const file = path.join(dir, `${new URL(server).port}.kubeconfig`);
  await writeFile(file, `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "${server}", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`);
  return file;
}

test('unreachable at start: agent --once and report name the URL; the agent exits 1 at the first failure', async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'nta-unreachable-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const server = `https://127.0.0.1:${await freePort()}`;
  const kubeconfig = await kubeconfigFor(dir, server);

  const once = await runCli(['agent', '--once', '--kubeconfig', kubeconfig, '--node-name', 'worker-1', '--host-root', HOST]);
  assert.equal(once.code, 1, once.stderr);
  const last = once.stderr.trim().split('\n').at(-1) as string;
  assert.equal(last, `agent: cannot reach the API server ${server}: ECONNREFUSED; no answer, exiting (check the kubeconfig's server or the in-cluster service address)`);
  assert.doesNotMatch(once.stderr, /scan: score/, 'no scan against a server that is not there');

  const report = await runCli(['report', '--kubeconfig', kubeconfig]);
  assert.equal(report.code, 2);
  assert.equal(report.stderr, `node-tuning-advisor report: cannot list nodes: cannot reach the API server ${server}: ECONNREFUSED\n`);

  // The long-running agent retries within its window (scanning meanwhile, for /metrics), then exits 1 with the same line.
  const started = performance.now();
  const run = runAgent(kubeconfig, () => seedReport(), { agent: { reachWindowMs: 300 } });
  assert.equal(await run.result, 1, run.logs.join('\n'));
  assert.ok(performance.now() - started >= 300);
  assert.match(run.logs.at(-1) as string, new RegExp(`^cannot reach the API server ${server}: ECONNREFUSED; no answer for 0.3 s, exiting`));
  assert.ok(run.logs.filter((l) => l.includes('failed (cannot reach')).length >= 2, `retried within the window:\n${run.logs.join('\n')}`);
});

test('a server that accepts TCP but never completes TLS: the connect timeout ends the request and names the URL', async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'nta-silent-'));
  const sockets = new Set<net.Socket>();
  const silent = net.createServer((socket) => { sockets.add(socket); socket.on('error', () => {}); });
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  t.after(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => silent.close(resolve));
    await rm(dir, { recursive: true, force: true });
  });
  const server = `https://127.0.0.1:${(silent.address() as net.AddressInfo).port}`;
  const client = KubeClient.fromKubeconfig(await kubeconfigFor(dir, server), { connectTimeoutMs: 300, timeoutMs: 60_000 });
  t.after(() => client.stop());
  const error = await client.list(NODES).then(() => undefined, (err: unknown) => err);
  assert.ok(error instanceof KubeError, String(error));
  assert.equal(error.code, 'ETIMEDOUT');
  assert.ok(error.unreachable);
  assert.equal(error.message, `cannot list nodes: cannot reach the API server ${server}: ETIMEDOUT (no connection within 0.3 s)`);
  assert.ok(sockets.size >= 1, 'the TCP connection was accepted: the TLS handshake is what timed out');
});
