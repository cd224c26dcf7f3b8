// `helm uninstall` with the real Helm 4 (test/helpers/real-tools.ts) on a real v1.36 control plane
// with kube-controller-manager (its Job controller runs the hook). `helm install` puts the chart in a
// namespace of its own; two agents as that release deploys them (the bundle with the DaemonSet's
// args and env as the server holds them, pod-bound tokens) leave annotations, labels and heartbeat
// Leases: one agent `--once`, one still running with a 1 s heartbeat while the release goes. Then
// `helm uninstall`: Helm creates the pre-delete hook Job and waits for it; the Job controller makes
// its pod; the test plays that pod as a kubelet would run it: the bundled `cleanup` with the pod's
// own args and a token bound to the pod (the Job's ServiceAccount), then reports it Succeeded.
// Real: Helm (install, hook, wait, hook-delete-policy, uninstall), the Job controller, RBAC, the
// admission policies, the cleanup command and the agents. Played: the kubelet (no container runs).
// Afterwards no Node carries a node-tuning-advisor.io/ key, no heartbeat is left, and the running
// agent, whose access the hook revoked first, could not write either back.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { SILENCE_ANNOTATION } from '../../src/agent/silence.ts';
import { auditArgs, describeRequests, isWrite, type AuditLog } from '../helpers/audit.ts';
import { AgentProcess, buildApp } from '../helpers/bundled-agent.ts';
import { ControlPlane, realServerTier } from '../helpers/control-plane.ts';
import { createReadyNode, podBoundToken } from '../helpers/kube-objects.ts';
import { REPO } from '../helpers/manifests.ts';
import { helm as runHelm } from '../helpers/helm.ts';
import { layerToolTier } from '../helpers/real-tools.ts';
import { PREFIX, agentIdentity, daemonSetRun } from '../helpers/shipped.ts';

