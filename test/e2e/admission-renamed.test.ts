// Issue 37 item 1: the admission policies follow the agent's ServiceAccount wherever kustomize or
// Helm renames it, and the agent does not start while no policy holds its token. A standard kustomize
// overlay (namePrefix, nameSuffix; namespace) applied with the real kubectl 1.35 renamed the
// ServiceAccount but not the user name the policies spelled out: they matched nobody, the agent ran
// on without a word, and one node's token tainted another node NoExecute, gave it the control-plane
// role label and silenced it. Now the bindings name the ServiceAccount in spec.paramRef, which
// kustomize renames with it; and the agent proves at start, by a dry run of a write each policy must
// refuse, that they hold it. The chart installed with the real Helm 4 under another release name and
// namespace is held too.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { AgentProcess, buildApp } from '../helpers/bundled-agent.ts';
import { ControlPlane, realServerTier, type KubeResponse } from '../helpers/control-plane.ts';
import { CHART } from '../helpers/helm.ts';
import { createReadyNode } from '../helpers/kube-objects.ts';
import { REPO } from '../helpers/manifests.ts';
import { layerTool, layerToolTier } from '../helpers/real-tools.ts';
import { AGENT_FIELD_MANAGER, agentIdentity, applyKustomization, daemonSetRun, type AgentIdentity } from '../helpers/shipped.ts';

const A = 'renamed-a';
const B = 'renamed-b';
const MERGE = 'application/merge-patch+json';
/** What a customised install looks like: every name prefixed and suffixed. */
const OVERLAY = { namePrefix: 'acme-', nameSuffix: '-x', namespace: 'node-tuning-advisor' };
const RENAMED_SA = `${OVERLAY.namePrefix}node-tuning-advisor${OVERLAY.nameSuffix}`;
/** And one that moves it to another namespace too (its cluster-scoped names prefixed apart from the first's). */
const MOVED = { namePrefix: 'moved-', nameSuffix: '', namespace: 'moved-system' };
const HELM_RELEASE = 'tuning';
const HELM_NAMESPACE = 'tuning-system';
const HOST = path.join(REPO, 'test/fixtures/hosts/seed-000-before');
/** Not installed here: the Prometheus Operator's kinds. */
const NO_CRD = ['ServiceMonitor', 'PrometheusRule'];

