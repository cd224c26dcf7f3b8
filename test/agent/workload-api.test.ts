// The workload path end to end through the real client-node against the apiserver stand-in, on a
// fake clock: scripted pods, Node status and CSI objects → watches → WorkloadState → scan facts →
// rules → annotations and metrics; and the request counts of the three extra watches. Only what a
// real kubelet cannot show here is scripted (volume attach, watch expiry, forbidden lists): pod
// start-up on a real kubelet and pod-startup-slo are in test/e2e/workload.test.ts (hollow nodes).
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { FakeApiServer } from '../helpers/fake-apiserver.ts';
import { runAgent, type RunningAgent } from '../helpers/agent-harness.ts';
import { fixtureHost } from '../helpers/fixtures.ts';
import { EMPTY_DIR, PVC, csiDriver, csiName, csiNode, podObject, type PodStage } from '../helpers/pods.ts';
import { WorkloadState } from '../../src/workload/state.ts';
import { createAgentMetrics } from '../../src/publish/metrics.ts';
import { runScan } from '../../src/scan.ts';
import volumesHost from '../../src/collectors/volumes-host.ts';
import workloadApi from '../../src/collectors/workload-api.ts';
import type { Report } from '../../src/report/types.ts';
import type { WorkloadSnapshot } from '../../src/workload/snapshot.ts';

const T0 = Date.parse('2026-12-01T10:00:00.500Z');
const LONGHORN = 'driver.longhorn.io';
const NFS = 'nfs.csi.k8s.io';

interface Cluster {
  server: FakeApiServer;
  clock: { now: number };
  state: WorkloadState;
  reports: Report[];
  agent: RunningAgent;
}

