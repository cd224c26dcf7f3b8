// Issue 17 item 2: anything on the pod network can reach the metrics port. ~2 000 pipelined
// `GET /metrics` on one connection whose responses are never read must not take the agent down
// (the DaemonSet's NODE_OPTIONS heap limit, the real agent process against the API stand-in), and
// /healthz keeps answering meanwhile; idle and trickling clients are cut off.
import { describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { SERVER_LIMITS } from '../../src/agent/metrics-server.ts';
import { createAgentMetrics } from '../../src/publish/metrics.ts';
import { FakeApiServer } from '../helpers/fake-apiserver.ts';
import { fixtureHost } from '../helpers/fixtures.ts';

const BIN = fileURLToPath(new URL('../../bin/node-tuning-advisor.js', import.meta.url));
const DAEMONSET = fileURLToPath(new URL('../../manifests/base/daemonset/daemonset.yaml', import.meta.url));

/** NODE_OPTIONS exactly as the DaemonSet sets them. */
function daemonSetNodeOptions(): string {
  const ds = parse(readFileSync(DAEMONSET, 'utf8'));
  const env = ds.spec.template.spec.containers[0].env as { name: string; value?: string }[];
  const value = env.find((e) => e.name === 'NODE_OPTIONS')?.value;
  assert.ok(value?.includes('--max-old-space-size'), 'the DaemonSet limits the heap');
  return value as string;
}

interface Agent { child: ChildProcess; port: number; stderr: () => string; exited: Promise<number | null> }

async function startAgent(t: TestContext): Promise<Agent> {
  const server = new FakeApiServer();
  await server.start();
  t.after(() => server.stop());
  server.addNode('worker-1');
  const child = spawn(process.execPath, [BIN, 'agent', '--kubeconfig', server.writeKubeconfig(), '--node-name', 'worker-1',
    '--host-root', fixtureHost('seed-000-before'), '--interval', '1h', '--startup-jitter', '0s', '--metrics-addr', '127.0.0.1:0'],
  { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, NODE_OPTIONS: daemonSetNodeOptions() } });
  let err = '';
  child.stderr?.on('data', (d) => { err += d; });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code, signal) => resolve(code ?? (signal ? -1 : null))));
  t.after(() => { if (child.exitCode === null) child.kill('SIGKILL'); });
  const deadline = Date.now() + 30_000;
  let port: number | undefined;
  while (Date.now() < deadline && child.exitCode === null) {
    port ??= Number(/on 127\.0\.0\.1:(\d+)/.exec(err)?.[1]) || undefined;
    if (port && (await fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.status, () => 0)) === 200) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.ok(port, `the agent did not start: ${err}`);
  return { child, port, stderr: () => err, exited };
}

function closed(socket: Socket): Promise<void> {
  return new Promise((resolve) => { if (socket.destroyed) resolve(); else socket.once('close', () => resolve()); });
}

async function healthz(port: number): Promise<number> {
  return fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(20_000) }).then((r) => r.status, () => 0);
}

test('2 000 pipelined GET /metrics never read: the agent survives, /healthz answers, the flooding connection is cut', { timeout: 120_000 }, async (t) => {
  const agent = await startAgent(t);
  const flood = connect(agent.port, '127.0.0.1');
  flood.on('error', () => undefined);
  await new Promise((resolve) => flood.once('connect', resolve));
  flood.pause();
  flood.write('GET /metrics HTTP/1.1\r\nHost: agent\r\n\r\n'.repeat(2000));
  assert.equal(await healthz(agent.port), 200, `a probe on another connection is answered during the flood; agent stderr: ${agent.stderr().slice(-1500)}`);
  await closed(flood);
  assert.equal(agent.child.exitCode, null, `the agent died under the flood: ${agent.stderr().slice(-2000)}`);
  assert.equal(await healthz(agent.port), 200, `/healthz after the flood; agent stderr: ${agent.stderr().slice(-2000)}`);
  const metrics = await (await fetch(`http://127.0.0.1:${agent.port}/metrics`)).text();
  assert.match(metrics, /^node_tuning_advisor_score \d+$/m);
});

