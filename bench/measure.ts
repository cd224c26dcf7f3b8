// `measure pod-startup` at the seeds' scale, and the README's "Verify a fix" example: seed 000's
// before/after procedure on the real control plane (kube-apiserver, kube-scheduler,
// kube-controller-manager from KUBEBUILDER_ASSETS), 100 pods at once, the test's kubelet starting
// the containers. Before: the seed-000 "before" host's settings (CONFIG_HZ 250, client limits at
// their defaults) published by the real agent, kube-scheduler at its defaults, containers ~5 s to
// start (seed 000 after its first fix: 5.5 s for 100 pods at 250 Hz). After: CONFIG_HZ 1000 and the
// limits at 150/200 (the seed-000 "after" host), kube-scheduler restarted with --kube-api-qps=150
// --kube-api-burst=200, containers ~1 s. Prints both outputs as the CLI printed them, the wall time,
// the requests and the peak memory of each run (the bundle, as the image ships it).
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ControlPlane, envtestAssets } from '../test/helpers/control-plane.ts';
import { createReadyNode } from '../test/helpers/kube-objects.ts';
import { FakeKubelet } from '../test/helpers/kubelet.ts';
import { podIndex, publishAdvisor } from '../test/helpers/measure-cli.ts';
import { BUNDLE, OUT_DIR, bundleTo } from '../scripts/bundle.ts';

const PODS = Number(process.env.NTA_BENCH_PODS ?? 100);
const NODE = 'worker-1';

/** The CLI under /usr/bin/time (peak RSS), its output as printed. */
function runCli(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string; ms: number; maxRssKiB: number | undefined }> {
  const started = performance.now();
  const child = spawn('/usr/bin/time', ['-f', 'MAXRSS %M', process.execPath, BUNDLE, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout.on('data', (c: Buffer) => out.push(c));
  child.stderr.on('data', (c: Buffer) => err.push(c));
  return new Promise((resolve) => child.on('close', (code) => {
    const stderr = Buffer.concat(err).toString();
    const rss = /MAXRSS (\d+)/.exec(stderr)?.[1];
    resolve({ code, stdout: Buffer.concat(out).toString(), stderr: stderr.replace(/MAXRSS \d+\n?/, '').replace(/Command exited with non-zero status \d+\n/, ''), ms: performance.now() - started, maxRssKiB: rss ? Number(rss) : undefined });
  }));
}

export async function run(): Promise<void> {
  if (!('dir' in envtestAssets())) {
    console.log('skipped: KUBEBUILDER_ASSETS is not set (export KUBEBUILDER_ASSETS=$(../shared/envtest/assets))');
    return;
  }
  await bundleTo(OUT_DIR);
  const tmp = await mkdtemp(path.join(tmpdir(), 'nta-bench-measure-'));
  const cp = await ControlPlane.start({ scheduler: true, controllerManager: true });
  let kubelet: FakeKubelet | undefined;
  try {
    await createReadyNode(cp, NODE);
    await cp.must('PATCH', `/api/v1/nodes/${NODE}/status`, { status: { images: [{ names: ['registry.k8s.io/pause@sha256:ee6521f290b2168b6e0935a181d4cff9be1ac3f505666ef0e3c98fae8199917a', 'registry.k8s.io/pause:3.10'], sizeBytes: 320368 }] } },
      { contentType: 'application/strategic-merge-patch+json' });
    let createMs = (i: number): number => 4500 + (i % 11) * 100;
    // Live: each status written when it happens, as a kubelet does (the phases are wall-clock here).
    kubelet = await FakeKubelet.start(cp, NODE, { mode: 'live', script: (pod) => ({ initMs: 20, createMs: createMs(podIndex(pod)), readyMs: 150 }) });
    const env = { PATH: process.env.PATH, HOME: tmp, KUBECONFIG: cp.kubeconfig, COLUMNS: '100' };
    const save = path.join(tmp, 'before.json');

    await publishAdvisor(cp, tmp, NODE, 'seed-000-before', 250);
    const before = await runCli(['measure', 'pod-startup', '--node', NODE, '--pods', String(PODS), '--save', save], env);
    console.log(`$ node-tuning-advisor measure pod-startup --node ${NODE} --save before.json\n${before.stdout}${before.stderr}(exit ${before.code})`);

    await publishAdvisor(cp, tmp, NODE, 'seed-000-after', 1000);
    await cp.restartScheduler(['--kube-api-qps=150', '--kube-api-burst=200']);
    createMs = (i) => 800 + (i % 5) * 100;
    const after = await runCli(['measure', 'pod-startup', '--node', NODE, '--pods', String(PODS), '--compare', save], env);
    console.log(`\n$ node-tuning-advisor measure pod-startup --node ${NODE} --compare before.json\n${after.stdout.replaceAll(save, 'before.json')}${after.stderr}(exit ${after.code})`);

    for (const [name, r] of [['before', before], ['after', after]] as const) {
      const requests = /; (\d+) API\s+requests/.exec(r.stdout)?.[1] ?? '?';
      console.log(`${name}: ${PODS} pods, whole run ${(r.ms / 1000).toFixed(1)} s (checks, pods, cleanup until the pods are gone), ${requests} API requests, peak RSS ${r.maxRssKiB === undefined ? '?' : (r.maxRssKiB / 1024).toFixed(0)} MiB`);
    }
  } finally {
    kubelet?.stop();
    await cp.stop();
    await rm(tmp, { recursive: true, force: true });
  }
}