/** Waits for `check`; the timeout only ends a hang (far above what the event takes on a loaded machine). */
async function until(what: string, check: () => boolean, timeoutMs = 60_000): Promise<void> {
  const end = performance.now() + timeoutMs;
  while (!check()) {
    if (performance.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

function scanWith(cluster: WorkloadSnapshot): Promise<Report> {
  return runScan({
    hostRoot: fixtureHost('worker-longhorn-iscsi'), nodeName: 'worker-1', cluster,
    collectors: [volumesHost, workloadApi], only: ['volume-attach', 'pod-startup-slo'],
  });
}

async function cluster(t: TestContext, opts: { stopAfterScans?: number; metrics?: ReturnType<typeof createAgentMetrics> } = {}): Promise<Cluster> {
  const server = new FakeApiServer();
  await server.start();
  t.after(() => server.stop());
  server.addNode('worker-1');
  server.csiDrivers.upsert(csiDriver(LONGHORN));
  server.csiDrivers.upsert(csiDriver(NFS, false));
  server.csiNodes.upsert(csiNode('worker-1', [LONGHORN, NFS]));
  server.csiNodes.upsert(csiNode('worker-2', ['ebs.csi.aws.com']));
  const clock = { now: T0 };
  const state = new WorkloadState({ nodeName: 'worker-1', now: () => clock.now, onPhase: (p, s) => opts.metrics?.observePodPhase(p, s) });
  const reports: Report[] = [];
  const agent = runAgent(server.writeKubeconfig(), async (_, snapshot) => {
    const report = await scanWith(snapshot);
    reports.push(report);
    return report;
  }, { workload: state, ...(opts.stopAfterScans ? { stopAfterScans: opts.stopAfterScans } : {}), ...(opts.metrics ? { metrics: opts.metrics } : {}) });
  t.after(async () => { agent.agent.stop(); await agent.result; });
  await until('all four watches to list', () => ['pods', 'csiDrivers', 'csiNode', 'node'].every((p) => state.hasListed(p as 'pods')));
  return { server, clock, state, reports, agent };
}

/** Move the clock, write the pod, and wait until the watch delivered it. */
async function step(c: Cluster, at: number, name: string, stage: PodStage): Promise<void> {
  c.clock.now = at;
  const rv = c.server.pods.upsert(podObject(name, stage)).metadata.resourceVersion;
  await until(`pod ${name} at rv ${rv}`, () => c.state.lastPodVersion === rv);
}

async function attach(c: Cluster, at: number, names: string[]): Promise<void> {
  c.clock.now = at;
  c.server.editNode('worker-1', (n) => {
    n.status.volumesAttached = names.map((name) => ({ name, devicePath: '' }));
    n.status.volumesInUse = names;
  });
  await until('the Node update', () => c.state.snapshot().volumesAttached.length === names.length);
}

function finding(report: Report | undefined, id: string) {
  return report?.findings.find((f) => f.ruleId === id);
}

test('seed 001 scripted: bound, attached 11 s later, containers start: attach latency, phases, volume-attach fails', async (t) => {
  const metrics = createAgentMetrics('test');
  const c = await cluster(t, { metrics });
  const a = { createdAt: T0 - 300, volumes: [PVC('data-a')] };
  await step(c, T0, 'a', { ...a, scheduledAt: T0 });
  await step(c, T0 + 200, 'a', { ...a, scheduledAt: T0, initializedAt: T0 + 200 });
  // A pod without volumes arrives meanwhile and starts in ~1 s: it must not take the attach sample.
  const b = { createdAt: T0 + 2_000, volumes: [EMPTY_DIR] };
  await step(c, T0 + 2_400, 'b', { ...b, scheduledAt: T0 + 2_400, initializedAt: T0 + 2_400 });
  await step(c, T0 + 3_400, 'b', { ...b, scheduledAt: T0 + 2_400, initializedAt: T0 + 2_400, startedAt: T0 + 3_400, readyAt: T0 + 3_400 });
  await attach(c, T0 + 11_000, [csiName(LONGHORN, 'pvc-a')]);
  await step(c, T0 + 17_500, 'a', { ...a, scheduledAt: T0, initializedAt: T0 + 200, startedAt: T0 + 17_500 });
  await step(c, T0 + 18_000, 'a', { ...a, scheduledAt: T0, initializedAt: T0 + 200, startedAt: T0 + 17_500, readyAt: T0 + 18_000 });

  const snap = c.state.snapshot();
  assert.equal(snap.attach.samples, 1, 'one attach sample: pod a; pod b has no volume');
  assert.equal(snap.attach.p50Ms, 11_000);
  assert.equal(snap.startup.total.samples, 2);
  // Pod a: created 10:00:00 (API, whole seconds), bound 00.5, initialized 00.7, started 18.0, ready 18.5.
  // Pod b: created 10:00:02, bound and initialized 02.9, started and ready 03.9.
  const phases = { scheduling: [500, 900], initialization: [0, 200], creation: [1_000, 17_300], readiness: [0, 500], total: [1_900, 18_500] };
  for (const [phase, [low, high]] of Object.entries(phases)) {
    const w = c.state.startup.windows[phase as 'total'];
    assert.deepEqual([w.percentile(1, c.clock.now), w.percentile(100, c.clock.now)], [low, high], phase);
  }

  await until('a report with the attach sample', () => finding(c.reports.at(-1), 'volume-attach')?.status === 'fail');
  const report = c.reports.at(-1) as Report;
  const attachFinding = finding(report, 'volume-attach');
  assert.equal(attachFinding?.observed, 'attach p90 11000 ms over 1 attaches (driver.longhorn.io)');
  assert.ok(attachFinding?.evidence.some((e) => e.fact === 'volumes.attachRequiredInUse' && e.value === 1));
  assert.match(attachFinding?.remediation.text ?? '', /instead of driver\.longhorn\.io/);
  assert.equal(report.facts['volumes.attachDrivers']?.value?.toString(), LONGHORN, 'NFS CSI has attachRequired false');
  assert.equal(finding(report, 'pod-startup-slo')?.status, 'not-applicable', 'two pods are fewer than minSamples');
  await until('the annotation', () => /WARN volume-attach/.test(c.server.node('worker-1')?.metadata.annotations['node-tuning-advisor.io/findings'] ?? ''));
  const text = await metrics.registry.metrics();
  const series = text.split('\n').filter((l) => l.startsWith('node_tuning_advisor_pod_startup_phase_seconds'));
  for (const line of [
    'node_tuning_advisor_pod_startup_phase_seconds_bucket{le="10",phase="creation"} 1',
    'node_tuning_advisor_pod_startup_phase_seconds_bucket{le="20",phase="creation"} 2',
    'node_tuning_advisor_pod_startup_phase_seconds_count{phase="total"} 2',
    'node_tuning_advisor_pod_startup_phase_seconds_sum{phase="total"} 20.4',
  ]) assert.ok(series.includes(line), `${line} in\n${series.filter((l) => !l.includes('_bucket')).join('\n')}`);
});

test('one LIST and one watch per resource, never a list per scan; a CSIDriver change arrives on the watch', async (t) => {
  const c = await cluster(t);
  const scansBefore = c.agent.scans();
  await until('10 more scans', () => c.agent.scans() >= scansBefore + 10);
  c.server.csiDrivers.upsert(csiDriver(LONGHORN, false));
  await until('the CSIDriver change', () => c.state.snapshot().csiDrivers[LONGHORN]?.attachRequired === false);
  await until('a scan after it', () => c.reports.at(-1)?.facts['volumes.attachDrivers']?.value?.toString() === '');
  const lists = (path: string) => c.server.count('GET', path, (r) => r.path === path && r.query.get('watch') !== 'true');
  const watches = (path: string) => c.server.count('GET', path, (r) => r.path === path && r.query.get('watch') === 'true');
  for (const path of ['/api/v1/pods', '/apis/storage.k8s.io/v1/csidrivers', '/apis/storage.k8s.io/v1/csinodes', '/api/v1/nodes']) {
    assert.equal(lists(path), 1, `one LIST of ${path} over ${c.agent.scans()} scans`);
    assert.equal(watches(path), 1, `one watch of ${path}`);
  }
  const pods = c.server.requests.filter((r) => r.path === '/api/v1/pods');
  assert.ok(pods.every((r) => r.query.get('fieldSelector') === 'spec.nodeName=worker-1'));
  const csinodes = c.server.requests.filter((r) => r.path === '/apis/storage.k8s.io/v1/csinodes');
  assert.ok(csinodes.every((r) => r.query.get('fieldSelector') === 'metadata.name=worker-1'));
  assert.deepEqual(c.state.snapshot().csiNodeDrivers, [LONGHORN, NFS], 'worker-2 CSINode not ours');
});

test('a forbidden pod list (RBAC missing) leaves the start-up facts unknown with the reason, then recovers', async (t) => {
  const server = new FakeApiServer();
  await server.start();
  t.after(() => server.stop());
  server.addNode('worker-1');
  server.inject('GET', '/api/v1/pods', ...Array(1000).fill({ status: 403 }));
  const state = new WorkloadState({ nodeName: 'worker-1' });
  const reports: Report[] = [];
  const run = runAgent(server.writeKubeconfig(), async (_, snap) => { const r = await scanWith(snap); reports.push(r); return r; }, { workload: state });
  t.after(async () => { run.agent.stop(); await run.result; });
  await until('a scan that saw the 403', () => /HTTP 403/.test(reports.at(-1)?.facts['pods.startup.samples']?.unknown ?? ''));
  assert.match(reports.at(-1)?.facts['pods.startup.samples']?.unknown ?? '', /cannot list or watch pods on node worker-1: HTTP 403: injected 403/);
  assert.ok(run.logs.some((l) => /watch on pods on node worker-1 failed \(HTTP 403/.test(l)));
  server.clearFaults(); // the ClusterRole is fixed
  await until('recovery', () => reports.at(-1)?.facts['pods.startup.samples']?.value === 0);
  assert.equal(state.hasListed('pods'), true);
});

test('watch expiry (410) mid-start-up: the pods are re-listed and the pod is counted once', async (t) => {
  const c = await cluster(t);
  const p = { createdAt: T0 - 500, volumes: [PVC('data-x')] };
  await step(c, T0, 'x', { ...p, scheduledAt: T0 });
  c.server.expireWatches();
  await attach(c, T0 + 4_000, [csiName(LONGHORN, 'pvc-x')]);
  c.clock.now = T0 + 5_000;
  c.server.pods.upsert(podObject('x', { ...p, scheduledAt: T0, initializedAt: T0, startedAt: T0 + 5_000, readyAt: T0 + 5_000 }));
  await until('the re-listed pod', () => c.state.startup.windows.total.size(c.clock.now) === 1);
  assert.equal(c.server.count('GET', '/api/v1/pods', (r) => r.path === '/api/v1/pods' && r.query.get('watch') !== 'true'), 2, 'LIST again after 410');
  assert.equal(c.state.snapshot().attach.p50Ms, 4_000);
  assert.equal(c.state.startup.windows.total.percentile(100, c.clock.now), 5_500);
  await new Promise((r) => setTimeout(r, 100));
  assert.equal(c.state.startup.windows.total.total, 1, 'later events for the finished pod add nothing');
});

test('--once: the only scan waits for the watches, so its workload facts are decided, not "not listed yet"', async (t) => {
  const server = new FakeApiServer();
  await server.start();
  t.after(() => server.stop());
  server.addNode('worker-1');
  server.csiDrivers.upsert(csiDriver(LONGHORN));
  server.csiNodes.upsert(csiNode('worker-1', [LONGHORN]));
  server.inject('GET', '/apis/storage.k8s.io/v1/csidrivers', { status: 200, delayMs: 300 });
  const reports: Report[] = [];
  const run = runAgent(server.writeKubeconfig(), async (_, snap) => { const r = await scanWith(snap); reports.push(r); return r; }, { agent: { once: true } });
  assert.equal(await run.result, 0);
  assert.equal(reports.length, 1);
  assert.equal(reports[0]?.facts['pods.startup.samples']?.value, 0);
  // The host's plugins_registry also has nfs.csi.k8s.io, and this cluster has no CSIDriver for it: missing means attach.
  assert.deepEqual(reports[0]?.facts['volumes.attachDrivers']?.value, [LONGHORN, NFS]);
});
