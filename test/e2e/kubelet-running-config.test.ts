// The running kubelet against its files, on a real node. REAL: kube-apiserver with the shipped RBAC
// and the agent's pod-bound token; a real kubelet v1.36.2 with containerd (../shared/envtest/real-node)
// whose HTTPS /configz does real authentication and authorization; the agent's real wiring (wireAgent)
// and scan pipeline (runScan) over the kubelet's own view of the machine (/proc/<pid>/root, as the
// DaemonSet's host root: its /proc shows this node's processes only). The kubelet starts at 5/10,
// then its config file is edited to 50/100 without a restart.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFile, mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { wireAgent } from '../../src/agent/wire.ts';
import { TokenBucket } from '../../src/kube/backoff.ts';
import { runScan } from '../../src/scan.ts';
import type { Report } from '../../src/report/types.ts';
import { ControlPlane, envtestAssets } from '../helpers/control-plane.ts';
import { REPO } from '../helpers/manifests.ts';
import { postBaseManifests } from '../helpers/kube-objects.ts';
import { agentIdentity, type AgentIdentity } from '../helpers/shipped.ts';
import { REAL_NODE_APISERVER_ARGS, RealNode, realNodeTier } from '../helpers/real-node.ts';

const NODE = 'running-config-1';
const RULES = ['kubelet-restart-pending', 'kubelet-api-qps'];
const ROLE = '/apis/rbac.authorization.k8s.io/v1/clusterroles/node-tuning-advisor';

