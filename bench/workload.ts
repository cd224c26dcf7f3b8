// Memory of the workload path with pods streaming through: 10 000 pods (bound, a volume attached
// 11 s later on the fake clock, containers started 1 s after, Ready 0.5 s after, deleted) pass the real pod and Node
// watches of an agent against the apiserver stand-in, in this process. Heap after a full GC at
// 0, 2 500, 5 000 and 10 000 pods: bounded state means the figure stops growing.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { FakeApiServer } from '../test/helpers/fake-apiserver.ts';
import { runAgent } from '../test/helpers/agent-harness.ts';
import { seedReport } from '../test/helpers/reports.ts';
import { PVC, csiDriver, csiName, podObject } from '../test/helpers/pods.ts';
import { WorkloadState } from '../src/workload/state.ts';

const PODS = Number(process.env.NTA_BENCH_PODS ?? 10_000);
const CHECKPOINTS = [PODS / 4, PODS / 2, PODS];
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

function heapMiB(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed / 1024 / 1024;
}

async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((r) => setImmediate(r));
}

async function podStep(server: FakeApiServer, state: WorkloadState, name: string, stage: Parameters<typeof podObject>[1]): Promise<void> {
  const rv = server.pods.upsert(podObject(name, stage)).metadata.resourceVersion;
  await until(() => state.lastPodVersion === rv);
}

export async function run(): Promise<void> {
  const server = new FakeApiServer();
  await server.start();
  server.pods.historyLimit = 50; // the stand-in's own replay log must not count as agent memory
  server.addNode('worker-1');
  server.csiDrivers.upsert(csiDriver('driver.longhorn.io'));
  const clock = { now: Date.parse('2026-12-01T10:00:00.500Z') };
  const state = new WorkloadState({ nodeName: 'worker-1', now: () => clock.now });
  const agent = runAgent(server.writeKubeconfig(), () => seedReport(), { workload: state, agent: { intervalMs: 60_000 } });
  await until(() => state.hasListed('pods') && state.hasListed('node'));
  const base = heapMiB();
  const lines = [`heap before: ${base.toFixed(1)} MiB`];
  const started = performance.now();
  for (let i = 1; i <= PODS; i++) {
    const t = clock.now;
    const pod = { createdAt: t - 400, volumes: [PVC(`claim-${i}`)] };
    // Each step waits for the watch to deliver it, as the real sequence is causal (attach after
    // binding, start after attach); the two watches are separate streams.
    await podStep(server, state, `p${i}`, { ...pod, scheduledAt: t });
    clock.now = t + 11_000;
    const attached = state.attach.window.total;
    server.editNode('worker-1', (n) => { n.status.volumesAttached = [{ name: csiName('driver.longhorn.io', `pvc-${i}`), devicePath: '' }]; });
    await until(() => state.attach.window.total > attached);
    clock.now = t + 12_000;
    await podStep(server, state, `p${i}`, { ...pod, scheduledAt: t, initializedAt: t, startedAt: t + 12_000 });
    clock.now = t + 12_500;
    await podStep(server, state, `p${i}`, { ...pod, scheduledAt: t, initializedAt: t, startedAt: t + 12_000, readyAt: t + 12_500 });
    server.pods.remove(`p${i}`, 'ci');
    if (CHECKPOINTS.includes(i)) {
      await until(() => state.startup.tracked === 0);
      const snap = state.snapshot();
      const heap = heapMiB();
      lines.push(`after ${i} pods: heap ${heap.toFixed(1)} MiB (+${(heap - base).toFixed(1)}); tracked pods ${snap.trackedPods}, ` +
        `start-up samples ${snap.startup.total.samples}/${state.startup.windows.total.capacity} (total p99 ${snap.startup.total.p99Ms} ms), ` +
        `attach samples ${snap.attach.samples} (p90 ${snap.attach.p90Ms} ms)`);
    }
    clock.now = t + 13_000;
  }
  const seconds = (performance.now() - started) / 1000;
  lines.push(`${PODS} pods (${PODS * 4} pod watch events, ${PODS} Node updates) in ${seconds.toFixed(1)} s; ` +
    `pod LISTs ${server.count('GET', '/api/v1/pods', (r) => r.query.get('watch') !== 'true')}, pod watches ${server.count('GET', '/api/v1/pods', (r) => r.query.get('watch') === 'true')}`);
  console.log(lines.join('\n'));
  agent.agent.stop();
  await agent.result;
  await server.stop();
}
