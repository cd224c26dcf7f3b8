// A gone agent shows stale, on a real kube-apiserver with the shipped base: node B's agent ran
// `--once` (heartbeat at the DaemonSet's default 5 min: current for 15 min), node A's agent runs as
// deployed with `--heartbeat 10s`. Its steady state is counted from the audit log: one write per
// heartbeat, the Lease renewal, nothing else. Then A's agent is killed with SIGKILL: `report -o json`,
// `describe` and the kubectl plugin's `describe`, run again and again, call A current while its last
// renewal is younger than 3 heartbeats and stale once it is older; B stays current; the head line
// counts A apart.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { ClusterReport } from '../../src/cluster/report.ts';
import type { NodeAdvice } from '../../src/cluster/node-advice.ts';
import { auditArgs, describeRequests, isWrite, type AuditLog } from '../helpers/audit.ts';
import { AgentProcess, buildApp } from '../helpers/bundled-agent.ts';
import { ControlPlane, realServerTier } from '../helpers/control-plane.ts';
import { createReadyNode } from '../helpers/kube-objects.ts';
import { BASE, REPO } from '../helpers/manifests.ts';
import { AGENT_NAMESPACE, AGENT_USER, agentIdentity, applyKustomization, daemonSetRun } from '../helpers/shipped.ts';