describe('the admission policies follow a renamed ServiceAccount (real kubectl 1.35 and Helm 4)', { skip: realServerTier().skip ?? layerToolTier().skip }, () => {
  let cp: ControlPlane;
  let tmp: string;
  let bundle: string;
  let overlay: string;
  let renamed: AgentIdentity;

  /** An operator's overlay of the shipped kustomization (kustomize refuses an absolute path to it). */
  async function writeOverlay(name: string, names: typeof OVERLAY, withNamespace: boolean): Promise<string> {
    const dir = path.join(tmp, name);
    await mkdir(dir, { recursive: true });
    await writeFile(path.join(dir, 'kustomization.yaml'), [
      'apiVersion: kustomize.config.k8s.io/v1beta1', 'kind: Kustomization',
      `resources: [${path.relative(dir, path.join(REPO, 'manifests'))}]`,
      `namePrefix: ${names.namePrefix}`, ...(names.nameSuffix ? [`nameSuffix: ${names.nameSuffix}`] : []), ...(withNamespace ? [`namespace: ${names.namespace}`] : []), '',
    ].join('\n'));
    return dir;
  }

  /** Until a dry run of a label on another Node with `token` is refused (new policies take a moment to load); a hang guard. */
  async function policyInEffect(token: string, node: string): Promise<void> {
    const dryRun = () => cp.request('PATCH', `/api/v1/nodes/${node}?dryRun=All&fieldManager=${AGENT_FIELD_MANAGER}`, { metadata: { labels: { 'node-role.kubernetes.io/control-plane': '' } } }, { token, contentType: MERGE });
    const deadline = Date.now() + 30_000;
    while ((await dryRun()).status !== 422) {
      assert.ok(Date.now() < deadline, `no policy refused the token a label on ${node} within 30 s: they match nobody`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  before(async () => {
    tmp = await mkdtemp(path.join(tmpdir(), 'nta-renamed-'));
    [cp, bundle] = await Promise.all([ControlPlane.start(), buildApp(path.join(tmp, 'app'))]);
    overlay = await writeOverlay('overlay', OVERLAY, false);
    const applied = await applyKustomization(cp, overlay, NO_CRD);
    assert.equal(applied.code, 0, applied.stderr);
    for (const node of [A, B]) await createReadyNode(cp, node);
    renamed = await agentIdentity(cp, A, tmp, `agent-${A}`, OVERLAY.namespace, RENAMED_SA);
  });
  after(async () => {
    await cp?.stop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  const patchAs = (token: string, node: string, body: unknown): Promise<KubeResponse> =>
    cp.request('PATCH', `/api/v1/nodes/${node}?fieldManager=${AGENT_FIELD_MANAGER}`, body, { token, contentType: MERGE });

  /** The attack with node A's token: B tainted NoExecute, labelled control-plane, its findings silenced. */
  async function attackOtherNode(token: string): Promise<KubeResponse[]> {
    return [
      await cp.request('PATCH', `/api/v1/nodes/${B}?fieldManager=${AGENT_FIELD_MANAGER}`,
        { spec: { taints: [{ key: 'evict', value: 'all', effect: 'NoExecute' }] } }, { token, contentType: MERGE }),
      await patchAs(token, B, { metadata: { labels: { 'node-role.kubernetes.io/control-plane': '' } } }),
      await patchAs(token, B, { metadata: { annotations: { 'node-tuning-advisor.io/silence': '*' } } }),
    ];
  }

  test('kustomize namePrefix and nameSuffix: the policies refuse the renamed ServiceAccount\'s token another Node; the bindings name it', async () => {
    await policyInEffect(renamed.token, B);
    for (const res of await attackOtherNode(renamed.token)) {
      assert.equal(res.status, 422, JSON.stringify(res.body).slice(0, 400));
      assert.match(res.body.message, /ValidatingAdmissionPolicy 'acme-node-tuning-advisor-own-node-annotations-x'.*may change only its own Node \(renamed-a\), not renamed-b/);
    }
    const node = await cp.must('GET', `/api/v1/nodes/${B}`);
    assert.deepEqual([node.spec.taints ?? [], node.metadata.labels['node-role.kubernetes.io/control-plane']], [[], undefined], 'node B untouched');
    const bindings = (await cp.must('GET', '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings')).items as any[];
    const ours = bindings.filter((b) => b.metadata.name.startsWith(OVERLAY.namePrefix));
    assert.equal(ours.length, 3, 'the Node, Event and heartbeat policies');
    for (const binding of ours) assert.deepEqual({ name: binding.spec.paramRef?.name, namespace: binding.spec.paramRef?.namespace }, { name: RENAMED_SA, namespace: OVERLAY.namespace }, binding.metadata.name);
  });

  test('kustomize namespace: the bindings follow the ServiceAccount into the overlay\'s namespace, and hold its token', async () => {
    const moved = await writeOverlay('moved', MOVED, true);
    const applied = await applyKustomization(cp, moved, NO_CRD);
    assert.equal(applied.code, 0, applied.stderr);
    const account = `${MOVED.namePrefix}node-tuning-advisor`;
    for (const binding of applied.objects.filter((o) => o.kind === 'ValidatingAdmissionPolicyBinding')) {
      assert.deepEqual({ name: binding.spec.paramRef?.name, namespace: binding.spec.paramRef?.namespace }, { name: account, namespace: MOVED.namespace }, binding.metadata.name);
    }
    const identity = await agentIdentity(cp, B, tmp, `agent-moved-${B}`, MOVED.namespace, account);
    await policyInEffect(identity.token, A);
    const taint = await cp.request('PATCH', `/api/v1/nodes/${A}?fieldManager=${AGENT_FIELD_MANAGER}`, { spec: { taints: [{ key: 'evict', value: 'all', effect: 'NoExecute' }] } }, { token: identity.token, contentType: MERGE });
    assert.equal(taint.status, 422, JSON.stringify(taint.body).slice(0, 400));
    assert.match(taint.body.message, /ValidatingAdmissionPolicy 'moved-node-tuning-advisor-own-node-annotations'.*may change only its own Node \(renamed-b\), not renamed-a/);
  });

  test('the agent of the renamed DaemonSet proves at start that each policy holds it, then publishes', async () => {
    const run = await daemonSetRun(cp, RENAMED_SA, { node: A, hostRoot: HOST, rulesDir: path.join(tmp, 'rules-renamed'), kubeconfig: renamed.kubeconfig, namespace: OVERLAY.namespace });
    const agent = AgentProcess.start(bundle, [...run.args, '--once', '--probe-interval=off'], run.env);
    assert.equal(await agent.wait(), 0, agent.log);
    for (const [what, policy] of [['a foreign label on its own Node renamed-a', 'own-node-annotations'], ['an Event about another Node', 'own-node-events'], ['a heartbeat Lease named after another node', 'own-heartbeat']]) {
      assert.match(agent.log, new RegExp(`admission: ${what}.* refused by ValidatingAdmissionPolicy acme-node-tuning-advisor-${policy}-x`), agent.log);
    }
  });

  test('no policy holds the token (the bindings gone): the agent does not start, and says why and what to do', async () => {
    const removed: any[] = [];
    for (const policy of ['own-node-annotations', 'own-node-events', 'own-heartbeat']) {
      const name = `${OVERLAY.namePrefix}node-tuning-advisor-${policy}${OVERLAY.nameSuffix}`;
      removed.push(await cp.must('GET', `/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings/${name}`));
      await cp.must('DELETE', `/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings/${name}`);
    }
    try {
      // The server's admission takes a moment to drop the bindings: until then the dry run is still refused.
      const user = `system:serviceaccount:${OVERLAY.namespace}:${RENAMED_SA}`;
      const dryRun = () => cp.request('PATCH', `/api/v1/nodes/${B}?dryRun=All&fieldManager=${AGENT_FIELD_MANAGER}`, { metadata: { labels: { probe: 'x' } } }, { token: renamed.token, contentType: MERGE });
      for (let i = 0; i < 100 && (await dryRun()).status !== 200; i++) await new Promise((r) => setTimeout(r, 100));
      const run = await daemonSetRun(cp, RENAMED_SA, { node: A, hostRoot: HOST, rulesDir: path.join(tmp, 'rules-unheld'), kubeconfig: renamed.kubeconfig, namespace: OVERLAY.namespace });
      const agent = AgentProcess.start(bundle, [...run.args, '--once', '--probe-interval=off'], run.env);
      assert.equal(await agent.wait(), 2, agent.log);
      assert.match(agent.log, new RegExp(`not starting: no admission policy holds ${user}: a dry run of a foreign label on its own Node renamed-a was accepted, so its token could label, taint or annotate any Node`));
      assert.match(agent.log, /point each binding's spec\.paramRef at this ServiceAccount/);
      assert.doesNotMatch(agent.log, /publish: PATCH yes/, 'nothing published');
    } finally {
      for (const binding of removed) {
        const { metadata: { name, labels }, spec } = binding;
        await cp.must('POST', '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings', { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingAdmissionPolicyBinding', metadata: { name, labels }, spec });
      }
    }
  });

  test('Helm 4: the chart installed as release "tuning" in namespace tuning-system holds its agent as well', async () => {
    const helm = await layerTool('helm');
    const home = path.join(tmp, 'helm');
    const installed = await promisify(execFile)(helm, ['install', HELM_RELEASE, CHART, '-n', HELM_NAMESPACE, '--create-namespace', '--no-hooks', '--kubeconfig', cp.kubeconfig], {
      env: { ...process.env, HELM_CACHE_HOME: path.join(home, 'cache'), HELM_CONFIG_HOME: path.join(home, 'config'), HELM_DATA_HOME: path.join(home, 'data') },
    }).then(() => '', (e: { stderr: string }) => e.stderr);
    assert.equal(installed, '', installed);
    const identity = await agentIdentity(cp, B, tmp, `agent-${B}`, HELM_NAMESPACE);
    await policyInEffect(identity.token, A);
    const attempts = await attackOtherNodeFrom(identity.token, A);
    for (const res of attempts) assert.equal(res.status, 422, JSON.stringify(res.body).slice(0, 400));
    const run = await daemonSetRun(cp, 'node-tuning-advisor', { node: B, hostRoot: HOST, rulesDir: path.join(tmp, 'rules-helm'), kubeconfig: identity.kubeconfig, namespace: HELM_NAMESPACE });
    const agent = AgentProcess.start(bundle, [...run.args, '--once', '--probe-interval=off'], run.env);
    assert.equal(await agent.wait(), 0, agent.log);
    assert.match(agent.log, /admission: a foreign label on its own Node renamed-b refused by ValidatingAdmissionPolicy node-tuning-advisor-own-node-annotations/);
  });

  /** Node B's agent against node A: a taint and a role label. */
  async function attackOtherNodeFrom(token: string, target: string): Promise<KubeResponse[]> {
    return [
      await cp.request('PATCH', `/api/v1/nodes/${target}?fieldManager=${AGENT_FIELD_MANAGER}`, { spec: { taints: [{ key: 'evict', value: 'all', effect: 'NoExecute' }] } }, { token, contentType: MERGE }),
      await patchAs(token, target, { metadata: { labels: { 'node-role.kubernetes.io/control-plane': '' } } }),
    ];
  }
});
