// The shipped Grafana dashboard against real data: a real Prometheus (Debian) scrapes two bundled
// agents (as the image runs them) on the real control plane, and every query of every panel in
// manifests/dashboard/node-tuning-advisor.json must return a series with a number, through
// Prometheus's HTTP API. One agent is on a hollow kubelet's node (kubemark --morph=kubelet) where
// pods start, so the pod start-up histogram has data, over a fixture host whose logs hold
// client-side throttling lines; the other is a control-plane node's, run with host root / in a PID
// namespace of its own beside a real etcd (Debian etcd-server), whose /metrics it reads (the etcd
// fsync panel). Each wait is on the query returning data; deadlines only end a hang.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { cp as copy, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { AgentProcess, buildApp } from '../helpers/bundled-agent.ts';
import { ControlPlane, freePort, realServerTier } from '../helpers/control-plane.ts';
import { HollowNode } from '../helpers/hollow-node.ts';
import { createBoundPod, createReadyNode, ensureNamespace, ensureServiceAccount } from '../helpers/kube-objects.ts';
import { REPO } from '../helpers/manifests.ts';
import { query, startPrometheus, waitFor } from '../helpers/prometheus.ts';
import { requireTool } from '../helpers/tools.ts';
import { parse } from 'yaml';

const WORKER = 'hollow-1';
const CONTROL_PLANE = 'cp-1';
const PODS = 5;
/** Hang guard for each query's data (the agents scan every 2 s, Prometheus scrapes every second). */
const DATA_WITHIN_MS = 120_000;
/**
 * Grafana's variables as a dashboard of the last minutes fills them: every node (the variable's
 * allValue), and a rate window of a minute (Grafana's $__rate_interval is at least 4 scrape
 * intervals; a minute keeps the pods' start-ups inside it).
 */
const VARIABLES: [RegExp, string][] = [[/\$node\b/g, '.*'], [/\$__rate_interval\b/g, '1m']];

interface Panel { title: string; targets?: { expr: string }[] }

/** Not root: no PID namespace for the control-plane agent and its etcd. */
function rootSkip(): string | undefined {
  if (process.getuid?.() === 0) return undefined;
  if (process.env.CI === 'true') throw new Error('the dashboard e2e runs etcd and an agent in a PID namespace of their own: run the suite as root');
  return 'not root: the etcd panel needs etcd and the agent in their own PID namespace (unshare)';
}

