// The Helm chart installed by the real Helm 4 (`helm install -n NS --create-namespace`, server-side
// apply, Helm's release record) into a namespace of its own (not node-tuning-advisor) on a real v1.36
// control plane, then upgraded and uninstalled. The agent's ServiceAccount of THAT namespace, with the token a
// DaemonSet pod on node A gets, publishes through the agent's real Publisher: the RBAC subjects and
// the ValidatingAdmissionPolicies' service-account identity must name the release namespace, or the
// server refuses (RBAC) or lets through (policy) what it should not. Node B stays closed to it.
// The release sets the operator values (nodeSelector, tolerations as --set-json, priority class, pull
// secrets, pod annotations, one as --set-string, extra flags, rule overrides): kube-controller-manager's
// DaemonSet controller makes pods on exactly the nodes they select, and the server's admission
// resolves the priority class. `helm upgrade` changes the DaemonSet in place (revision 2); `helm
// uninstall` removes every object the release made, cluster-scoped ones included.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { agentClient, agentWrites } from '../../src/agent/api.ts';
import { Publisher } from '../../src/agent/publisher.ts';
import type { NodeObject } from '../../src/kube/objects.ts';
import { eventObject } from '../../src/publish/events.ts';
import { REASON_RECOMMENDATION } from '../../src/wire/events.ts';
import { ControlPlane, realServerTier, type KubeResponse } from '../helpers/control-plane.ts';
import { CHART, helm, helmTier, valueFlags, type HelmResult, type RenderOptions } from '../helpers/helm.ts';
import { createReadyNode, waitForAdmission } from '../helpers/kube-objects.ts';
import { finding, report } from '../helpers/reports.ts';
import { AGENT_NAMESPACE, AGENT_SA, PREFIX, agentIdentity, nodeEvents, ownAnnotations, type AgentIdentity } from '../helpers/shipped.ts';

const A = 'helm-a';
const B = 'helm-b';
/** Selected (pool=advisor) and tainted with what the release tolerates. */
const SELECTED = 'helm-pool-tolerated';
/** Selected, but tainted with what the release does not tolerate. */
const UNTOLERATED = 'helm-pool-untolerated';
const RELEASE_VALUES: RenderOptions = {
  set: [
    'distribution=kubeadm',
    'nodeSelector.pool=advisor',
    'priorityClassName=system-node-critical',
    'imagePullSecrets[0].name=regcred',
    'podAnnotations.team=platform',
    'agent.extraArgs={--kubelet-insecure-tls}',
    'ruleOverrides[0].id=image-pull-serialized,ruleOverrides[0].disabled=true',
  ],
  // --set would make 42 a number, which the schema refuses for an annotation
  setString: ['podAnnotations.revision=42'],
  setJson: ['tolerations=[{"key":"dedicated","operator":"Equal","value":"ci","effect":"NoSchedule"}]'],
};
const RELEASE = 'nta';
const MERGE = 'application/merge-patch+json';

