// End to end: the bundled agent (as in the image) scans a host tree and publishes to the apiserver
// stand-in; a real Prometheus on loopback scrapes it with alerts.yaml loaded (every `for` cut to 2 s,
// evaluation every 1 s). A critical finding must reach `firing`; fixing the fact resolves it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { parse } from 'yaml';
import { bundleTo } from '../helpers/bundle-cache.ts';
import { FakeApiServer } from '../helpers/fake-apiserver.ts';
import { REPO } from '../helpers/manifests.ts';
import { alerts, query, startPrometheus, stopChild, waitFor } from '../helpers/prometheus.ts';
import { requireTool } from '../helpers/tools.ts';

const FIRING_WITHIN_MS = 30_000;

/** alerts.yaml with every alert's `for` set to 2s (recording rules have none): the test's only change to the rules. */
async function testRules(): Promise<unknown> {
  const rules = parse(await readFile(path.join(REPO, 'manifests/prometheus/alerts.yaml'), 'utf8'));
  for (const group of rules.groups) for (const rule of group.rules) if (rule.alert) rule.for = '2s';
  return rules;
}

async function hostWithHz(dir: string, hz: number): Promise<void> {
  const config = `CONFIG_NO_HZ_IDLE=y\n# CONFIG_HZ_250 is not set\nCONFIG_HZ_${hz}=y\nCONFIG_HZ=${hz}\n`;
  await writeFile(path.join(dir, 'proc/config.gz'), gzipSync(config));
}

test('a critical finding fires NodeTuningCriticalFinding in a real Prometheus; fixing the fact resolves it', { timeout: 90_000 }, async (t) => {
  const prometheus = requireTool(t, 'prometheus', 'prometheus');
  if (!prometheus) return;
  const tmp = await mkdtemp(path.join(tmpdir(), 'nta-e2e-'));
  t.after(() => rm(tmp, { recursive: true, force: true }));

  // The app as the image lays it out: bundle two levels below the root, rules and package.json beside.
  const app = path.join(tmp, 'app');
  const { file: bundle } = await bundleTo(path.join(app, 'dist/bundle'));
  await cp(path.join(REPO, 'rules'), path.join(app, 'rules'), { recursive: true });
  await cp(path.join(REPO, 'package.json'), path.join(app, 'package.json'));

  // The host: a fixture with a 250 Hz kernel; an override makes kernel-tick-rate critical.
  const host = path.join(tmp, 'host');
  await cp(path.join(REPO, 'test/fixtures/hosts/mixed-governors'), host, { recursive: true });
  await hostWithHz(host, 250);
  await mkdir(path.join(tmp, 'overrides'));
  await writeFile(path.join(tmp, 'overrides/critical.yaml'),
    'apiVersion: node-tuning-advisor.io/v1\nkind: RuleOverrides\noverrides:\n  - id: kernel-tick-rate\n    severity: critical\n');

  const api = new FakeApiServer();
  await api.start();
  t.after(() => api.stop());
  api.addNode('worker-1', {});

  let agentLog = '';
  const agent = spawn(process.execPath, [bundle, 'agent', '--kubeconfig', api.writeKubeconfig(), '--node-name', 'worker-1',
    '--interval', '1s', '--startup-jitter', '1ms', '--metrics-addr', '127.0.0.1:0', '--host-root', host,
    '--rules', path.join(tmp, 'overrides'), '--probe-interval', 'off'], { cwd: tmp, stdio: ['ignore', 'ignore', 'pipe'] });
  t.after(() => stopChild(agent));
  agent.stderr?.on('data', (d: Buffer) => { agentLog += d.toString(); });
  let metricsAddr = '';
  await waitFor(async () => {
    metricsAddr = /serving \/metrics, \/healthz, \/readyz on ([\d.]+:\d+)/.exec(agentLog)?.[1] ?? '';
    return metricsAddr !== '';
  }, 20_000, () => `agent did not start:\n${agentLog}`);

  const prom = await startPrometheus(prometheus, tmp, [{ address: metricsAddr, labels: { node: 'worker-1' } }], await testRules());
  t.after(() => prom.stop());
  const critical = async () => (await alerts(prom.url)).find((a) => a.labels.alertname === 'NodeTuningCriticalFinding');

  const firedAfter = await waitFor(async () => (await critical())?.state === 'firing', FIRING_WITHIN_MS,
    () => `no firing alert; agent:\n${agentLog}\nprometheus:\n${prom.log()}`);
  const alert = await critical();
  assert.deepEqual({ rule: alert?.labels.rule, node: alert?.labels.node, severity: alert?.labels.severity, category: alert?.labels.category },
    { rule: 'kernel-tick-rate', node: 'worker-1', severity: 'critical', category: 'kernel' });
  assert.equal(alert?.annotations?.summary, 'Critical tuning finding kernel-tick-rate on worker-1 — boot a kernel built with CONFIG_HZ_1000=y',
    'the short fix from the rule, as Prometheus renders the template');
  t.diagnostic(`NodeTuningCriticalFinding firing ${(firedAfter / 1000).toFixed(1)} s after Prometheus started`);
  assert.equal((await query(prom.url, 'up{job="node-tuning-advisor"}'))[0]?.value[1], '1');
  assert.ok(api.node('worker-1')?.metadata.annotations['node-tuning-advisor.io/summary'] !== undefined, 'the agent published on its Node');
  const others = (await alerts(prom.url)).filter((a) => a.labels.alertname !== 'NodeTuningCriticalFinding').map((a) => a.labels.alertname);
  assert.deepEqual(others.filter((n) => n?.startsWith('NodeTuningAdvisor')), [], 'agent up and scanning: no Down/ScanStale');

  await hostWithHz(host, 1000);
  const resolvedAfter = await waitFor(async () => (await critical()) === undefined, FIRING_WITHIN_MS,
    () => `still active after the fix; agent:\n${agentLog}`);
  t.diagnostic(`resolved ${(resolvedAfter / 1000).toFixed(1)} s after CONFIG_HZ=1000`);
  const finding = await query(prom.url, 'node_tuning_advisor_finding{rule="kernel-tick-rate"}');
  assert.equal(finding[0]?.value[1], '0');
});
