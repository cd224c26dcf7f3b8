// How the agent reaches its kubelet's /metrics: the serving certificate checked against
// --kubelet-ca-file or the cluster CA (or not, under --kubelet-insecure-tls), the token sent only over
// TLS, plain HTTP only where the port speaks it (kubemark's hollow kubelet). The kubelet's side is a
// TLS (or plain) server on a free port serving kubelet_pod_start_* histograms in the kubelet's text
// format (the HELP text of kubelet v1.36, as in test/agent/kubelet-sli.test.ts): what is tested is the
// agent's handshake, not the kubelet's decisions. The real kubelet's authentication and authorization
// of the token (TokenReview, SubjectAccessReview with the shipped RBAC: 200, and 403 without get
// nodes/metrics) are in test/e2e/real-node.test.ts. The agent is the real wiring (wireAgent) with the
// project's client against a real kube-apiserver; its Node is read through its real list-watch. Each
// scan is the real pipeline (runScan: the kubelet-metrics collector, the bundled rule
// kubelet-pod-start-sli) and is published on the Node by the real publisher: what the read came to is
// read back from the Node's findings annotation, the lines `kubectl describe node` shows.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer as createHttpsServer, type Server } from 'node:https';
import { createServer as createHttpServer } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { wireAgent } from '../../src/agent/wire.ts';
import { TokenBucket } from '../../src/kube/backoff.ts';
import { createAgentMetrics, type AgentMetrics } from '../../src/publish/metrics.ts';
import { ControlPlane, realServerTier } from '../helpers/control-plane.ts';
import { createReadyNode, postBaseManifests } from '../helpers/kube-objects.ts';
import { REPO } from '../helpers/manifests.ts';
import { runScan } from '../../src/scan.ts';
import kubeletMetricsCollector from '../../src/collectors/kubelet-metrics.ts';
import workloadApiCollector from '../../src/collectors/workload-api.ts';
import { FINDINGS_KEY } from '../../src/wire/annotations.ts';
import type { Report } from '../../src/report/types.ts';
import { agentIdentity, type AgentIdentity } from '../helpers/shipped.ts';

const run = promisify(execFile);
const NODE = 'kubelet-https-1';
const HELP = '# HELP kubelet_pod_start_sli_duration_seconds [ALPHA] Duration in seconds to start a pod, excluding time to pull images and run init containers, measured from pod creation timestamp to when all its containers are reported as started and observed via watch';
/** The kubelet's histogram after `pods` pods, all in the 2-3 s bucket. */
const kubeletMetrics = (pods: number): string => [
  HELP, '# TYPE kubelet_pod_start_sli_duration_seconds histogram',
  ...['0.5', '1', '2'].map((le) => `kubelet_pod_start_sli_duration_seconds_bucket{le="${le}"} 0`),
  ...['3', '4', '5', '+Inf'].map((le) => `kubelet_pod_start_sli_duration_seconds_bucket{le="${le}"} ${pods}`),
  `kubelet_pod_start_sli_duration_seconds_sum ${pods * 2.5}`, `kubelet_pod_start_sli_duration_seconds_count ${pods}`, '',
].join('\n');

async function certificate(dir: string, name: string, ca: { cert: string; key: string }): Promise<{ cert: string; key: string }> {
  const base = path.join(dir, name);
  await writeFile(`${base}.ext`, `subjectAltName = IP:127.0.0.1, DNS:${NODE}\nextendedKeyUsage = serverAuth\n`);
  await run('openssl', ['req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', `${base}.key`, '-subj', `/CN=${NODE}`, '-out', `${base}.csr`]);
  await run('openssl', ['x509', '-req', '-in', `${base}.csr`, '-CA', ca.cert, '-CAkey', ca.key, '-set_serial', '0x01', '-days', '1', '-extfile', `${base}.ext`, '-out', `${base}.crt`]);
  return { cert: await readFile(`${base}.crt`, 'utf8'), key: await readFile(`${base}.key`, 'utf8') };
}

async function selfSignedCa(dir: string, name: string): Promise<{ cert: string; key: string }> {
  const base = path.join(dir, name);
  await run('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', `${base}.key`, '-subj', `/CN=${name}`,
    '-days', '1', '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign', '-out', `${base}.crt`]);
  return { cert: `${base}.crt`, key: `${base}.key` };
}

