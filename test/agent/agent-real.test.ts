// The agent's wiring on the real control plane, with the project's RBAC and a
// token bound to a pod on the node (what a DaemonSet pod gets). kube-apiserver's audit log gives the
// exact requests: one LIST and watches per resource, no GET, writes only on change; a restart writes
// nothing; an external edit is repaired with one PATCH; the workload watches fill the scan's state;
// a Node watch the RBAC forbids does not make the agent write every cycle (issue 17, item 7).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { auditArgs, describeRequests, isWrite, type AuditLog, type AuditedRequest } from '../helpers/audit.ts';
import { ControlPlane, realServerTier } from '../helpers/control-plane.ts';
import { createBoundPod, createReadyNode, ensureNamespace, ensureServiceAccount, podBoundToken } from '../helpers/kube-objects.ts';
import { runAgent } from '../helpers/agent-harness.ts';
import { REPO } from '../helpers/manifests.ts';
import { csiDriver, csiNode } from '../helpers/pods.ts';
import { finding, seedReport } from '../helpers/reports.ts';
import { ANNOTATION_PREFIX, SUMMARY_KEY, renderAnnotations } from '../../src/wire/annotations.ts';
import { createAgentMetrics } from '../../src/publish/metrics.ts';
import { WorkloadState } from '../../src/workload/state.ts';
import type { Report } from '../../src/report/types.ts';

const AGENT_USER = 'system:serviceaccount:node-tuning-advisor:node-tuning-advisor';
const BLIND_USER = 'system:serviceaccount:node-tuning-advisor:blind';
const REAL = { requestTimeoutMs: 10_000, agent: { nodeReadTimeoutMs: 15_000 } };

function ours(annotations: Record<string, string> | undefined): Record<string, string> {
  return Object.fromEntries(Object.entries(annotations ?? {}).filter(([k]) => k.startsWith(ANNOTATION_PREFIX)));
}

function tickFixedFrom(from: number): (scan: number) => Report {
  return (scan) => {
    const r = seedReport();
    if (scan < from) return r;
    r.findings = r.findings.map((f) => (f.ruleId === 'kernel-tick-rate' ? finding(f.ruleId, 'pass', { observed: 'CONFIG_HZ=1000' }) : f));
    return r;
  };
}

/** "patch nodes/worker-1 200", "create events 201": the resource path after the group version. */
const summary = (rs: AuditedRequest[]) => rs.map((r) => {
  const parts = r.path.split('/').filter(Boolean).slice(r.path.startsWith('/apis/') ? 3 : 2);
  const local = parts[0] === 'namespaces' && parts.length > 2 ? parts.slice(2) : parts;
  return `${r.verb} ${local.join('/')} ${r.code}`;
});
const resourceOf = (r: AuditedRequest) => r.path.split('/').filter(Boolean).at(-1);

