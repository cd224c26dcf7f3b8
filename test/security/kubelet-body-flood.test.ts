// Issue 37 item 2: a fake kubelet endpoint (plain HTTP at the Node's InternalIP and kubelet port)
// answers /metrics with 8 MiB − 1 KiB of '\n', under the body cap. `text.split('\n')` built 8 million
// strings before the line cap was looked at: the shipped agent (the image's `node --lite-mode`, the
// DaemonSet's 64 MiB heap) died of heap exhaustion on its first read, on every start; a body of
// 120 000 valid bucket lines took it to 108 MiB resident (the limit is 128 MiB). Now the body is split
// into lines as it streams (never whole in memory), up to a line cap, and a histogram with more bounds
// than any real one is dropped: the agent's peak stays within its memory request (its steady state).
import { describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { AgentProcess, buildApp } from '../helpers/bundled-agent.ts';
import { FakeApiServer } from '../helpers/fake-apiserver.ts';
import { fixtureHost } from '../helpers/fixtures.ts';
import { mebibytes, shippedAgentCommand, withFlags } from '../helpers/shipped-agent.ts';
import { parseHistograms } from '../../src/agent/kubelet-sli.ts';
import { MAX_BUCKETS } from '../../src/text/prometheus-text.ts';
import { parsePrometheusText } from '../../src/collectors/etcd/metrics.ts';

const NEWLINES = '\n'.repeat(8 * 1024 * 1024 - 1024);
const SLI = 'kubelet_pod_start_sli_duration_seconds';

/** A valid exposition of one histogram with `buckets` distinct bounds (one line each). */
function manyBuckets(name: string, buckets: number): string {
  const lines: string[] = [`# TYPE ${name} histogram`];
  for (let i = 1; i <= buckets; i++) lines.push(`${name}_bucket{le="${i}"} ${i}`);
  lines.push(`${name}_bucket{le="+Inf"} ${buckets}`, '');
  return lines.join('\n');
}

/** Peak resident set of a process (VmHWM), MiB. */
async function peakRssMiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/^VmHWM:\s+(\d+) kB/m.exec(status)?.[1]) / 1024;
}

async function agentAgainst(t: TestContext, body: string): Promise<{ agent: AgentProcess; requestMiB: number }> {
  const dir = await mkdtemp(path.join(tmpdir(), 'nta-kubelet-flood-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const kubelet = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end(body));
  await new Promise<void>((resolve) => kubelet.listen(0, '127.0.0.1', resolve));
  t.after(() => { kubelet.closeAllConnections(); kubelet.close(); });
  const server = new FakeApiServer();
  await server.start();
  t.after(() => server.stop());
  server.addNode('worker-1');
  server.editNode('worker-1', (n) => {
    n.status.addresses = [{ type: 'InternalIP', address: '127.0.0.1' }];
    n.status.daemonEndpoints = { kubeletEndpoint: { Port: (kubelet.address() as { port: number }).port } };
  });
  const [bundle, shipped] = await Promise.all([buildApp(path.join(dir, 'app')), shippedAgentCommand()]);
  const args = withFlags(shipped.args, {
    kubeconfig: server.writeKubeconfig(), 'node-name': 'worker-1', 'host-root': fixtureHost('seed-000-before'),
    'metrics-addr': '127.0.0.1:0', interval: '2s', 'startup-jitter': '1ms', 'probe-interval': 'off', rules: undefined,
  });
  const agent = AgentProcess.start(bundle, args, shipped.env);
  t.after(() => agent.stop());
  return { agent, requestMiB: mebibytes(shipped.memory.request) as number };
}

describe('a kubelet endpoint that floods the agent with lines', { concurrency: true }, () => {
  test('8 MiB − 1 KiB of newlines: the shipped agent reads it every cycle and lives', { timeout: 180_000 }, async (t) => {
    const { agent, requestMiB } = await agentAgainst(t, NEWLINES);
    await agent.waitForCycles(2);
    assert.ok(agent.running, agent.log.slice(-3000));
    assert.match(agent.log, /kubelet \/metrics: read from http:\/\/127\.0\.0\.1:\d+\/metrics/);
    const peak = await peakRssMiB(agent.pid);
    t.diagnostic(`peak RSS ${peak.toFixed(1)} MiB`);
    assert.ok(peak < requestMiB, `peak RSS ${peak.toFixed(1)} MiB within the container's ${requestMiB} MiB request`);
  });

  test('120 000 valid bucket lines (under the body cap): the histogram dropped, the agent within its request', { timeout: 180_000 }, async (t) => {
    const { agent, requestMiB } = await agentAgainst(t, manyBuckets(SLI, 120_000));
    await agent.waitForCycles(2);
    assert.ok(agent.running, agent.log.slice(-3000));
    const peak = await peakRssMiB(agent.pid);
    t.diagnostic(`peak RSS ${peak.toFixed(1)} MiB`);
    assert.ok(peak < requestMiB, `peak RSS ${peak.toFixed(1)} MiB within the container's ${requestMiB} MiB request`);
  });
});

test('a histogram with more bounds than any real one is dropped, not kept bucket by bucket', () => {
  // Never hand a 170 000-entry object to assert's diff: compare its size.
  const parsed = parseHistograms(manyBuckets(SLI, 170_000));
  assert.equal(parsed.sli?.bounds.length ?? 0, 0, 'a 170 000-bound histogram is not one a kubelet exports');
  const real = parseHistograms(manyBuckets(SLI, MAX_BUCKETS - 1));
  assert.equal(real.sli?.bounds.length, MAX_BUCKETS, 'up to the cap it is read');
});

test('etcd\'s parser keeps only what it reads: metric names it does not use are not collected', () => {
  const names = Array.from({ length: 50_000 }, (_, i) => `junk_metric_${i} 1`).join('\n');
  const parsed = parsePrometheusText(`${names}\netcd_server_leader_changes_seen_total 3\n`);
  assert.equal(parsed.values.get('etcd_server_leader_changes_seen_total'), 3);
  assert.ok(parsed.values.size <= 4, `${parsed.values.size} names kept`);
  assert.equal(parsePrometheusText(NEWLINES).values.size, 0);
});