describe('the agent reads its real kubelet\'s /configz: running values decide, drift is a restart pending', { ...realNodeTier(), concurrency: false }, () => {
  let cp: ControlPlane;
  let node: RealNode;
  let tmp: string;
  let agent: AgentIdentity;
  let kubeletBinary: string;
  let binDir: string;
  let configLines: string[];

  before(async () => {
    tmp = await mkdtemp(path.join(tmpdir(), 'nta-running-config-'));
    // A kubelet binary of the test's own, so that replacing it touches nothing shared; under root's /run,
    // not /tmp: a binary in a directory every user may write is not root's to vouch for.
    await mkdir('/run/nta-test', { recursive: true, mode: 0o755 });
    binDir = await mkdtemp('/run/nta-test/kubelet-');
    kubeletBinary = path.join(binDir, 'kubelet');
    await copyFile(path.join((envtestAssets() as { dir: string }).dir, 'kubelet'), kubeletBinary);
    cp = await ControlPlane.start({ apiserverArgs: REAL_NODE_APISERVER_ARGS });
    await postBaseManifests(cp, ['namespace.yaml', 'rbac.yaml', 'admission-policy.yaml']);
    node = await RealNode.start(cp, NODE, { REAL_NODE_KUBE_API_QPS: '5', REAL_NODE_KUBE_API_BURST: '10', REAL_NODE_KUBELET: kubeletBinary });
    // The operator's edit, never applied: the running kubelet keeps 5/10.
    const text = await readFile(node.configFile, 'utf8');
    await writeFile(node.configFile, text.replace(/^kubeAPIQPS: 5$/m, 'kubeAPIQPS: 50').replace(/^kubeAPIBurst: 10$/m, 'kubeAPIBurst: 100'));
    configLines = (await readFile(node.configFile, 'utf8')).split('\n');
    agent = await agentIdentity(cp, NODE, tmp);
  });
  after(async () => {
    await node?.stop();
    await cp?.stop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
    if (binDir) await rm(binDir, { recursive: true, force: true });
  });

  const lineOf = (key: string) => configLines.findIndex((l) => l.startsWith(`${key}:`)) + 1;

  /** The agent's real wiring until a report has `until` (or 60 s); its last report and log. */
  async function agentReport(until: (r: Report) => boolean): Promise<{ report: Report; logs: string[] }> {
    const logs: string[] = [];
    let report: Report | undefined;
    const hostRoot = await node.hostRoot();
    const running = wireAgent({
      kubeconfig: agent.kubeconfig, nodeName: NODE, log: (l) => logs.push(l),
      scan: async (cluster) => (report = await runScan({ hostRoot, nodeName: NODE, cluster, only: RULES })),
      limiter: new TokenBucket(100, 100), requestTimeoutMs: 10_000,
      agent: { intervalMs: 1000, startupJitterMs: 0, nodeReadTimeoutMs: 20_000, backoff: { baseMs: 50, capMs: 500 } },
    });
    const done = running.run();
    for (let i = 0; i < 600 && !(report && until(report)); i++) await new Promise((r) => setTimeout(r, 100));
    running.stop();
    await done;
    assert.ok(report, logs.join('\n'));
    return { report, logs };
  }
  const finding = (r: Report, id: string) => r.findings.find((f) => f.ruleId === id) ?? assert.fail(`${id} not in the report`);

  test('with nodes/configz the kubelet rules use the running 5/10, and the edit to 50/100 is a restart pending with both values', async () => {
    const { report, logs } = await agentReport((r) => r.facts?.['kubelet.configz.read']?.value === 'ok');
    assert.ok(logs.some((l) => /^kubelet \/configz: read from https:\/\/10\.\d+\.\d+\.\d+:\d+\/configz$/.test(l)), logs.join('\n'));
    const qps = report.facts?.['kubelet.kubeAPIQPS'];
    assert.equal(qps?.value, 5, JSON.stringify(Object.fromEntries(Object.entries(report.facts ?? {}).filter(([k]) => k.startsWith('kubelet.')))).slice(0, 3000));
    assert.equal(qps?.source, 'running kubelet /configz');
    assert.equal(finding(report, 'kubelet-api-qps').status, 'fail', 'the running 5/10, not the file\'s 50/100');
    const pending = finding(report, 'kubelet-restart-pending');
    assert.equal(pending.status, 'fail');
    assert.match(pending.message, new RegExp(`kubeAPIQPS: running 5, ${node.configFile.replace(/[.]/g, '\\.')} line ${lineOf('kubeAPIQPS')} says 50`));
    assert.match(pending.message, new RegExp(`kubeAPIBurst: running 10, ${node.configFile.replace(/[.]/g, '\\.')} line ${lineOf('kubeAPIBurst')} says 100`));
    assert.equal(pending.remediation.summary, 'restart the kubelet: systemctl restart kubelet');
  });

  test('without nodes/configz the files decide, and the reasons name nodes/configz', async () => {
    const role = await cp.must('GET', ROLE);
    const without = role.rules.filter((r: { resources: string[] }) => !r.resources.includes('nodes/configz'));
    assert.equal(without.length, role.rules.length - 1, 'the shipped ClusterRole has the nodes/configz rule');
    await cp.must('PUT', ROLE, { ...role, rules: without });
    try {
      // The kubelet caches SubjectAccessReview answers (10 s allowed, 5 s denied here): wait for its 403.
      const { report } = await agentReport((r) => r.facts?.['kubelet.configz.read']?.value === 'forbidden');
      assert.match(String(report.facts?.['kubelet.configz.read']?.detail), /HTTP 403: the agent's ClusterRole lacks get nodes\/configz/);
      const qps = report.facts?.['kubelet.kubeAPIQPS'];
      assert.equal(qps?.value, 50, 'the file decides');
      assert.match(String(qps?.detail), /the running kubelet's value is unknown: HTTP 403: .*nodes\/configz/);
      assert.equal(finding(report, 'kubelet-api-qps').status, 'pass');
      const pending = finding(report, 'kubelet-restart-pending');
      assert.equal(pending.status, 'fail', 'the file changed after the kubelet started');
      assert.match(pending.message, /config\.yaml \(modified .*\) after the kubelet started .*: its running values may differ \(not read: HTTP 403: the agent's ClusterRole lacks get nodes\/configz/);
    } finally {
      await cp.must('PUT', ROLE, { ...role, metadata: { ...role.metadata, resourceVersion: undefined } });
    }
  });

  test('a replaced binary: the same finding, the kubelet rules still decided', async () => {
    const next = `${kubeletBinary}.new`;
    await copyFile(kubeletBinary, next);
    await rename(next, kubeletBinary);
    const { report } = await agentReport((r) => r.facts?.['kubelet.binaryReplaced']?.value === true && r.facts?.['kubelet.configz.read']?.value === 'ok');
    const pending = finding(report, 'kubelet-restart-pending');
    assert.equal(pending.status, 'fail');
    assert.match(pending.message, new RegExp(`binary ${kubeletBinary.replace(/[.]/g, '\\.')} replaced since the kubelet started`));
    assert.match(pending.message, /kubeAPIQPS: running 5/);
    assert.equal(report.facts?.['kubelet.kubeAPIQPS']?.value, 5);
    assert.equal(finding(report, 'kubelet-api-qps').status, 'fail', 'decided on the running values');
  });
});