// The slow-client and connection-cap cases, each with its own agent and stand-in (the caps count per
// agent and per address), mostly wait on the server's timeouts and the agent's first publish: side by side.
// The flood above runs alone: it is the one that loads the machine.
describe('slow and idle clients', { concurrency: true }, () => {
  test('a client that sends half a request and waits, and one that connects and says nothing, are disconnected', { timeout: 120_000 }, async (t) => {
    const agent = await startAgent(t);
    const sockets = [connect(agent.port, '127.0.0.1'), connect(agent.port, '127.0.0.1')];
    for (const s of sockets) s.on('error', () => undefined).resume();
    await Promise.all(sockets.map((s) => new Promise((resolve) => s.once('connect', resolve))));
    sockets[0]?.write('GET /metrics HTTP/1.1\r\nHost: a');
    await Promise.all(sockets.map(closed));
    assert.equal(await healthz(agent.port), 200);
  });

  test('one address holding many idle connections is capped, and /healthz from another address still answers', { timeout: 120_000 }, async (t) => {
    const agent = await startAgent(t);
    const idle: Socket[] = [];
    let refused = 0;
    const allRefused = new Promise<void>((resolve) => {
      for (let i = 0; i < 300; i++) {
        const s = connect({ port: agent.port, host: '127.0.0.1', localAddress: '127.0.0.2' });
        s.on('error', () => undefined).resume();
        s.once('close', () => { if (++refused === 300 - SERVER_LIMITS.maxConnectionsPerAddress) resolve(); });
        idle.push(s);
      }
    });
    await allRefused;
    assert.ok(idle.filter((s) => !s.destroyed).length <= SERVER_LIMITS.maxConnectionsPerAddress, 'at most the cap stays open');
    assert.equal(await healthz(agent.port), 200, 'the kubelet probe (another address) is answered');
    for (const s of idle) s.destroy();
    assert.equal(agent.child.exitCode, null);
  });

  /** One GET on a fresh connection from `localAddress`: the status, 0 when refused or cut. */
  function getFrom(port: number, urlPath: string, localAddress: string): Promise<number> {
    return new Promise((resolve) => {
      const req = request({ port, host: '127.0.0.1', path: urlPath, localAddress, agent: false, timeout: 20_000 }, (res) => {
        res.resume();
        res.once('end', () => resolve(res.statusCode ?? 0));
      });
      req.once('error', () => resolve(0));
      req.once('timeout', () => req.destroy());
      req.end();
    });
  }

  /** A keep-alive connection from `localAddress` that asked once, read its answer and stays open. */
  async function keptAlive(port: number, localAddress: string): Promise<Socket> {
    const socket = connect({ port, host: '127.0.0.1', localAddress });
    socket.on('error', () => undefined);
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write('GET /healthz HTTP/1.1\r\nHost: agent\r\n\r\n');
    await new Promise((resolve) => { socket.once('data', resolve); socket.once('close', resolve); });
    socket.resume();
    return socket;
  }

  // Issue 22 item 4: 4 addresses × 16 keep-alive connections filled the 64 and every new connection
  // was refused: the kubelet's liveness probe and Prometheus were locked out until the holders let go.
  test('64 keep-alive connections from 4 addresses: a probe and a scrape from other addresses still get in', { timeout: 120_000 }, async (t) => {
    const agent = await startAgent(t);
    const holders: Socket[] = [];
    t.after(() => { for (const s of holders) s.destroy(); });
    const attackers = ['127.0.0.2', '127.0.0.3', '127.0.0.4', '127.0.0.5'];
    for (const address of attackers) {
      holders.push(...(await Promise.all(Array.from({ length: SERVER_LIMITS.maxConnectionsPerAddress }, () => keptAlive(agent.port, address)))));
    }
    // (The test's own keep-alive socket of the readiness polls may hold one.)
    assert.ok(holders.filter((s) => !s.destroyed).length >= SERVER_LIMITS.maxConnections - 1, 'the attack holds every slot');
    assert.equal(await getFrom(agent.port, '/healthz', '127.0.0.1'), 200, `the kubelet's probe is answered; agent stderr: ${agent.stderr().slice(-1500)}`);
    assert.equal(await getFrom(agent.port, '/metrics', '127.0.0.6'), 200, 'a scrape is answered');
    assert.ok(holders.filter((s) => !s.destroyed).length <= SERVER_LIMITS.maxConnections, 'the total stays capped');
    assert.equal(agent.child.exitCode, null);
  });
});

test('the exposition text is rendered once per change, however many scrapes ask at once', async () => {
  const metrics = createAgentMetrics('test');
  const original = metrics.registry.metrics.bind(metrics.registry);
  let renders = 0;
  metrics.registry.metrics = () => { renders += 1; return original(); };
  const texts = await Promise.all(Array.from({ length: 1000 }, () => metrics.render()));
  assert.equal(renders, 1);
  assert.equal(new Set(texts).size, 1);
  await metrics.render();
  assert.equal(renders, 1, 'nothing changed: the cached text');
  metrics.countApiRequest('patch', '200');
  assert.match(await metrics.render(), /api_requests_total\{verb="patch",code="200"\} 1/);
  assert.equal(renders, 2);
});