const A = 'live-a';
const B = 'live-b';
const HOST = path.join(REPO, 'test/fixtures/hosts/seed-000-before');
const HEARTBEAT_S = 10;
const LEASE = (node: string) => `/apis/coordination.k8s.io/v1/namespaces/${AGENT_NAMESPACE}/leases/${node}`;
/** Renewals counted in the steady state. */
const RENEWALS = 4;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('a killed agent\'s node turns stale; its steady state is one write per heartbeat', realServerTier(), () => {
  let cp: ControlPlane;
  let audit: AuditLog;
  let tmp: string;
  let bundle: string;
  let agent: AgentProcess | undefined;

  before(async () => {
    tmp = await mkdtemp(path.join(tmpdir(), 'nta-liveness-'));
    const auditing = await auditArgs(tmp, [AGENT_USER]);
    audit = auditing.log;
    [cp, bundle] = await Promise.all([ControlPlane.start({ apiserverArgs: auditing.args }), buildApp(path.join(tmp, 'app'))]);
    const applied = await applyKustomization(cp, BASE);
    assert.equal(applied.code, 0, applied.stderr);
    for (const node of [A, B]) await createReadyNode(cp, node);
    const runOf = async (node: string) => daemonSetRun(cp, 'node-tuning-advisor', {
      node, hostRoot: HOST, rulesDir: path.join(tmp, `rules-${node}`), kubeconfig: (await agentIdentity(cp, node, tmp)).kubeconfig,
    });
    const [runA, runB] = await Promise.all([runOf(A), runOf(B)]);
    assert.ok(!runA.args.some((a) => a.startsWith('--heartbeat')), 'the DaemonSet keeps the default heartbeat, 5 min');
    const once = AgentProcess.start(bundle, [...runB.args, '--once', '--probe-interval=off'], runB.env);
    assert.equal(await once.wait(), 0, once.log);
    // One scan an hour: after its first publish, only the heartbeat may write.
    agent = AgentProcess.start(bundle, [...runA.args, `--heartbeat=${HEARTBEAT_S}s`, '--interval=1h', '--startup-jitter=1ms', '--probe-interval=off'], runA.env);
  });
  after(async () => {
    if (agent?.running) agent.child.kill('SIGKILL');
    await cp?.stop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  const cli = async (file: string, args: string[]) => {
    const proc = AgentProcess.start(path.join(path.dirname(bundle), file), [...args, `--kubeconfig=${cp.kubeconfig}`], {});
    return { code: await proc.wait(), out: proc.log };
  };
  const report = async () => JSON.parse((await cli('node-tuning-advisor.mjs', ['report', '-o', 'json', '--fail-on=never'])).out) as ClusterReport;
  const describeJson = async () => JSON.parse((await cli('node-tuning-advisor.mjs', ['describe', A, '-o', 'json'])).out) as NodeAdvice;
  const renewedAt = async (node: string) => Date.parse((await cp.must('GET', LEASE(node))).spec.renewTime);

  test(`steady state: one write per heartbeat (the Lease renewal), nothing else: at the default 5 min, 12 an hour`, async (t) => {
    const leaseWrites = async () => (await audit.requests((r) => r.user === AGENT_USER && isWrite(r) && r.path === LEASE(A)));
    // The first publish wrote the Node, its Events and created the Lease: the window opens at the first renewal after that.
    const opened = await until(`a renewal after the create`, async () => (await leaseWrites()).find((r) => r.verb === 'patch'), 60_000);
    const closed = await until(`${RENEWALS} more renewals`, async () => (await leaseWrites()).filter((r) => r.verb === 'patch' && r.at > opened.at)[RENEWALS - 1], 120_000);
    const window = (await audit.requests((r) => r.user === AGENT_USER && r.at > opened.at && r.at <= closed.at));
    const writes = window.filter(isWrite);
    assert.deepEqual(writes.map((r) => `${r.verb} ${r.path} ${r.code}`), Array.from({ length: RENEWALS }, () => `patch ${LEASE(A)} 200`), describeRequests(window));
    assert.deepEqual(window.filter((r) => !isWrite(r) && r.verb !== 'watch'), [], 'no read either, but the watches');
    const seconds = (closed.at - opened.at) / 1000;
    assert.ok(seconds >= RENEWALS * HEARTBEAT_S, `never more often than the period: ${RENEWALS} renewals in ${seconds.toFixed(1)} s`);
    t.diagnostic(`${writes.length} writes in ${seconds.toFixed(1)} s at --heartbeat ${HEARTBEAT_S}s (${(seconds / writes.length).toFixed(1)} s apart): `
      + `${((writes.length * 3600) / seconds).toFixed(0)}/h; at the default 5m: ${((writes.length * 3600) / (seconds * 30)).toFixed(1)}/h per node`);
  });

  test('SIGKILL: report -o json, describe and the plugin call A current, then stale once its last heartbeat is 3 periods old; B stays current', async (t) => {
    const before = await report();
    assert.deepEqual(before.nodes.map((n) => [n.name, n.heartbeat?.state]), [[A, 'current'], [B, 'current']]);
    assert.deepEqual([before.summary.withAgent, before.summary.stale], [2, 0]);
    const live = agent as AgentProcess;
    live.child.kill('SIGKILL');
    await live.wait();
    const last = await renewedAt(A);
    const limit = 3 * HEARTBEAT_S;
    // Run after run until one says stale: each must say what the last renewal's age says (± rounding).
    const seen: string[] = [];
    let stale: ClusterReport | undefined;
    for (const guard = Date.now() + 120_000; !stale && Date.now() < guard;) {
      const run = await report();
      const row = run.nodes.find((n) => n.name === A);
      const age = (Date.parse(run.generatedAt) - last) / 1000;
      seen.push(`${age.toFixed(1)} s: ${row?.heartbeat?.state}`);
      if (age < limit - 0.5) assert.equal(row?.heartbeat?.state, 'current', seen.join('\n'));
      if (age > limit + 0.5) assert.equal(row?.heartbeat?.state, 'stale', seen.join('\n'));
      if (row?.heartbeat?.state === 'stale') stale = run;
      else await sleep(1000);
    }
    assert.ok(stale, `never stale:\n${seen.join('\n')}`);
    t.diagnostic(`reports after the kill (age of the last heartbeat: A's state): ${seen.join('; ')}`);
    const rowA = stale.nodes.find((n) => n.name === A);
    assert.equal(rowA?.heartbeat?.staleAfterSeconds, limit);
    assert.match(rowA?.heartbeat?.reason ?? '', /^last heartbeat \d+ s ago, stale after 30 s: its agent stopped/);
    assert.equal(rowA?.agent, 'ok', 'its annotations are still read, and shown');
    assert.equal(stale.nodes.find((n) => n.name === B)?.heartbeat?.state, 'current');
    assert.deepEqual([stale.summary.withAgent, stale.summary.stale, stale.summary.heartbeats?.leases], [1, 1, 2]);

    const advice = await describeJson();
    assert.equal(advice.heartbeat?.state, 'stale');
    assert.ok(advice.report, 'the last published report is still shown');
    const table = await cli('node-tuning-advisor.mjs', ['report', '--fail-on=never']);
    assert.match(table.out, /\(1 with agent, 1 stale\)/);
    assert.match(table.out.split('\n').find((l) => l.startsWith(A)) ?? '', /STALE: last heartbeat/);
    const plugin = await cli('kubectl-node_tuning.mjs', ['describe', A]);
    assert.match(plugin.out, /^STALE: last heartbeat \d+ s ago, stale after 30 s/m, plugin.out);
  });
});

async function until<T>(what: string, check: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await sleep(250);
  }
}
