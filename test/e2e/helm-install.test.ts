// The Helm chart installed into a namespace of its own (not node-tuning-advisor) on a real v1.36
// control plane: rendered by Helm's engine pieces (test/helm/render.go) with that release namespace,
// applied with the real kubectl into a namespace created first (as `helm install -n NS
// --create-namespace` does). Then the agent's ServiceAccount of THAT namespace, with the token a
// DaemonSet pod on node A gets, publishes through the agent's real Publisher: the RBAC subjects and
// the ValidatingAdmissionPolicies' service-account identity must name the release namespace, or the
// server refuses (RBAC) or lets through (policy) what it should not. Node B stays closed to it.
// The release sets the operator values (nodeSelector, tolerations, priority class, pull secrets, pod
// annotations, extra flags, rule overrides): kube-controller-manager's DaemonSet controller makes pods
// on exactly the nodes they select, and the server's admission resolves the priority class.
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
/** Selected (pool=advisor) and tainted with what the release tolerates. */
const SELECTED = 'helm-pool-tolerated';
/** Selected, but tainted with what the release does not tolerate. */
const UNTOLERATED = 'helm-pool-untolerated';
const RELEASE_VALUES = [
  'distribution=kubeadm',
  'nodeSelector.pool=advisor',
  'tolerations[0].key=dedicated,tolerations[0].operator=Equal,tolerations[0].value=ci,tolerations[0].effect=NoSchedule',
  'priorityClassName=system-node-critical',
  'imagePullSecrets[0].name=regcred',
  'podAnnotations.team=platform',
  'agent.extraArgs={--kubelet-insecure-tls}',
  'ruleOverrides[0].id=image-pull-serialized,ruleOverrides[0].disabled=true',
];
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
    const [rendered, started] = await Promise.all([render({ namespace, set: RELEASE_VALUES }), ControlPlane.start({ controllerManager: true })]);
    cp = started;
    await ensureNamespace(cp, namespace);
    // As helm install does: its hooks (the uninstall's pre-delete Job) are not created at install.
    const installed = rendered.objects.filter((o) => (o.metadata as { annotations?: Record<string, string> }).annotations?.['helm.sh/hook'] === undefined);
    applied = await cp.kubectl(['apply', '-f', '-'], { input: installed.map((o) => stringify(o)).join('---\n') });
    assert.equal(applied.code, 0, applied.stderr);
    for (const name of [A, B]) await createReadyNode(cp, name);
    // Tainted from their first moment: the DaemonSet exists already, and a NoSchedule taint added later evicts nothing.
    for (const [name, taint] of [[SELECTED, 'dedicated'], [UNTOLERATED, 'reserved']] as const) {
      await createReadyNode(cp, name, { labels: { 'kubernetes.io/os': 'linux', pool: 'advisor' }, taints: [{ key: taint, value: 'ci', effect: 'NoSchedule' }] });
    }
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

  test('the operator values on the real server: the DaemonSet controller makes one pod, on the selected node that it tolerates', async () => {
    // A, B: not in the pool; UNTOLERATED: in the pool, a taint the release does not tolerate.
    // Until the controller has acted on this generation and made every pod it counts (a 60 s hang guard).
    const guard = Date.now() + 60_000;
    let ds: any;
    let pods: { spec: any; metadata: any }[] = [];
    for (;;) {
      ds = await cp.must('GET', `/apis/apps/v1/namespaces/${namespace}/daemonsets/node-tuning-advisor`);
      pods = (await cp.must('GET', `/api/v1/namespaces/${namespace}/pods?labelSelector=app.kubernetes.io%2Fname%3Dnode-tuning-advisor`)).items;
      const settled = ds.status?.observedGeneration === ds.metadata.generation && ds.status.currentNumberScheduled === ds.status.desiredNumberScheduled;
      if ((settled && pods.length === ds.status.desiredNumberScheduled && pods.length > 0) || Date.now() > guard) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    assert.equal(ds.status.desiredNumberScheduled, 1, JSON.stringify(ds.status));
    const targets = pods.map((p) => p.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchFields[0].values.join());
    assert.equal(pods.length, 1, `pods for ${targets.join(', ')}`);
    const [pod] = pods;
    assert.deepEqual(targets, [SELECTED]);
    assert.equal(pod!.spec.priorityClassName, 'system-node-critical');
    assert.equal(pod!.spec.priority, 2000001000, 'admission resolved the class');
    assert.deepEqual(pod!.spec.imagePullSecrets, [{ name: 'regcred' }]);
    assert.equal(pod!.metadata.annotations.team, 'platform');
    assert.equal(pod!.spec.containers[0].args.at(-1), '--kubelet-insecure-tls');
    const overrides = await cp.must('GET', `/api/v1/namespaces/${namespace}/configmaps/node-tuning-advisor-overrides`);
    assert.match(overrides.data['helm-values.yaml'], /kind: RuleOverrides[\s\S]*id: image-pull-serialized/);
  });
});
