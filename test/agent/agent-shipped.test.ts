// The agent as it ships, on the real control plane: the bundle run with the image's node flags
// (`node --lite-mode`, no WebAssembly: requests over node:https), the DaemonSet's args and env
// (NODE_OPTIONS), the rules ConfigMap's files, the project's RBAC, and a token bound to a pod on the
// node. It publishes what the same bundle's `scan` finds (annotations,
// one Warning Event per failing rule), serves /metrics and /readyz, and stops cleanly on SIGTERM.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { execFile } from 'node:child_process';
import { cp as copy, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { parse } from 'yaml';
import { bundleTo } from '../helpers/bundle-cache.ts';
import { ControlPlane, realServerTier } from '../helpers/control-plane.ts';
import { createBoundPod, createReadyNode, podBoundToken, waitForAdmission } from '../helpers/kube-objects.ts';
import { REPO } from '../helpers/manifests.ts';
import { stopChild, waitFor } from '../helpers/prometheus.ts';
import { localArgv, shippedAgentCommand, type ShippedCommand } from '../helpers/shipped-agent.ts';
import { SUMMARY_KEY } from '../../src/wire/annotations.ts';

const NODE = 'shipped-1';
const HOST = path.join(REPO, 'test/fixtures/hosts/mixed-governors');

describe('the shipped command line on the real control plane', realServerTier(), () => {
  let cp: ControlPlane;
  let dir: string;
  let bundle: string;
  let rules: string;
  let kubeconfig: string;
  let shipped: ShippedCommand;

  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'nta-agent-shipped-'));
    const app = path.join(dir, 'app');
    ({ file: bundle } = await bundleTo(path.join(app, 'dist/bundle')));
    await copy(path.join(REPO, 'package.json'), path.join(app, 'package.json'));
    await copy(path.join(REPO, 'rules'), path.join(app, 'rules'), { recursive: true });
    // What the DaemonSet mounts from the rules ConfigMap (manifests/base/rules, its generator's files).
    rules = path.join(dir, 'configmap-rules');
    const generator = parse(await readFile(path.join(REPO, 'manifests/base/rules/kustomization.yaml'), 'utf8'));
    for (const file of generator.configMapGenerator[0].files as string[]) await copy(path.join(REPO, 'manifests/base/rules', file), path.join(rules, file));
    shipped = await shippedAgentCommand();

    cp = await ControlPlane.start();
    // The admission policy's real-server tests are test/e2e's (issue 11); here the RBAC and the policies
    // the agent runs with (it does not start unless they hold its token).
    for (const file of ['namespace.yaml', 'rbac.yaml', 'admission-policy.yaml']) {
      const applied = await cp.kubectl(['apply', '-f', path.join(REPO, 'manifests/base', file)]);
      assert.equal(applied.code, 0, applied.stderr);
    }
    await createReadyNode(cp, NODE);
    const pod = await createBoundPod(cp, 'node-tuning-advisor', `agent-${NODE}`, NODE, 'node-tuning-advisor');
    const token = await podBoundToken(cp, 'node-tuning-advisor', 'node-tuning-advisor', pod);
    kubeconfig = await cp.writeKubeconfig(path.join(dir, 'agent.kubeconfig'), 'agent', token);
    // RBAC takes a moment: wait until the token may patch its own annotations (dry run).
    await waitForAdmission(async () => (await cp.request('PATCH', `/api/v1/nodes/${NODE}?dryRun=All&fieldManager=node-tuning-advisor`,
      { metadata: { annotations: { 'node-tuning-advisor.io/probe': 'x' } } }, { contentType: 'application/merge-patch+json', token })).status, 200, 30_000);
  });
  after(async () => {
    await cp?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  test('publishes what the bundle\'s scan finds, serves /metrics and /readyz, ends on SIGTERM', { timeout: 120_000 }, async () => {
    const scan = await promisify(execFile)(process.execPath, [...shipped.nodeFlags, bundle, 'scan', '--host-root', HOST, '--rules', rules,
      '--no-bundled-rules', '--output', 'json', '--fail-on', 'never'], { env: { PATH: process.env.PATH ?? '', ...shipped.env } });
    const failing = (JSON.parse(scan.stdout) as { findings: { ruleId: string; status: string }[] }).findings
      .filter((f) => f.status === 'fail').map((f) => f.ruleId).sort();
    assert.ok(failing.length > 0, 'the fixture host has failing rules');

    const argv = localArgv(shipped, bundle, {
      'host-root': HOST, 'metrics-addr': '127.0.0.1:0', interval: '2s', 'startup-jitter': '1ms', 'probe-interval': 'off', rules, kubeconfig,
    });
    let log = '';
    const agent: ChildProcess = spawn(process.execPath, argv, { stdio: ['ignore', 'ignore', 'pipe'], env: { PATH: process.env.PATH ?? '', NODE_NAME: NODE, ...shipped.env } });
    agent.stderr?.on('data', (d: Buffer) => { log += d.toString(); });
    try {
      const cmdline = (await readFile(`/proc/${agent.pid}/cmdline`, 'utf8')).split('\0');
      assert.deepEqual(cmdline.slice(1, 1 + shipped.nodeFlags.length), shipped.nodeFlags, 'node runs with the image\'s flags');
      let addr = '';
      await waitFor(async () => (addr = /serving \/metrics, \/healthz, \/readyz on ([\d.]+:\d+)/.exec(log)?.[1] ?? '') !== '', 30_000, () => `not serving:\n${log}`);
      await waitFor(async () => (await cp.must('GET', `/api/v1/nodes/${NODE}`)).metadata.annotations?.[SUMMARY_KEY] !== undefined, 60_000, () => `no summary annotation:\n${log}`);
      const events = async () => (await cp.must('GET', '/api/v1/namespaces/default/events')).items
        .filter((e: any) => e.involvedObject.name === NODE && e.reason === 'TuningRecommendation');
      await waitFor(async () => (await events()).length >= failing.length, 30_000, () => `Events missing:\n${log}`);
      const named = (await events()).map((e: any) => failing.find((id) => e.message.includes(id))).sort();
      assert.deepEqual(named, failing, 'one Warning Event per rule the scan finds failing');

      assert.equal((await fetch(`http://${addr}/readyz`)).status, 200);
      const metrics = await (await fetch(`http://${addr}/metrics`)).text();
      assert.match(metrics, /^node_tuning_advisor_build_info\{/m);
      assert.match(metrics, /^node_tuning_advisor_api_requests_total\{verb="patch",code="200"\} [1-9]/m);
      assert.match(metrics, /^node_tuning_advisor_scan_errors_total 0$/m);
      assert.doesNotMatch(log, /publish failed|internal error|WebAssembly/, log);

      agent.kill('SIGTERM');
      const code = await new Promise<number | null>((resolve) => agent.once('exit', (c) => resolve(c)));
      assert.equal(code, 0, log);
    } finally {
      await stopChild(agent);
    }
  });
});
