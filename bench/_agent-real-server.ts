// The agent's API cost on a real kube-apiserver (for `npm run bench -- agent`): the shipped manifests,
// the bundled agent as the DaemonSet runs it with a pod-bound token, a kubelet heartbeat on its Node,
// and the server's audit log counting every request the agent sends at steady state.
// SPEEDUP > 1 compresses the agent's interval (5 min) and the kubelet's status report (5 min), so
// the window shows every request a scan, a publish or a Node update would cause; the agent's watches
// last the timeoutSeconds it asks for (30–60 min, which the server honours), so their renewals are
// counted from the open watches the audit log shows (3600 / timeoutSeconds each per hour).
// SPEEDUP=1 with HOURS ≥ 1 counts everything as it happens, renewals included.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { auditArgs, isWrite } from '../test/helpers/audit.ts';
import { AgentProcess, buildApp } from '../test/helpers/bundled-agent.ts';
import { ControlPlane, envtestAssets } from '../test/helpers/control-plane.ts';
import { createReadyNode } from '../test/helpers/kube-objects.ts';
import { BASE, REPO } from '../test/helpers/manifests.ts';
import { AGENT_USER, agentIdentity, applyKustomization, daemonSetRun } from '../test/helpers/shipped.ts';

const MINUTE = 60_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface RealServerCost {
  version: string;
  speedup: number;
  hours: number;
  perHour: number;
  writesPerHour: number;
  byVerb: Record<string, number>;
  failed: number;
  /** Compressed runs: the watches open at the end, by timeoutSeconds, and their renewals per hour. */
  renewals?: { timeouts: number[]; perHour: number };
}

/** Undefined (with the reason printed) when the real-server tier's binaries are not there. */
export async function realServerCost(speedup: number, hours: number, log: (line: string) => void): Promise<RealServerCost | undefined> {
  const assets = envtestAssets();
  if (!('dir' in assets)) {
    log(`real kube-apiserver: skipped (${assets.missing})`);
    return undefined;
  }
  const tmp = await mkdtemp(path.join(tmpdir(), 'nta-bench-agent-'));
  const auditing = await auditArgs(tmp, [AGENT_USER]);
  const cp = await ControlPlane.start({ apiserverArgs: [...auditing.args, `--min-request-timeout=${Math.max(1, Math.round(1800 / speedup))}`] });
  let agent: AgentProcess | undefined;
  let heartbeat: NodeJS.Timeout | undefined;
  try {
    const bundle = await buildApp(path.join(tmp, 'app'));
    await applyKustomization(cp, BASE, ['ServiceMonitor', 'PrometheusRule']);
    const node = 'bench-node';
    await createReadyNode(cp, node);
    const identity = await agentIdentity(cp, node, tmp);
    const run = await daemonSetRun(cp, 'node-tuning-advisor', {
      node, hostRoot: path.join(REPO, 'test/fixtures/hosts/intel-pstate-epp-power'), rulesDir: path.join(tmp, 'rules'), kubeconfig: identity.kubeconfig,
    });
    const intervalMs = Math.max(1000, Math.round((5 * MINUTE) / speedup));
    // kubelet: Node status every 5 min when nothing changes (nodeStatusReportFrequency), a MODIFIED event on the agent's watch.
    heartbeat = setInterval(() => {
      const now = new Date().toISOString();
      void cp.request('PATCH', `/api/v1/nodes/${node}/status`, { status: { conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'bench', lastHeartbeatTime: now, lastTransitionTime: now }] } },
        { contentType: 'application/strategic-merge-patch+json' });
    }, intervalMs);
    agent = AgentProcess.start(bundle, [...run.args.filter((a) => !a.startsWith('--interval=')), `--interval=${intervalMs}ms`, '--startup-jitter=1ms'], run.env);
    await agent.metricsUrl();
    // Settled: the first publish is done and two more intervals passed.
    const deadline = Date.now() + 60_000;
    while (!(await auditing.log.requests((r) => r.user === AGENT_USER && r.verb === 'patch' && r.code === 200)).length && Date.now() < deadline) await sleep(500);
    await sleep(2 * intervalMs);
    const from = Date.now();
    await sleep((hours * 60 * MINUTE) / speedup);
    const requests = await auditing.log.requests((r) => r.user === AGENT_USER && r.at >= from);
    const version = (await cp.must('GET', '/version')).gitVersion as string;
    const failed = requests.filter((r) => r.code >= 400).length;
    const writesPerHour = requests.filter(isWrite).length / hours;
    const perVerb = (list: typeof requests): Record<string, number> => {
      const counts: Record<string, number> = {};
      for (const r of list) counts[r.verb] = (counts[r.verb] ?? 0) + 1 / hours;
      return counts;
    };
    if (speedup === 1) return { version, speedup, hours, perHour: requests.length / hours, writesPerHour, byVerb: perVerb(requests), failed };
    // Compressed: what the cycles caused, per simulated hour, plus the renewals of the watches open now.
    const open = (await auditing.log.requests((r) => r.user === AGENT_USER && r.verb === 'watch' && !r.complete));
    const timeouts = open.map((r) => Number(r.query.get('timeoutSeconds'))).filter((t) => t > 0);
    const renewalsPerHour = timeouts.reduce((sum, t) => sum + 3600 / t, 0);
    const others = requests.filter((r) => r.verb !== 'watch');
    return {
      version, speedup, hours, perHour: others.length / hours + renewalsPerHour, writesPerHour, byVerb: { ...perVerb(others), watch: renewalsPerHour },
      failed, renewals: { timeouts, perHour: renewalsPerHour },
    };
  } finally {
    clearInterval(heartbeat);
    await agent?.stop();
    await cp.stop();
    await rm(tmp, { recursive: true, force: true });
  }
}