describe('the agent on the real control plane', realServerTier(), () => {
  let cp: ControlPlane;
  let dir: string;
  let kubeconfig: string;
  let audit: AuditLog;
  /** The agent's requests but its start's admission check (dry runs: test/e2e/agent.test.ts counts those). */
  const byAgent = async (since: number, user = AGENT_USER) => (await audit.requests((r) => r.user === user && r.query.get('dryRun') !== 'All')).slice(since);

  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'nta-agent-real-'));
    const audited = await auditArgs(dir, [AGENT_USER, BLIND_USER]);
    audit = audited.log;
    cp = await ControlPlane.start({ apiserverArgs: audited.args });
    for (const file of ['namespace.yaml', 'rbac.yaml', 'admission-policy.yaml']) {
      const applied = await cp.kubectl(['apply', '-f', path.join(REPO, 'manifests/base', file)]);
      assert.equal(applied.code, 0, applied.stderr);
    }
    await createReadyNode(cp, 'worker-1', { annotations: { 'kubeadm.alpha.kubernetes.io/cri-socket': 'unix:///run/containerd/containerd.sock' } });
    const pod = await createBoundPod(cp, 'node-tuning-advisor', 'agent-worker-1', 'worker-1', 'node-tuning-advisor');
    kubeconfig = await cp.writeKubeconfig(path.join(dir, 'agent.kubeconfig'), 'agent', await podBoundToken(cp, 'node-tuning-advisor', 'node-tuning-advisor', pod));
  });
  after(async () => {
    await cp?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  test('first publish, unchanged cycles and a restart: one PATCH, one Event per failing rule, one LIST per watch, no GET', async () => {
    const first = runAgent(kubeconfig, tickFixedFrom(Infinity), { ...REAL, stopAfterScans: 8 });
    assert.equal(await first.result, 0, first.logs.join("\n"));
    // One log line per scan: score, rules changed, PATCH yes/no, Events sent (issue 24).
    const scanLines = first.logs.filter((l) => l.startsWith('scan: '));
    assert.equal(scanLines.length, 8, first.logs.join('\n'));
    assert.match(scanLines[0] as string, /^scan: score \d+\/100 \([A-F]\), 3 failing, \d+ unknown; first scan; PATCH yes, 3 Events sent; took \d+\.\d s$/);
    assert.match(scanLines[1] as string, /; 0 rules changed; PATCH no, 0 Events sent; /);
    const requests = await byAgent(0);
    assert.deepEqual(summary(requests.filter(isWrite)), ['patch nodes/worker-1 200', 'create events 201', 'create events 201', 'create events 201'], describeRequests(requests));
    assert.deepEqual(requests.filter((r) => r.code >= 400), [], 'nothing refused by RBAC');
    assert.equal(requests.filter((r) => r.verb === 'get').length, 0, 'no GET');
    for (const resource of ['nodes', 'pods', 'csidrivers', 'csinodes']) {
      assert.equal(requests.filter((r) => r.verb === 'list' && resourceOf(r) === resource).length, 1, `one LIST of ${resource}`);
      assert.ok(requests.some((r) => r.verb === 'watch' && resourceOf(r) === resource), `a watch of ${resource}`);
    }
    assert.ok(requests.filter((r) => r.verb === 'list' || r.verb === 'watch').filter((r) => resourceOf(r) === 'nodes').every((r) => r.query.get('fieldSelector') === 'metadata.name=worker-1'));
    assert.ok(requests.filter((r) => resourceOf(r) === 'pods').every((r) => r.query.get('fieldSelector') === 'spec.nodeName=worker-1'));
    const node = await cp.must('GET', '/api/v1/nodes/worker-1');
    assert.deepEqual(ours(node.metadata.annotations), renderAnnotations(seedReport()));
    assert.ok(node.metadata.annotations['kubeadm.alpha.kubernetes.io/cri-socket'], 'foreign annotation kept');
    const events = (await cp.must('GET', '/api/v1/namespaces/default/events')).items.filter((e: any) => e.source?.component === 'node-tuning-advisor');
    assert.deepEqual(events.map((e: any) => [e.type, e.reason, e.involvedObject.uid]), Array(3).fill(['Warning', 'TuningRecommendation', node.metadata.uid]));

    const before = requests.length;
    const restarted = runAgent(kubeconfig, tickFixedFrom(Infinity), { ...REAL, stopAfterScans: 4 });
    assert.equal(await restarted.result, 0);
    assert.deepEqual(summary((await byAgent(before)).filter(isWrite)), [], 'a restart with the same state writes nothing');
  });

  test('an external edit is repaired with one PATCH; a rule that passes now sends one Normal Event', async () => {
    let edited = false;
    const since = (await byAgent(0)).length;
    const run = runAgent(kubeconfig, async (scan) => {
      if (scan === 3 && !edited) {
        edited = true;
        await cp.must('PATCH', '/api/v1/nodes/worker-1', { metadata: { annotations: { [SUMMARY_KEY]: null } } }, { contentType: 'application/merge-patch+json' });
      }
      return tickFixedFrom(6)(scan);
    }, { ...REAL, stopAfterScans: 9 });
    assert.equal(await run.result, 0, run.logs.join('\n'));
    assert.deepEqual(summary((await byAgent(since)).filter(isWrite)), ['patch nodes/worker-1 200', 'patch nodes/worker-1 200', 'create events 201']);
    const scanLines = run.logs.filter((l) => l.startsWith('scan: '));
    assert.ok(scanLines.slice(2, 5).some((l) => /; 0 rules changed; PATCH yes, 0 Events sent; /.test(l)), `the repaired edit: a PATCH, no Event\n${scanLines.join('\n')}`);
    assert.match(scanLines[5] as string, /; 1 rule changed \(kernel-tick-rate fail→pass\); PATCH yes, 1 Event sent; /);
    const node = await cp.must('GET', '/api/v1/nodes/worker-1');
    assert.deepEqual(ours(node.metadata.annotations), renderAnnotations(tickFixedFrom(6)(6)));
    const resolved = (await cp.must('GET', '/api/v1/namespaces/default/events')).items.filter((e: any) => e.reason === 'TuningResolved');
    assert.equal(resolved.length, 1);
    assert.match(resolved[0].message, /kernel-tick-rate passes now: CONFIG_HZ=1000/);
  });

  test('an info rule that starts failing is a Normal Event, a warning one a Warning (issue 24)', async () => {
    const since = (await byAgent(0)).length;
    const withInfo = (): Report => {
      const r = seedReport();
      r.findings.push(finding('image-pull-serialized', 'fail', { severity: 'info', category: 'api-client', observed: 'serializeImagePulls true' }));
      return r;
    };
    const run = runAgent(kubeconfig, withInfo, { ...REAL, stopAfterScans: 3 });
    assert.equal(await run.result, 0, run.logs.join('\n'));
    // The previous test left kernel-tick-rate passing: it fails again here (warning) beside the new info rule.
    assert.deepEqual(summary((await byAgent(since)).filter(isWrite)), ['patch nodes/worker-1 200', 'create events 201', 'create events 201']);
    const events = (await cp.must('GET', '/api/v1/namespaces/default/events')).items;
    const typeOf = (rule: string) => events.filter((e: any) => e.reason === 'TuningRecommendation' && e.message.includes(` ${rule}: `)).map((e: any) => e.type);
    assert.deepEqual(typeOf('image-pull-serialized'), ['Normal']);
    assert.deepEqual(typeOf('kernel-tick-rate'), ['Warning', 'Warning'], 'the first publish and this one');
  });

  test('the workload watches see the pods on the node, CSIDriver objects and this node\'s CSINode', async () => {
    await cp.must('POST', '/apis/storage.k8s.io/v1/csidrivers', { apiVersion: 'storage.k8s.io/v1', kind: 'CSIDriver', ...csiDriver('attach.example.com', true) });
    await cp.must('POST', '/apis/storage.k8s.io/v1/csidrivers', { apiVersion: 'storage.k8s.io/v1', kind: 'CSIDriver', ...csiDriver('nfs.example.com', false) });
    await cp.must('POST', '/apis/storage.k8s.io/v1/csinodes', { apiVersion: 'storage.k8s.io/v1', kind: 'CSINode', ...csiNode('worker-1', ['attach.example.com']) });
    await ensureNamespace(cp, 'apps');
    await ensureServiceAccount(cp, 'apps', 'default');
    await createBoundPod(cp, 'apps', 'web-1', 'worker-1');
    await createReadyNode(cp, 'worker-2');
    await createBoundPod(cp, 'apps', 'elsewhere', 'worker-2');
    const state = new WorkloadState({ nodeName: 'worker-1' });
    const run = runAgent(kubeconfig, () => seedReport(), { ...REAL, stopAfterScans: 2, workload: state });
    assert.equal(await run.result, 0, run.logs.join('\n'));
    const snapshot = state.snapshot();
    assert.deepEqual(snapshot.unsynced, {});
    assert.deepEqual(snapshot.csiDrivers, { 'attach.example.com': { attachRequired: true }, 'nfs.example.com': { attachRequired: false } });
    assert.deepEqual(snapshot.csiNodeDrivers, ['attach.example.com']);
    assert.equal(snapshot.trackedPods, 2, 'the agent pod and web-1 on worker-1, not the pod on worker-2');
  });

  test('a Node watch the RBAC forbids (LIST and PATCH allowed): the PATCH answer is the newest Node, so it writes once', async () => {
    await ensureServiceAccount(cp, 'node-tuning-advisor', 'blind');
    const role = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'blind' }, rules: [
      { apiGroups: [''], resources: ['nodes'], verbs: ['list', 'patch'] },
      { apiGroups: [''], resources: ['events'], verbs: ['create'] },
      { apiGroups: [''], resources: ['pods'], verbs: ['list', 'watch'] },
      { apiGroups: ['storage.k8s.io'], resources: ['csidrivers', 'csinodes'], verbs: ['list', 'watch'] },
    ] };
    await cp.must('POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', role);
    await cp.must('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
      apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'blind' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'blind' },
      subjects: [{ kind: 'ServiceAccount', name: 'blind', namespace: 'node-tuning-advisor' }],
    });
    // The shipped policies hold it too (a binding each, its paramRef naming it), or the agent would not start.
    for (const policy of ['own-node-annotations', 'own-node-events', 'own-heartbeat']) {
      await cp.must('POST', '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings', {
        apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingAdmissionPolicyBinding', metadata: { name: `blind-${policy}` },
        spec: { policyName: `node-tuning-advisor-${policy}`, paramRef: { name: 'blind', namespace: 'node-tuning-advisor', parameterNotFoundAction: 'Allow' }, validationActions: ['Deny'] },
      });
    }
    await createReadyNode(cp, 'worker-3');
    const pod = await createBoundPod(cp, 'node-tuning-advisor', 'agent-blind', 'worker-3', 'blind');
    const token = await podBoundToken(cp, 'node-tuning-advisor', 'blind', pod);
    const blind = await cp.writeKubeconfig(path.join(dir, 'blind.kubeconfig'), 'blind', token);
    // RBAC changes take a moment to reach the authorizer: wait until the LIST is allowed.
    for (let i = 0; i < 50 && (await cp.request('GET', '/api/v1/nodes', undefined, { token })).status !== 200; i++) await new Promise((r) => setTimeout(r, 100));
    const metrics = createAgentMetrics('test');
    // Production backoff: the next LIST is a minute away, so the watch's copy of the Node stays old.
    const run = runAgent(blind, () => seedReport(), { ...REAL, nodeName: 'worker-3', metrics, stopAfterScans: 8, agent: { ...REAL.agent, backoff: { baseMs: 60_000, capMs: 60_000 } } });
    assert.equal(await run.result, 0, run.logs.join('\n'));
    const requests = await byAgent(0, BLIND_USER);
    assert.ok(requests.some((r) => r.verb === 'watch' && resourceOf(r) === 'nodes' && r.code === 403), describeRequests(requests));
    assert.deepEqual(summary(requests.filter(isWrite)), ['patch nodes/worker-3 200', 'create events 201', 'create events 201', 'create events 201']);
    assert.match(await metrics.registry.metrics(), /^node_tuning_advisor_watch_errors_total\{watch="node",reason="forbidden"\} 1$/m);
  });
});