const A = 'uninstall-a';
const B = 'uninstall-b';
const RELEASE = 'nta';
const HOST = path.join(REPO, 'test/fixtures/hosts/seed-000-before');
const CHART = path.join(REPO, 'charts/node-tuning-advisor');
const LEASES = (ns: string) => `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases`;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function until<T>(what: string, check: () => Promise<T | undefined | false>, timeoutMs: number, explain: () => string = () => ''): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms\n${explain()}`);
    await sleep(200);
  }
}

describe('helm uninstall (real Helm 4) removes what the agents wrote', { skip: realServerTier().skip ?? layerToolTier().skip }, () => {
  const namespace = `nta-uninstall-${randomBytes(4).toString('hex')}`;
  const agentUser = `system:serviceaccount:${namespace}:node-tuning-advisor`;
  const cleanupUser = `system:serviceaccount:${namespace}:node-tuning-advisor-cleanup`;
  let cp: ControlPlane;
  let audit: AuditLog;
  let tmp: string;
  let bundle: string;
  let running: AgentProcess | undefined;

  const helm = (...args: string[]) => runHelm(args, cp);
  const ours = async (node: string) => {
    const meta = (await cp.must('GET', `/api/v1/nodes/${node}`)).metadata;
    const keys = [...Object.keys(meta.annotations ?? {}), ...Object.keys(meta.labels ?? {})];
    return keys.filter((k) => k.startsWith(PREFIX));
  };
  const leases = async () => ((await cp.must('GET', LEASES(namespace))).items as any[]).map((l) => l.metadata.name as string);

  before(async () => {
    tmp = await mkdtemp(path.join(tmpdir(), 'nta-helm-uninstall-'));
    const auditing = await auditArgs(tmp, [agentUser, cleanupUser]);
    audit = auditing.log;
    [cp, bundle] = await Promise.all([
      ControlPlane.start({ controllerManager: true, apiserverArgs: auditing.args }), buildApp(path.join(tmp, 'app')),
    ]);
    const installed = await helm('install', RELEASE, CHART, '-n', namespace, '--create-namespace');
    assert.equal(installed.code, 0, installed.stderr);
    for (const node of [A, B]) await createReadyNode(cp, node, { labels: { 'example.com/pool': 'batch' }, annotations: { 'example.com/owner': 'team-a' } });
    // The operator's silence: not under the agents' prefix, not theirs to remove.
    assert.equal((await cp.kubectl(['annotate', 'node', B, `${SILENCE_ANNOTATION}=kernel-tick-rate`])).code, 0);
    const runOf = async (node: string) => {
      const identity = await agentIdentity(cp, node, tmp, `agent-${node}`, namespace);
      return daemonSetRun(cp, 'node-tuning-advisor', { node, hostRoot: HOST, rulesDir: path.join(tmp, `rules-${node}`), kubeconfig: identity.kubeconfig, namespace });
    };
    const [runA, runB] = await Promise.all([runOf(A), runOf(B)]);
    const once = AgentProcess.start(bundle, [...runB.args, '--once', '--probe-interval=off'], runB.env);
    assert.equal(await once.wait(), 0, once.log);
    running = AgentProcess.start(bundle, [...runA.args, '--heartbeat=1s', '--interval=2s', '--startup-jitter=1ms', '--probe-interval=off'], runA.env);
    // Its heartbeat renewed at least twice: the running agent writes while the release goes.
    let first: string | undefined;
    await until('two renewals of its heartbeat', async () => {
      const got = await cp.request('GET', `${LEASES(namespace)}/${A}`);
      first ??= got.body?.spec?.renewTime;
      return got.status === 200 && got.body.spec.renewTime !== first;
    }, 60_000, () => running?.log ?? '');
  });
  after(async () => {
    await running?.stop();
    await cp?.stop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  test('before: both nodes carry the agents\' annotations and labels, and each its heartbeat Lease', async () => {
    for (const node of [A, B]) {
      const keys = await ours(node);
      assert.ok(keys.includes(`${PREFIX}summary`) && keys.includes(`${PREFIX}grade`), `${node}: ${keys}`);
    }
    assert.deepEqual((await leases()).sort(), [A, B]);
  });

  test('helm uninstall: the hook Job\'s pod (played: the bundled cleanup with its args and a pod-bound token) removes it all; nothing comes back', async () => {
    const startedAt = Date.now();
    const live = running as AgentProcess;
    const from = live.log.length;
    const uninstall = helm('uninstall', RELEASE, '-n', namespace, '--timeout', '180s');
    // The Job controller makes the hook's pod once Helm has created the Job.
    const pod = await until('the hook Job\'s pod', async () => {
      const pods = (await cp.must('GET', `/api/v1/namespaces/${namespace}/pods?labelSelector=${encodeURIComponent('job-name=node-tuning-advisor-cleanup')}`)).items as any[];
      return pods[0];
    }, 60_000);
    const container = pod.spec.containers[0];
    assert.equal(pod.spec.serviceAccountName, 'node-tuning-advisor-cleanup');
    assert.deepEqual(container.args, ['cleanup', `--agent-namespace=${namespace}`, '--revoke-agent-access']);
    const token = await podBoundToken(cp, namespace, pod.spec.serviceAccountName, pod);
    const kubeconfig = await cp.writeKubeconfig(path.join(tmp, 'cleanup.kubeconfig'), cleanupUser, token);
    const env = Object.fromEntries((container.env ?? []).map((e: { name: string; value: string }) => [e.name, e.value]));
    const cleanup = AgentProcess.start(bundle, [...container.args, `--kubeconfig=${kubeconfig}`], env);
    assert.equal(await cleanup.wait(), 0, cleanup.log);
    assert.match(cleanup.log, /^cleanup: revoked the agents' write access \(ClusterRoleBinding node-tuning-advisor, RoleBinding [a-z0-9-]+\/node-tuning-advisor-heartbeat deleted\)$/m);
    assert.match(cleanup.log, /^cleanup: removed \d+ annotations and 4 labels under node-tuning-advisor\.io\/ from 2 of 2 nodes, and 2 heartbeat Leases in /m);
    // As the kubelet reports a container that exited 0.
    const now = new Date().toISOString();
    await cp.must('PATCH', `/api/v1/namespaces/${namespace}/pods/${pod.metadata.name}/status`, {
      status: { phase: 'Succeeded', conditions: [{ type: 'Ready', status: 'False', reason: 'PodCompleted', lastTransitionTime: now }],
        containerStatuses: [{ name: container.name, image: container.image, imageID: '', ready: false, restartCount: 0,
          state: { terminated: { exitCode: 0, reason: 'Completed', startedAt: now, finishedAt: now } } }] },
    }, { contentType: 'application/merge-patch+json' });
    const done = await uninstall;
    assert.equal(done.code, 0, `${done.stdout}\n${done.stderr}`);
    assert.match(done.stdout, new RegExp(`release "${RELEASE}" uninstalled`));

    // The agent still running (its pod would be terminating) tried both writes again after the
    // cleanup, and was refused: 403 once its bindings were gone, 401 once its ServiceAccount was.
    // Wait for each refusal in its log, then look.
    await until('a refused heartbeat and a refused publish after the cleanup', async () => {
      const tail = live.log.slice(from);
      return /heartbeat renewing its Lease .* failed \(HTTP 40[13]/.test(tail) && /publish failed \(HTTP 40[13]/.test(tail);
    }, 60_000, () => live.log.slice(from));
    for (const node of [A, B]) assert.deepEqual(await ours(node), [], `${node} carries no node-tuning-advisor.io/ key`);
    assert.deepEqual(await leases(), [], 'no heartbeat Lease');
    const b = (await cp.must('GET', `/api/v1/nodes/${B}`)).metadata;
    assert.deepEqual([b.annotations['example.com/owner'], b.annotations[SILENCE_ANNOTATION], b.labels['example.com/pool']], ['team-a', 'kernel-tick-rate', 'batch'], 'what is not the agents\' stays');

    // From the audit log: the cleanup identity was never refused; every write of the agents after its first one was.
    const requests = await audit.requests((r) => r.at >= startedAt);
    const cleanupRequests = requests.filter((r) => r.user === cleanupUser);
    assert.deepEqual(cleanupRequests.filter((r) => r.code >= 400), [], describeRequests(cleanupRequests));
    const revokedAt = cleanupRequests.filter(isWrite)[0]?.done ?? Infinity;
    const lateWrites = requests.filter((r) => r.user === agentUser && isWrite(r) && r.at > revokedAt + 2_000);
    assert.ok(lateWrites.length > 0, 'the agent tried again after the cleanup');
    assert.deepEqual(lateWrites.filter((r) => r.code < 400), [], describeRequests(lateWrites));
    // hook-delete-policy: the succeeded Job is gone; the release's objects too; the namespace stays (Helm's).
    assert.equal((await cp.request('GET', `/apis/batch/v1/namespaces/${namespace}/jobs/node-tuning-advisor-cleanup`)).status, 404);
    for (const url of ['/apis/rbac.authorization.k8s.io/v1/clusterroles/node-tuning-advisor-cleanup',
      '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies/node-tuning-advisor-cleanup-only-removes',
      `/apis/apps/v1/namespaces/${namespace}/daemonsets/node-tuning-advisor`]) {
      assert.equal((await cp.request('GET', url)).status, 404, url);
    }
  });
});
