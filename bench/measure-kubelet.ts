// `measure pod-startup` against a real kubelet (hollow node: kubemark --morph=kubelet, the kubelet's
// own code and client rate limiter, a fake runtime) at three client limits: the old default 5/10,
// the 1.27+ default 50/100, and the advisor's recommendation for the node's maxPods (the
// kubelet-api-qps rule's fix, from the collector's own suggestedLimits). 100 pods at once per run
// (NTA_BENCH_PODS), one node restarted between the runs. Prints limits → total p50/p99, all Ready
// after (the slowest pod's total) and the status-write wait p99 (kubelet stamp → API: throttling).
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { suggestedLimits } from '../src/collectors/kubelet/config.ts';
import { ControlPlane, envtestAssets } from '../test/helpers/control-plane.ts';
import { HollowNode, type Limits } from '../test/helpers/hollow-node.ts';
import { CLI } from '../test/helpers/measure-cli.ts';

const PODS = Number(process.env.NTA_BENCH_PODS ?? 100);
const NODE = 'bench-kubelet';
const MAX_PODS = 110;

function measure(cp: ControlPlane, home: string): Promise<any> {
  const child = spawn(process.execPath, [CLI, 'measure', 'pod-startup', '--kubeconfig', cp.kubeconfig, '--node', NODE, '--pods', String(PODS), '--output', 'json', '--timeout', '5m', '--cleanup-wait', '0s'], {
    stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH, HOME: home },
  });
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout.on('data', (c: Buffer) => out.push(c));
  child.stderr.on('data', (c: Buffer) => err.push(c));
  return new Promise((resolve, reject) => child.on('close', (code) => {
    try { resolve(JSON.parse(Buffer.concat(out).toString())); } catch { reject(new Error(`measure exited ${code}: ${Buffer.concat(err).toString()}`)); }
  }));
}

/**
 * Until the run's namespace is gone. At 5/10 the kubelet's deletions queue behind its own limiter
 * for about a minute; restarting it before they finish leaves pods on the node that the next run
 * must wait for (and measure refuses when they leave too little room).
 */
async function namespaceGone(cp: ControlPlane, name: string): Promise<void> {
  const deadline = Date.now() + 5 * 60_000;
  while ((await cp.request('GET', `/api/v1/namespaces/${name}`)).status !== 404) {
    if (Date.now() > deadline) throw new Error(`namespace ${name} still exists 5 min after its run`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

const s = (ms: number | null): string => (ms === null ? '-' : `${(ms / 1000).toFixed(2)} s`);

export async function run(): Promise<void> {
  if (!('dir' in envtestAssets())) {
    console.log('skipped: KUBEBUILDER_ASSETS is not set (export KUBEBUILDER_ASSETS=$(../shared/envtest/assets))');
    return;
  }
  const recommended = suggestedLimits(MAX_PODS);
  const cases: [string, Limits][] = [['old default', { qps: 5, burst: 10 }], ['1.27+ default', { qps: 50, burst: 100 }], ['advisor', recommended]];
  const tmp = await mkdtemp(path.join(tmpdir(), 'nta-bench-kubelet-'));
  const cp = await ControlPlane.start({ scheduler: true, controllerManager: true });
  let node: HollowNode | undefined;
  try {
    node = await HollowNode.start(cp, NODE, { ...(cases[0] as [string, Limits])[1], maxPods: MAX_PODS });
    console.log(`${PODS} pods at once on one hollow kubelet (maxPods ${MAX_PODS}), placed by the scheduler`);
    console.log('| kubelet --kube-api-qps/--kube-api-burst | total p50 | total p99 | all Ready after | status write p99 | ready |');
    console.log('|---|---|---|---|---|---|');
    for (const [label, limits] of cases) {
      if (node.limits.qps !== limits.qps || node.limits.burst !== limits.burst) await node.restart(limits);
      const m = await measure(cp, tmp);
      await namespaceGone(cp, m.namespace);
      console.log(`| ${limits.qps}/${limits.burst} (${label}) | ${s(m.phases.total.p50Ms)} | ${s(m.phases.total.p99Ms)} | ${s(m.phases.total.maxMs)} | ${s(m.statusDelay?.p99Ms ?? null)} | ${m.counts.ready}/${m.counts.created} |`);
    }
  } finally {
    await node?.stop();
    await cp.stop();
    await rm(tmp, { recursive: true, force: true });
  }
}