/** argv run as PID 1 of a new PID namespace (its own /proc) after starting etcd there. */
function withEtcd(etcd: string, dir: string, ports: { client: number; peer: number; metrics: number }): (argv: string[]) => string[] {
  const url = (port: number) => `http://127.0.0.1:${port}`;
  const etcdArgs = ['--name', 'dashboard', '--data-dir', path.join(dir, 'data'), '--listen-client-urls', url(ports.client), '--advertise-client-urls', url(ports.client),
    '--listen-peer-urls', url(ports.peer), '--initial-advertise-peer-urls', url(ports.peer), '--initial-cluster', `dashboard=${url(ports.peer)}`,
    '--listen-metrics-urls', url(ports.metrics)];
  const quoted = (word: string) => `'${word.replace(/'/g, `'\\''`)}'`;
  // sh starts etcd in the background, then becomes the agent: etcd dies with the namespace's PID 1.
  return (argv) => ['unshare', '--pid', '--fork', '--mount-proc', '--kill-child=SIGTERM', '--', 'sh', '-c',
    `${[etcd, ...etcdArgs].map(quoted).join(' ')} >${quoted(path.join(dir, 'etcd.log'))} 2>&1 & exec "$@"`, 'sh', ...argv];
}

describe('the dashboard\'s queries on real data: Prometheus scraping the bundled agents on the real control plane', realServerTier(), () => {
  test('every panel\'s every query returns a series with a number', { timeout: 300_000 }, async (t) => {
    const prometheus = requireTool(t, 'prometheus', 'prometheus');
    const etcd = requireTool(t, 'etcd', 'etcd-server');
    const notRoot = rootSkip();
    if (notRoot) return t.skip(notRoot);
    if (!prometheus || !etcd) return;
    const tmp = await mkdtemp(path.join(tmpdir(), 'nta-dashboard-'));
    const stops: (() => Promise<unknown>)[] = [];
    t.after(async () => {
      for (const stop of stops.reverse()) await stop().catch(() => undefined);
      await rm(tmp, { recursive: true, force: true });
    });
    const [cp, bundle] = await Promise.all([ControlPlane.start(), buildApp(path.join(tmp, 'app'))]);
    stops.push(() => cp.stop());
    const kubelet = await HollowNode.start(cp, WORKER, { qps: 50, burst: 100 });
    stops.push(() => kubelet.stop());
    await createReadyNode(cp, CONTROL_PLANE, { labels: { 'node-role.kubernetes.io/control-plane': '' } });

    const host = path.join(tmp, 'host');
    await copy(path.join(REPO, 'test/fixtures/hosts/seed-000-before'), host, { recursive: true });
    const common = ['agent', '--kubeconfig', cp.kubeconfig, '--interval', '2s', '--startup-jitter', '0s', '--probe-interval', 'off', '--metrics-addr', '127.0.0.1:0'];
    const worker = AgentProcess.start(bundle, [...common, '--node-name', WORKER, '--host-root', host, '--kubelet-address', '127.0.0.1']);
    stops.push(() => worker.stop());
    const etcdDir = path.join(tmp, 'etcd');
    await mkdir(etcdDir);
    const ports = { client: await freePort(), peer: await freePort(), metrics: await freePort() };
    const controlPlane = AgentProcess.start(bundle, [...common, '--node-name', CONTROL_PLANE], {}, withEtcd(etcd, etcdDir, ports));
    stops.push(async () => {
      await controlPlane.stop();
      // The namespace's PID 1 is gone: the kernel ends etcd; its data dir is removed after it has.
      await waitFor(async () => !(await fetch(`http://127.0.0.1:${ports.client}/health`).then(() => true, () => false)), 10_000, () => 'etcd still answers');
    });
    // A few writes through etcd's v3 JSON gateway: its WAL fsync histogram has observations.
    await waitFor(async () => (await fetch(`http://127.0.0.1:${ports.client}/health`).catch(() => undefined))?.ok === true, 30_000,
      () => `etcd not up: ${existsSync(path.join(etcdDir, 'etcd.log')) ? readFileSync(path.join(etcdDir, 'etcd.log'), 'utf8') : 'no log'}`);
    for (let i = 0; i < 20; i++) {
      const body = JSON.stringify({ key: Buffer.from(`k${i}`).toString('base64'), value: Buffer.from('v').toString('base64') });
      assert.equal((await fetch(`http://127.0.0.1:${ports.client}/v3/kv/put`, { method: 'POST', body })).status, 200);
    }

    const promDir = path.join(tmp, 'prometheus');
    await mkdir(promDir);
    const address = async (agent: AgentProcess) => new URL(await agent.metricsUrl()).host;
    const rules = parse(await readFile(path.join(REPO, 'manifests/prometheus/alerts.yaml'), 'utf8'));
    const prom = await startPrometheus(prometheus, promDir, [
      { address: await address(worker), labels: { node: WORKER } }, { address: await address(controlPlane), labels: { node: CONTROL_PLANE } },
    ], rules);
    stops.push(() => prom.stop());
    await waitFor(async () => (await query(prom.url, 'up == 1')).length === 2, DATA_WITHIN_MS, () => `targets not up:\n${prom.log()}`);

    // One wave of pods after Prometheus's first scrape: the agent exports every phase's histogram at 0
    // from its start, so the first pods after it started are an increase rate() sees.
    await ensureNamespace(cp, 'dashboard');
    await ensureServiceAccount(cp, 'dashboard', 'default');
    await waitFor(async () => (await query(prom.url, 'node_tuning_advisor_pod_startup_phase_seconds_count{phase="total"} == 0')).length > 0, DATA_WITHIN_MS,
      () => `the pod start-up histogram is not exported before the first pod:\n${worker.log.slice(-2000)}`);
    for (let i = 0; i < PODS; i++) await createBoundPod(cp, 'dashboard', `pod-${i}`, WORKER);

    const panels = (JSON.parse(await readFile(path.join(REPO, 'manifests/dashboard/node-tuning-advisor.json'), 'utf8')).panels as Panel[]);
    const exprs = panels.flatMap((p) => (p.targets ?? []).map((target) => ({ panel: p.title, expr: VARIABLES.reduce((e, [v, value]) => e.replace(v, value), target.expr) })));
    assert.ok(exprs.length >= 10, `${exprs.length} queries`);
    const answers = await Promise.all(exprs.map(async ({ panel, expr }) => {
      let last: Awaited<ReturnType<typeof query>> = [];
      const finite = () => last.filter((s) => Number.isFinite(Number(s.value[1])));
      await waitFor(async () => { last = await query(prom.url, expr); return finite().length > 0; }, DATA_WITHIN_MS,
        () => `"${panel}": ${expr} returned ${JSON.stringify(last).slice(0, 400)}\nworker agent:\n${worker.log.slice(-2000)}\ncontrol-plane agent:\n${controlPlane.log.slice(-2000)}`);
      return `${panel}: ${expr} → ${finite().length} series, e.g. ${JSON.stringify(finite()[0]?.metric)} = ${finite()[0]?.value[1]}`;
    }));
    for (const answer of answers) t.diagnostic(answer);
  });
});
