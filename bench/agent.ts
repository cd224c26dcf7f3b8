// Agent costs, side by side: API requests per hour at steady state, against the apiserver stand-in
// (time compressed 6000×) and against a real kube-apiserver (the real-server tier's binaries, the
// shipped manifests, the server's audit log; the agent's cycles compressed NTA_BENCH_AGENT_SPEEDUP×,
// default 30, over NTA_BENCH_AGENT_HOURS simulated hours, default 2; SPEEDUP=1 counts real hours;
// NTA_BENCH_API=stand-in|real|both picks),
// agent RSS after a while vs a bare idling node, and /metrics throughput at a fixed concurrency vs
// node_exporter (Debian prometheus-node-exporter) when installed.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { FakeApiServer } from '../test/helpers/fake-apiserver.ts';
import { runAgent } from '../test/helpers/agent-harness.ts';
import { seedReport } from '../test/helpers/reports.ts';
import { toolPath } from '../test/helpers/tools.ts';
import { realServerCost } from './_agent-real-server.ts';

const BIN = fileURLToPath(new URL('../bin/node-tuning-advisor.js', import.meta.url));
const HOST = fileURLToPath(new URL('../test/fixtures/hosts/intel-pstate-epp-power', import.meta.url));
const RSS_SECONDS = Number(process.env.NTA_BENCH_AGENT_SECONDS ?? 90);
const CONCURRENCY = 8;
const LEAN_FLAGS = ['--max-semi-space-size=1', '--max-old-space-size=64'];
const LOAD_SECONDS = 5;
const API = process.env.NTA_BENCH_API ?? 'both';
const SPEEDUP = Number(process.env.NTA_BENCH_AGENT_SPEEDUP ?? 30);
const REAL_HOURS = Number(process.env.NTA_BENCH_AGENT_HOURS ?? 2);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** 1 simulated hour = 12 agent intervals (5 min) = 1.33 watch lifetimes (45 min, the middle of 30–60). */
async function requestsPerHour(): Promise<{ perHour: number; writes: number; hours: number }> {
  const HOUR_MS = 600;
  const server = new FakeApiServer();
  await server.start();
  server.watchTimeoutMs = HOUR_MS * 0.75;
  server.addNode('worker-1');
  // kubelet reports node status every 5 min (nodeStatusReportFrequency) when nothing changes.
  const kubelet = setInterval(() => server.editNode('worker-1', (n) => { n.status.conditions = [{ type: 'Ready', status: 'True', lastHeartbeatTime: new Date().toISOString() }]; }), HOUR_MS / 12);
  const agent = runAgent(server.writeKubeconfig(), () => seedReport(), { agent: { intervalMs: HOUR_MS / 12 } });
  while (server.count('POST') < 3) await sleep(5);
  const settled = server.requests.length;
  const hours = 10;
  await sleep(HOUR_MS * hours);
  const steady = server.requests.slice(settled);
  clearInterval(kubelet);
  agent.agent.stop();
  await agent.result;
  await server.stop();
  return { perHour: steady.length / hours, writes: steady.filter((r) => r.method !== 'GET').length, hours };
}

function rssMiB(pid: number): number {
  const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN);
  return kb / 1024;
}

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  const port = (probe.address() as { port: number }).port;
  await new Promise((r) => probe.close(r));
  return port;
}

async function waitForHttp(url: string, timeoutMs = 20_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    try { if ((await fetch(url)).ok) return; } catch { /* not up yet */ }
    if (Date.now() > end) throw new Error(`${url} did not answer`);
    await sleep(50);
  }
}

async function scrapesPerSecond(url: string): Promise<number> {
  let done = 0;
  const end = performance.now() + LOAD_SECONDS * 1000;
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (performance.now() < end) {
      const res = await fetch(url);
      await res.arrayBuffer();
      if (res.ok) done += 1;
    }
  }));
  return done / LOAD_SECONDS;
}

function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