describe('the Helm chart in its own release namespace on a real control plane', { skip: realServerTier().skip ?? helmTier().skip }, () => {
  const namespace = `nta-release-${randomBytes(4).toString('hex')}`;
  let cp: ControlPlane;
  let tmp: string;
  let agent: AgentIdentity;
  let installed: HelmResult;

  before(async () => {
    tmp = await mkdtemp(path.join(tmpdir(), 'nta-helm-'));
    cp = await ControlPlane.start({ controllerManager: true });
    installed = await helm(['install', RELEASE, CHART, '-n', namespace, '--create-namespace', ...valueFlags(RELEASE_VALUES)], cp);
    assert.equal(installed.code, 0, installed.stderr);
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

  test('helm install: deployed, every object in the release namespace (the Events Role in default), none in node-tuning-advisor', async () => {
    assert.match(installed.stdout, new RegExp(`^NAME: ${RELEASE}\nLAST DEPLOYED: .+\nNAMESPACE: ${namespace}\nSTATUS: deployed\nREVISION: 1\n`, 'm'), installed.stdout);
    assert.match(installed.stdout, new RegExp(`kubectl -n ${namespace} rollout status ds/node-tuning-advisor`), 'NOTES.txt');
    const listed = await helm(['list', '-n', namespace, '-o', 'json'], cp);
    assert.deepEqual(JSON.parse(listed.stdout).map((r: { name: string; status: string }) => [r.name, r.status]), [[RELEASE, 'deployed']]);
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
    assert.equal(pod!.metadata.annotations.revision, '42', '--set-string');
    assert.deepEqual(pod!.spec.tolerations.filter((t: { key?: string }) => t.key === 'dedicated'), [{ key: 'dedicated', operator: 'Equal', value: 'ci', effect: 'NoSchedule' }], '--set-json');
    assert.equal(pod!.spec.containers[0].args.at(-1), '--kubelet-insecure-tls');
    const overrides = await cp.must('GET', `/api/v1/namespaces/${namespace}/configmaps/node-tuning-advisor-overrides`);
    assert.match(overrides.data['helm-values.yaml'], /kind: RuleOverrides[\s\S]*id: image-pull-serialized/);
  });

  test('helm upgrade --reuse-values: revision 2 changes the DaemonSet in place; the release keeps its objects', async () => {
    const before = await cp.must('GET', `/apis/apps/v1/namespaces/${namespace}/daemonsets/node-tuning-advisor`);
    const upgraded = await helm(['upgrade', RELEASE, CHART, '-n', namespace, '--reuse-values', '--set', 'agent.interval=90s', '--set', 'dashboards.enabled=true'], cp);
    assert.equal(upgraded.code, 0, upgraded.stderr);
    assert.match(upgraded.stdout, /^STATUS: deployed\nREVISION: 2$/m, upgraded.stdout);
    const ds = await cp.must('GET', `/apis/apps/v1/namespaces/${namespace}/daemonsets/node-tuning-advisor`);
    assert.equal(ds.metadata.uid, before.metadata.uid, 'the same DaemonSet, changed');
    assert.equal(ds.metadata.generation, before.metadata.generation + 1);
    const args: string[] = ds.spec.template.spec.containers[0].args;
    assert.ok(args.includes('--interval=90s') && !args.includes('--interval=5m'), args.join(' '));
    assert.ok(args.includes('--kubelet-insecure-tls'), '--reuse-values kept the install\'s values');
    const dashboard = await cp.must('GET', `/api/v1/namespaces/${namespace}/configmaps/node-tuning-advisor-dashboard`);
    assert.equal(dashboard.metadata.labels.grafana_dashboard, '1');
    const history = await helm(['history', RELEASE, '-n', namespace, '-o', 'json'], cp);
    assert.deepEqual(JSON.parse(history.stdout).map((r: { revision: number; status: string }) => [r.revision, r.status]), [[1, 'superseded'], [2, 'deployed']]);
  });

  test('helm uninstall: every object of the release is gone, cluster-scoped ones included', async () => {
    // --no-hooks: the pre-delete cleanup Job's pod would need a kubelet (test/e2e/helm-uninstall.test.ts plays it).
    const hooks = await helm(['get', 'hooks', RELEASE, '-n', namespace], cp);
    assert.match(hooks.stdout, /^    helm\.sh\/hook: pre-delete$/m, 'the release carries its cleanup hook');
    const uninstalled = await helm(['uninstall', RELEASE, '-n', namespace, '--wait', '--no-hooks'], cp);
    assert.equal(uninstalled.code, 0, uninstalled.stderr);
    assert.match(uninstalled.stdout, new RegExp(`release "${RELEASE}" uninstalled`));
    for (const url of [
      `/apis/apps/v1/namespaces/${namespace}/daemonsets/node-tuning-advisor`,
      `/api/v1/namespaces/${namespace}/configmaps/node-tuning-advisor-dashboard`,
      `/api/v1/namespaces/${namespace}/configmaps/node-tuning-advisor-overrides`,
      '/apis/rbac.authorization.k8s.io/v1/clusterroles/node-tuning-advisor',
      '/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings/node-tuning-advisor-events',
      '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies/node-tuning-advisor-own-node-annotations',
    ]) {
      assert.equal((await cp.request('GET', url)).status, 404, url);
    }
    const listed = await helm(['list', '-n', namespace, '-o', 'json'], cp);
    assert.deepEqual(JSON.parse(listed.stdout), [], 'no release left');
  });
});