describe('the agent reaches its kubelet\'s /metrics over verified TLS, or plain HTTP where the port speaks it', realServerTier(), () => {
  let cp: ControlPlane;
  let tmp: string;
  let agent: AgentIdentity;
  let kubelet: Server;
  let kubeletPort = 0;
  let served = 0;
  /** The Authorization header of each request the TLS server answered. */
  const authorizations: (string | undefined)[] = [];
  let kubeletCa: { cert: string; key: string };
  let otherCa: { cert: string; key: string };
  const certs: Record<string, { cert: string; key: string }> = {};

  before(async () => {
    tmp = await mkdtemp(path.join(tmpdir(), 'nta-kubelet-https-'));
    cp = await ControlPlane.start();
    await postBaseManifests(cp, ['namespace.yaml', 'rbac.yaml', 'admission-policy.yaml']);
    [kubeletCa, otherCa] = await Promise.all([selfSignedCa(tmp, 'kubelet-ca'), selfSignedCa(tmp, 'other-ca')]);
    certs.kubelet = await certificate(tmp, 'kubelet', kubeletCa);
    certs.other = await certificate(tmp, 'other', otherCa);
    kubelet = createHttpsServer({ ...certs.kubelet }, (req, res) => {
      authorizations.push(req.headers.authorization);
      res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' }).end(kubeletMetrics(served++ === 0 ? 10 : 110));
    });
    await new Promise<void>((resolve) => kubelet.listen(0, '127.0.0.1', resolve));
    kubeletPort = (kubelet.address() as { port: number }).port;
    await createReadyNode(cp, NODE);
    await cp.must('PATCH', `/api/v1/nodes/${NODE}/status`, { status: { addresses: [{ type: 'InternalIP', address: '127.0.0.1' }, { type: 'Hostname', address: NODE }], daemonEndpoints: { kubeletEndpoint: { Port: kubeletPort } } } },
      { contentType: 'application/merge-patch+json' });
    agent = await agentIdentity(cp, NODE, tmp);
  });
  after(async () => {
    kubelet?.close();
    kubelet?.closeAllConnections();
    await cp?.stop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  const RULE = 'kubelet-pod-start-sli';
  /** The Node's findings annotation line of the rule (none: it passes or does not apply). */
  async function publishedLine(): Promise<string | undefined> {
    const node = await cp.must('GET', `/api/v1/nodes/${NODE}`);
    return String(node.metadata.annotations?.[FINDINGS_KEY] ?? '').split('\n').find((l) => l.includes(` ${RULE}: `));
  }

  /**
   * The real agent wiring until `until` holds for its exposition and `published` for the rule's line
   * on the Node (or 20 s); its log lines and its last report.
   */
  async function agentUntil(kubeletOpts: { caFile?: string; insecureTls?: boolean }, until: RegExp, published?: (line: string | undefined) => boolean): Promise<{ text: string; logs: string[]; report?: Report; line?: string }> {
    const metrics: AgentMetrics = createAgentMetrics('test');
    const logs: string[] = [];
    let report: Report | undefined;
    const running = wireAgent({
      kubeconfig: agent.kubeconfig, nodeName: NODE, log: (l) => logs.push(l), metrics,
      scan: async (cluster) => (report = await runScan({ hostRoot: tmp, nodeName: NODE, cluster, collectors: [workloadApiCollector, kubeletMetricsCollector], only: [RULE] })),
      limiter: new TokenBucket(100, 100), requestTimeoutMs: 10_000, kubelet: kubeletOpts,
      agent: { intervalMs: 1500, startupJitterMs: 0, nodeReadTimeoutMs: 10_000, backoff: { baseMs: 50, capMs: 500 } },
    });
    const done = running.run();
    let text = '';
    let line: string | undefined;
    for (let i = 0; i < 200; i++) {
      await new Promise((r) => setTimeout(r, 100));
      text = await metrics.render();
      if (!until.test(text)) continue;
      if (published === undefined) break;
      line = await publishedLine();
      if (published(line)) break;
    }
    running.stop();
    await done;
    return { text, logs, report, line };
  }

  /** The rule's finding in the agent's report: unknown, with the read's reason (and the fact with its source). */
  function assertUnknownWith(report: Report | undefined, result: string, reason: RegExp): void {
    const finding = report?.findings.find((f) => f.ruleId === RULE);
    assert.equal(finding?.status, 'unknown', JSON.stringify(finding));
    assert.match(finding!.message, reason);
    const read = report!.facts?.['kubelet.metrics.read'];
    assert.equal(read?.value, result);
    assert.equal(read?.source, `https://127.0.0.1:${kubeletPort}/metrics`);
  }

  test('a serving certificate signed by --kubelet-ca-file: the token goes over TLS and the agent exposes the kubelet SLI p99', async () => {
    served = 0;
    authorizations.length = 0;
    const { text, logs, report } = await agentUntil({ caFile: kubeletCa.cert }, /^node_tuning_advisor_kubelet_pod_start_p99_seconds\{histogram="pod_start_sli"\} /m);
    assert.equal(authorizations[0], `Bearer ${agent.token}`, 'the agent\'s pod-bound token, over verified TLS');
    const p99 = /^node_tuning_advisor_kubelet_pod_start_p99_seconds\{histogram="pod_start_sli"\} (\S+)$/m.exec(text);
    assert.ok(p99, `${text.split('\n').filter((l) => l.includes('kubelet_')).join('\n')}\n${logs.join('\n')}`);
    assert.ok(Math.abs(Number(p99[1]) - 2.99) < 1e-9, '100 pods in the 2-3 s bucket between the two reads');
    assert.match(text, /^node_tuning_advisor_kubelet_metrics_read\{result="ok"\} 1$/m);
    assert.ok(logs.some((l) => l.includes(`kubelet /metrics: read from https://127.0.0.1:${kubeletPort}/metrics`)), logs.join('\n'));
    const finding = report?.findings.find((f) => f.ruleId === RULE);
    assert.equal(finding?.status, 'pass', 'the kubelet\'s SLI p99 (2.99 s) is within the 5 s SLO');
    assert.equal(report?.facts?.['kubelet.podStartSli.p99Ms']?.value, 2990);
  });

  test('a serving certificate not signed by the given CA is refused; --kubelet-insecure-tls reads it', async () => {
    kubelet.setSecureContext({ ...certs.other });
    try {
      const refused = await agentUntil({ caFile: kubeletCa.cert }, /kubelet_metrics_read\{result="tls"\} 1/, (l) => /UNKN .*--kubelet-ca-file/.test(l ?? ''));
      assert.match(refused.text, /^node_tuning_advisor_kubelet_metrics_read\{result="tls"\} 1$/m);
      assert.doesNotMatch(refused.text, /^node_tuning_advisor_kubelet_pod_start_p99_seconds\{/m, 'no p99: unknown');
      assert.ok(refused.logs.some((l) => /certificate is not signed by --kubelet-ca-file: pass its signing CA \(or, knowing the risk, --kubelet-insecure-tls\)/.test(l)), refused.logs.join('\n'));
      assertUnknownWith(refused.report, 'tls', /^Cannot decide: pods the kubelet timed: the kubelet's certificate is not signed by --kubelet-ca-file: pass its signing CA \(or, knowing the risk, --kubelet-insecure-tls\) \(UNABLE_TO_VERIFY_LEAF_SIGNATURE\)\.$/);
      assert.equal(refused.line, `UNKN ${RULE}: pods the kubelet timed: the kubelet's certificate is not signed by --kubelet-ca-file: pass its signing CA`,
        'the Node\'s findings line (kubectl describe node) names the fix');
      const cluster = await agentUntil({}, /kubelet_metrics_read\{result="tls"\} 1/, (l) => /UNKN .*the cluster CA/.test(l ?? ''));
      assert.match(cluster.text, /^node_tuning_advisor_kubelet_metrics_read\{result="tls"\} 1$/m, 'nor against the cluster CA (the default)');
      assertUnknownWith(cluster.report, 'tls', /pods the kubelet timed: the kubelet's certificate is not signed by the cluster CA: set --kubelet-ca-file \(or, knowing the risk, --kubelet-insecure-tls\)/);
      assert.match(cluster.line ?? '', /^UNKN kubelet-pod-start-sli: pods the kubelet timed: the kubelet's certificate is not signed by the cluster CA: set --kubelet-ca-file( \(or, knowing the risk, --kubelet-insecure-tls\))?$/);
      authorizations.length = 0;
      const insecure = await agentUntil({ caFile: kubeletCa.cert, insecureTls: true }, /kubelet_metrics_read\{result="ok"\} 1/);
      assert.match(insecure.text, /^node_tuning_advisor_kubelet_metrics_read\{result="ok"\} 1$/m);
      assert.equal(authorizations[0], `Bearer ${agent.token}`, 'the token is still sent');
    } finally {
      kubelet.setSecureContext({ ...certs.kubelet });
    }
  });

  test('a port that answers plain HTTP (a hollow kubelet) is read over plain HTTP, without the token', async () => {
    const seen: (string | undefined)[] = [];
    const plain = createHttpServer((req, res) => { seen.push(req.headers.authorization); res.writeHead(200).end(kubeletMetrics(seen.length === 1 ? 0 : 100)); });
    await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', resolve));
    const port = (plain.address() as { port: number }).port;
    await cp.must('PATCH', `/api/v1/nodes/${NODE}/status`, { status: { daemonEndpoints: { kubeletEndpoint: { Port: port } } } }, { contentType: 'application/merge-patch+json' });
    try {
      const { text, logs } = await agentUntil({}, /^node_tuning_advisor_kubelet_pod_start_p99_seconds\{histogram="pod_start_sli"\} /m);
      assert.match(text, /^node_tuning_advisor_kubelet_metrics_read\{result="ok"\} 1$/m, logs.join('\n'));
      assert.ok(seen.length >= 2 && seen.every((a) => a === undefined), 'no Authorization header over plain HTTP');
      assert.ok(logs.some((l) => l.includes(`read from http://127.0.0.1:${port}/metrics`)), logs.join('\n'));
    } finally {
      plain.close();
      plain.closeAllConnections();
      await cp.must('PATCH', `/api/v1/nodes/${NODE}/status`, { status: { daemonEndpoints: { kubeletEndpoint: { Port: kubeletPort } } } }, { contentType: 'application/merge-patch+json' });
    }
  });
});