async function apiCost(): Promise<void> {
  if (API !== 'real') {
    const api = await requestsPerHour();
    console.log(`API requests per hour at steady state, apiserver stand-in: ${api.perHour.toFixed(1)} (writes: ${api.writes} over ${api.hours} simulated hours; interval 5 min, kubelet status every 5 min, apiserver ends watches after 45 min)`);
  }
  if (API === 'stand-in') return;
  const real = await realServerCost(SPEEDUP, REAL_HOURS, (line) => console.log(line));
  if (!real) return;
  const verbs = Object.entries(real.byVerb).map(([verb, n]) => `${verb} ${n.toFixed(1)}`).join(', ');
  const how = real.renewals
    ? `${real.hours} hours of agent cycles at ${real.speedup}× (interval and kubelet status compressed), plus the renewals of the ` +
      `${real.renewals.timeouts.length} watches open (timeoutSeconds ${real.renewals.timeouts.join(', ')}: 3600/t each)`
    : `${real.hours} hours counted as they happened`;
  console.log(`API requests per hour at steady state, real kube-apiserver ${real.version} (audit log): ${real.perHour.toFixed(1)} (${verbs || 'none'}), ` +
    `writes ${real.writesPerHour.toFixed(1)}/h, answered ≥ 400: ${real.failed}; ${how}`);
}

export async function run(): Promise<void> {
  await apiCost();
  if (process.env.NTA_BENCH_AGENT_API_ONLY === '1') return;

  const server = new FakeApiServer();
  await server.start();
  server.addNode('worker-1');
  const port = await freePort();
  const agent = spawn(process.execPath, [BIN, 'agent', '--kubeconfig', server.writeKubeconfig(), '--node-name', 'worker-1',
    '--host-root', HOST, '--interval', '5s', '--startup-jitter', '1ms', '--metrics-addr', `127.0.0.1:${port}`], { stdio: 'ignore' });
  // The same agent with a small young generation, as a DaemonSet could run it (NODE_OPTIONS).
  const smallPort = await freePort();
  const small = spawn(process.execPath, [...LEAN_FLAGS, BIN, 'agent', '--kubeconfig', server.writeKubeconfig(), '--node-name', 'worker-1',
    '--host-root', HOST, '--interval', '5s', '--startup-jitter', '1ms', '--metrics-addr', `127.0.0.1:${smallPort}`], { stdio: 'ignore' });
  const bare = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  await waitForHttp(`http://127.0.0.1:${port}/readyz`);
  await waitForHttp(`http://127.0.0.1:${smallPort}/readyz`);
  await sleep(RSS_SECONDS * 1000);
  const agentRss = rssMiB(agent.pid as number);
  const smallRss = rssMiB(small.pid as number);
  const bareRss = rssMiB(bare.pid as number);
  console.log(`RSS after ${RSS_SECONDS} s (scan every 5 s): agent ${agentRss.toFixed(1)} MiB (${(agentRss / bareRss).toFixed(2)}x), ` +
    `agent with ${LEAN_FLAGS.join(' ')} ${smallRss.toFixed(1)} MiB (${(smallRss / bareRss).toFixed(2)}x), bare node ${bareRss.toFixed(1)} MiB (goal ≤ 1.3x)`);
  await Promise.all([stop(bare), stop(small)]);

  const ours = await scrapesPerSecond(`http://127.0.0.1:${port}/metrics`);
  let line = `/metrics at concurrency ${CONCURRENCY} for ${LOAD_SECONDS} s: agent ${ours.toFixed(0)} req/s`;
  const exporter = toolPath('prometheus-node-exporter');
  if (exporter) {
    const nePort = await freePort();
    const ne = spawn(exporter, [`--web.listen-address=127.0.0.1:${nePort}`], { stdio: 'ignore' });
    await waitForHttp(`http://127.0.0.1:${nePort}/metrics`);
    line += `, node_exporter ${(await scrapesPerSecond(`http://127.0.0.1:${nePort}/metrics`)).toFixed(0)} req/s`;
    await stop(ne);
  } else {
    line += ', node_exporter not installed (apt-get install prometheus-node-exporter)';
  }
  console.log(line);
  console.log(`agent RSS after the /metrics load: ${rssMiB(agent.pid as number).toFixed(1)} MiB`);
  await stop(agent);
  await server.stop();
}
