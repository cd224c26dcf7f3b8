// Tenant pods against the agent's heap, on the real control plane: 50 pods bound to the node by
// `spec.nodeName` (they never need to run), each with a 1.2 MB environment value, ~60 MB of pods
// the agent used to LIST in one response and hold whole: the shipped bundle with the DaemonSet's
// NODE_OPTIONS (a 64 MiB heap) ran out of memory on its first LIST, on every start. Now it lists in
// pages, keeps only the fields it reads (decoded from the bytes: an environment value never becomes
// a string), and keeps serving and publishing.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { AgentProcess, buildApp, sample, scrape } from '../helpers/bundled-agent.ts';
import { ControlPlane, realServerTier } from '../helpers/control-plane.ts';
import { createReadyNode, ensureNamespace, ensureServiceAccount } from '../helpers/kube-objects.ts';
import { BASE, REPO } from '../helpers/manifests.ts';
import { agentIdentity, applyKustomization, daemonSetRun, ownAnnotations } from '../helpers/shipped.ts';

const NODE = 'tenant-heavy-1';
const TENANT = 'tenant-bulk';
const PODS = 50;
const ENV_BYTES = 1_200_000;
const HOST = path.join(REPO, 'test/fixtures/hosts/mixed-governors');

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('tenant pods with huge specs against the shipped agent\'s 64 MiB heap', realServerTier(), () => {
  let cp: ControlPlane;
  let dir: string;
  let bundle: string;
  let agent: AgentProcess | undefined;

  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'nta-tenant-pods-'));
    [cp, bundle] = await Promise.all([ControlPlane.start(), buildApp(path.join(dir, 'app'))]);
    const applied = await applyKustomization(cp, BASE, ['ServiceMonitor', 'PrometheusRule']);
    assert.equal(applied.code, 0, applied.stderr);
    await createReadyNode(cp, NODE);
    await ensureNamespace(cp, TENANT);
    await ensureServiceAccount(cp, TENANT, 'default');
    const big = 'x'.repeat(ENV_BYTES);
    for (let first = 0; first < PODS; first += 5) {
      await Promise.all(Array.from({ length: 5 }, (_, i) => cp.must('POST', `/api/v1/namespaces/${TENANT}/pods`, {
        apiVersion: 'v1', kind: 'Pod', metadata: { name: `bulk-${first + i}`, namespace: TENANT },
        spec: {
          nodeName: NODE, automountServiceAccountToken: false,
          containers: [{ name: 'c', image: 'example.invalid/bulk:1', env: [{ name: 'BLOB', value: big }] }],
        },
      })));
    }
  });
  after(async () => {
    await agent?.stop();
    await cp?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  test('the agent lists them, keeps serving /healthz and publishes its Node\'s annotations', { timeout: 120_000 }, async () => {
    const { kubeconfig } = await agentIdentity(cp, NODE, dir);
    const run = await daemonSetRun(cp, 'node-tuning-advisor', { node: NODE, hostRoot: HOST, rulesDir: path.join(dir, 'rules'), kubeconfig });
    assert.match(run.env.NODE_OPTIONS ?? '', /--max-old-space-size=64/, 'the DaemonSet\'s heap cap');
    const args = [...run.args.filter((a) => !a.startsWith('--interval=')), '--interval=2s', '--startup-jitter=1ms'];
    agent = AgentProcess.start(bundle, args, run.env);
    const metrics = await agent.metricsUrl();
    const deadline = Date.now() + 90_000;
    let published: Record<string, string> = {};
    while (Object.keys(published).length === 0) {
      assert.ok(agent.running, `the agent died:\n${agent.log.slice(-4000)}`);
      assert.ok(Date.now() < deadline, `no publish within 90 s:\n${agent.log.slice(-4000)}`);
      await sleep(500);
      published = await ownAnnotations(cp, NODE);
    }
    // One of them starts, as its kubelet would write it: the watch event (1.2 MB) still yields its start-up phases.
    const now = new Date().toISOString();
    const started = { type: 'True', status: 'True', lastTransitionTime: now };
    await cp.must('PATCH', `/api/v1/namespaces/${TENANT}/pods/bulk-0/status`, {
      status: {
        phase: 'Running',
        conditions: ['PodScheduled', 'Initialized', 'ContainersReady', 'Ready'].map((type) => ({ ...started, type })),
        containerStatuses: [{ name: 'c', image: 'example.invalid/bulk:1', imageID: '', ready: true, restartCount: 0, started: true, state: { running: { startedAt: now } } }],
      },
    }, { contentType: 'application/merge-patch+json' });
    let text = '';
    while ((sample(text, 'node_tuning_advisor_pod_startup_phase_seconds_count', { phase: 'total' }) ?? 0) < 1) {
      assert.ok(agent.running, `the agent died after publishing:\n${agent.log.slice(-4000)}`);
      assert.ok(Date.now() < deadline, `the started pod was not seen:\n${agent.log.slice(-4000)}`);
      await sleep(500);
      text = (await scrape(metrics)).body;
    }
    assert.equal((await scrape(metrics, '/healthz')).status, 200);
    assert.equal(sample(text, 'node_tuning_advisor_watch_errors_total', { watch: 'pods', reason: 'too-large' }) ?? 0, 0, 'the pod list fits');
    assert.doesNotMatch(agent.log, /heap out of memory|cannot list or watch pods/);
  });
});
