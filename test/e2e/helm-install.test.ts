// The Helm chart installed into a namespace of its own (not node-tuning-advisor) on a real v1.36
// control plane: rendered by Helm's engine pieces (test/helm/render.go) with that release namespace,
// applied with the real kubectl into a namespace created first (as `helm install -n NS
// --create-namespace` does). Then the agent's ServiceAccount of THAT namespace, with the token a
// DaemonSet pod on node A gets, publishes through the agent's real Publisher: the RBAC subjects and
// the ValidatingAdmissionPolicies' service-account identity must name the release namespace, or the
// server refuses (RBAC) or lets through (policy) what it should not. Node B stays closed to it.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { agentClient, agentWrites } from '../../src/agent/api.ts';
import { Publisher } from '../../src/agent/publisher.ts';
import type { NodeObject } from '../../src/kube/objects.ts';
import { eventObject } from '../../src/publish/events.ts';
import { REASON_RECOMMENDATION } from '../../src/wire/events.ts';
import { ControlPlane, realServerTier, type KubeResponse } from '../helpers/control-plane.ts';
import { helmRenderer, helmTier } from '../helpers/helm.ts';
import { createReadyNode, ensureNamespace, waitForAdmission } from '../helpers/kube-objects.ts';
import { finding, report } from '../helpers/reports.ts';
import { AGENT_NAMESPACE, AGENT_SA, PREFIX, agentIdentity, nodeEvents, ownAnnotations, type AgentIdentity } from '../helpers/shipped.ts';

const A = 'helm-a';
const B = 'helm-b';
const MERGE = 'application/merge-patch+json';

describe('the Helm chart in its own release namespace on a real control plane', { skip: realServerTier().skip ?? helmTier().skip }, () => {
  const namespace = `nta-release-${randomBytes(4).toString('hex')}`;
  let cp: ControlPlane;
  let tmp: string;
  let agent: AgentIdentity;
  let applied: { code: number; stdout: string; stderr: string };

  before(async () => {
    const render = (await helmRenderer())!;
    tmp = await mkdtemp(path.join(tmpdir(), 'nta-helm-'));
    const [rendered, started] = await Promise.all([render({ namespace, set: ['distribution=kubeadm'] }), ControlPlane.start()]);
    cp = started;
    await ensureNamespace(cp, namespace);
    applied = await cp.kubectl(['apply', '-f', '-'], { input: rendered.objects.map((o) => stringify(o)).join('---\n') });
    assert.equal(applied.code, 0, applied.stderr);
    for (const name of [A, B]) await createReadyNode(cp, name);
    agent = await agentIdentity(cp, A, tmp, `agent-${A}`, namespace);
  });
  after(async () => {
    await cp?.stop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  function annotate(node: string, token: string, dryRun = false): Promise<KubeResponse> {
    return cp.request('PATCH', `/api/v1/nodes/${node}?fieldManager=node-tuning-advisor${dryRun ? '&dryRun=All' : ''}`,
      { metadata: { annotations: { [`${PREFIX}summary`]: 'x' } } }, { token, contentType: MERGE });
  }

  test('kubectl apply of the render: every object in the release namespace (the Events Role in default), none in node-tuning-advisor', async () => {
    assert.match(applied.stdout, /daemonset\.apps\/node-tuning-advisor created/);
    assert.match(applied.stdout, /validatingadmissionpolicy\.admissionregistration\.k8s\.io\/node-tuning-advisor-own-node-annotations created/);
    const ds = await cp.must('GET', `/apis/apps/v1/namespaces/${namespace}/daemonsets/node-tuning-advisor`);
    assert.ok(ds.spec.template.spec.volumes.some((v: { name: string }) => v.name === 'host-kubelet-config'), 'distribution=kubeadm mounts');
    assert.equal((await cp.request('GET', `/api/v1/namespaces/${AGENT_NAMESPACE}`)).status, 404, 'the base namespace is not created');
    const binding = await cp.must('GET', '/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings/node-tuning-advisor-events');
    assert.deepEqual(binding.subjects, [{ kind: 'ServiceAccount', name: AGENT_SA, namespace }]);
  });

  test("the release namespace's agent patches its own Node's annotations and creates its Events (the real Publisher)", async () => {
    const publisher = new Publisher(agentWrites(agentClient({ kubeconfig: agent.kubeconfig })), () => {});
    const node = (await cp.must('GET', `/api/v1/nodes/${A}`)) as NodeObject;
    const failing = report([finding('kernel-tick-rate', 'fail', { severity: 'critical' }), finding('cpu-governor', 'fail')], { node: A });
    assert.deepEqual(await publisher.publish(failing, node), { patched: true, events: 2 });
    assert.match((await ownAnnotations(cp, A))[`${PREFIX}summary`] ?? '', /^\d+\/100 [A-F]\b/);
    const events = await nodeEvents(cp, A);
    assert.deepEqual(events.map((e) => e.reason), [REASON_RECOMMENDATION, REASON_RECOMMENDATION]);
    assert.ok(events.every((e) => e.metadata.namespace === 'default'));
  });

  test('another Node is refused by the policy, for annotations and for Events', async () => {
    // The policies are enforced a moment after they are applied: wait until a write to B is refused.
    // Never refused = the policy does not match this namespace's service account (RBAC alone lets it patch any Node).
    await waitForAdmission(async () => (await annotate(B, agent.token, true)).status, 422, 30_000).catch((e) => {
      assert.fail(`the policy never refused ${B} to system:serviceaccount:${namespace}:${AGENT_SA}: does it name that identity? (${e.message})`);
    });
    const patched = await annotate(B, agent.token);
    assert.equal(patched.status, 422, JSON.stringify(patched.body));
    assert.match(patched.body.message, /ValidatingAdmissionPolicy 'node-tuning-advisor-own-node-annotations'.*the advisor may change only its own Node \(helm-a\), not helm-b/);
    const e = eventObject({ reason: REASON_RECOMMENDATION, type: 'Warning', ruleId: 'kernel-tick-rate', message: 'WARN kernel-tick-rate: 250 Hz' },
      { name: B, uid: 'uid-of-helm-b' }, new Date(), `${Date.now().toString(16)}0123456789abcdef`);
    const posted = await cp.request('POST', '/api/v1/namespaces/default/events', e, { token: agent.token });
    assert.equal(posted.status, 422, JSON.stringify(posted.body));
    assert.match(posted.body.message, /node-tuning-advisor-own-node-events.*may report only on its own Node \(helm-a\)/);
    assert.deepEqual(await ownAnnotations(cp, B), {});
  });
});
