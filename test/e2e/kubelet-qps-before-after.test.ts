// The seeds' before/after test, end to end on a real kubelet: a hollow node (kubemark --morph=kubelet)
// at the old default client limits 5/10, started through a symlink named `kubelet` in its own PID
// namespace, so `scan` and the agent (run inside that namespace, host root /) read its limits from
// the running process's command line, as on a node. scan reports kubelet-api-qps failing with its
// fix; the agent publishes the node's facts; `measure --save`; the kubelet restarted at the limits
// the advisor recommends; the agent again; `measure --compare` shows the p99 change and credits it
// to the kubelet's QPS/burst.
import { spawn } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ControlPlane, freePort, realServerTier } from '../helpers/control-plane.ts';
import { HollowNode } from '../helpers/hollow-node.ts';
import { CLI } from '../helpers/measure-cli.ts';

const NODE = 'seed-000';
const PODS = 20;

interface Ran { code: number | null; stdout: string; stderr: string }

/** Unshare/nsenter need root: the tier skips (locally) with the reason otherwise. */
function namespaceTier(): { skip?: string } {
  const base = realServerTier();
  if (base.skip) return base;
  if (process.getuid?.() !== 0) {
    if (process.env.CI === 'true') throw new Error('the before/after e2e runs its kubelet in its own PID namespace: run the suite as root');
    return { skip: 'the before/after e2e needs root (unshare --pid, nsenter)' };
  }
  return {};
}

function run(argv: string[], home: string): Promise<Ran> {
  const [command, ...args] = argv as [string, ...string[]];
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH, HOME: home } });
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout.on('data', (c: Buffer) => out.push(c));
  child.stderr.on('data', (c: Buffer) => err.push(c));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout: Buffer.concat(out).toString(), stderr: Buffer.concat(err).toString() })));
}

describe('kubelet QPS before/after on a real kubelet: scan finds it, measure proves the fix', namespaceTier(), () => {
  let cp: ControlPlane;
  let tmp: string;
  let kubelet: HollowNode;

  before(async () => {
    tmp = await mkdtemp(path.join(tmpdir(), 'nta-before-after-'));
    cp = await ControlPlane.start({ scheduler: true, controllerManager: true });
    kubelet = await HollowNode.start(cp, NODE, { qps: 5, burst: 10, ownPidNamespace: true });
  });

  after(async () => {
    await kubelet?.stop();
    await cp?.stop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  /** The agent once on this node, inside the kubelet's namespace with host root /: publishes its facts. */
  async function agentOnce(): Promise<void> {
    const ran = await run(kubelet.inNamespace([process.execPath, CLI, 'agent', '--once', '--kubeconfig', cp.kubeconfig, '--node-name', NODE,
      '--startup-jitter', '0s', '--probe-interval', 'off', '--metrics-addr', `127.0.0.1:${await freePort()}`]), tmp);
    assert.equal(ran.code, 0, ran.stderr);
    const node = await cp.must('GET', `/api/v1/nodes/${NODE}`);
    assert.match(node.metadata.annotations['node-tuning-advisor.io/summary'] ?? '', /\S/, 'the agent published its summary');
  }

  const measure = (extra: string[]): Promise<Ran> =>
    run([process.execPath, CLI, 'measure', 'pod-startup', '--kubeconfig', cp.kubeconfig, '--node', NODE, '--pods', String(PODS), '--output', 'json', '--cleanup-wait', '0s', ...extra], tmp);

  test('5/10 → scan fails kubelet-api-qps → measure → restart at the fix → measure --compare credits the kubelet QPS change', async (t) => {
    const steps: string[] = [];
    let last = Date.now();
    const step = (name: string): void => { steps.push(`${name} ${((Date.now() - last) / 1000).toFixed(1)} s`); last = Date.now(); };
    t.after(() => t.diagnostic(`steps: ${steps.join(', ')}`));
    // scan and the agent's first publish read the same kubelet: side by side (the agent's client sends 1 request/s).
    const [scan] = await Promise.all([run(kubelet.inNamespace([process.execPath, CLI, 'scan', '--output', 'json']), tmp), agentOnce()]);
    const finding = JSON.parse(scan.stdout).findings.find((f: any) => f.ruleId === 'kubelet-api-qps');
    assert.equal(finding?.status, 'fail', scan.stderr);
    assert.match(finding.evidence.find((e: any) => e.fact === 'kubelet.kubeAPIQPS').detail, /set in \/proc\/\d+\/cmdline/, 'read from the running process');
    const qps = finding.evidence.find((e: any) => e.fact === 'kubelet.suggestedQPS').value as number;
    const burst = finding.evidence.find((e: any) => e.fact === 'kubelet.suggestedBurst').value as number;
    assert.match(finding.remediation.summary, new RegExp(`raise kubeAPIQPS/kubeAPIBurst to ${qps}/${burst}`));
    t.diagnostic(`scan: ${finding.observed} → ${finding.remediation.summary}`);

    step('scan and agent');
    const beforeFile = path.join(tmp, 'before.json');
    const first = await measure(['--save', beforeFile]);
    assert.ok(first.code === 0 || first.code === 1, first.stderr);
    const b = JSON.parse(first.stdout);
    assert.deepEqual([b.counts.ready, b.advisor.facts['kubelet.kubeAPIQPS'].value], [PODS, 5]);

    step('measure');
    await kubelet.restart({ qps, burst });
    step('restart');
    await agentOnce();
    step('agent');
    const second = await measure(['--compare', beforeFile]);
    assert.ok(second.code === 0 || second.code === 1, second.stderr);
    step('measure --compare');
    const a = JSON.parse(second.stdout);
    const c = a.comparison;
    const total = c.phases.find((p: any) => p.phase === 'total');
    t.diagnostic(`total p50 ${total.before.p50Ms} → ${total.after.p50Ms} ms, p99 ${total.before.p99Ms} → ${total.after.p99Ms} ms; ${c.credit}`);
    assert.equal(a.counts.ready, PODS);
    assert.equal(total.verdict, 'improved');
    assert.ok(total.after.p99Ms < total.before.p99Ms / 2, 'p99 at least halved');
    assert.deepEqual(c.facts.filter((f: any) => f.changed === true).map((f: any) => f.fact).sort(), ['kubelet.kubeAPIBurst', 'kubelet.kubeAPIQPS']);
    assert.match(c.credit, new RegExp(`with the kubelet's client limits 5/10 → ${qps}/${burst}, the only recorded setting that changed; .*: credited to the kubelet's QPS/burst$`));
    assert.match(b.throttling, /client throttling/, 'the before run names the throttling');
  });
});
