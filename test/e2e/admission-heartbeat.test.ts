// The heartbeat Lease on a real kube-apiserver with the shipped base (kubectl apply): the agent's own
// Heartbeat (src/agent/heartbeat.ts) with the token a DaemonSet pod on node A gets creates and renews
// the Lease named after A in the agent's namespace; the server refuses it every other Lease: node
// B's, one in kube-node-lease (the kubelets' node Leases) or kube-system, a Lease that is not a
// heartbeat, one shaped otherwise (labels, owners, holder, duration, managedFields), a delete.
// Then the uninstall's cleanup identity as the chart renders it (the real `helm template`): its
// policy lets it remove our keys and heartbeats and nothing else; `cleanup` run as that identity
// passes it and leaves no key of ours, and the agent's policy still refuses it another node's
// heartbeat and keys.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { parseAllDocuments } from 'yaml';
import { agentClient, leaseWrites } from '../../src/agent/api.ts';
import { Heartbeat } from '../../src/agent/heartbeat.ts';
import { HEARTBEAT_LABEL, heartbeatLease, heartbeatSpec } from '../../src/wire/heartbeat.ts';
import { ControlPlane, realServerTier, type KubeResponse } from '../helpers/control-plane.ts';
import { runCli } from '../helpers/cli.ts';
import { createReadyNode, waitForAdmission } from '../helpers/kube-objects.ts';
import { BASE, REPO, type K8sObject } from '../helpers/manifests.ts';
import { layerTool, layerToolTier } from '../helpers/real-tools.ts';
import { AGENT_NAMESPACE, PREFIX, agentIdentity, applyKustomization, type AgentIdentity } from '../helpers/shipped.ts';

const A = 'heartbeat-a';
const B = 'heartbeat-b';
const MERGE = 'application/merge-patch+json';
const LEASES = (namespace: string) => `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases`;

const CLEANUP_SA = 'node-tuning-advisor-cleanup';
const GRADE = `${PREFIX}grade`;

/** The chart's cleanup identity and policy (templates/cleanup.yaml) for a release in `namespace`, the hook Job left out: `helm template`. */
async function cleanupIdentity(namespace: string): Promise<K8sObject[]> {
  const { stdout } = await promisify(execFile)(await layerTool('helm'), ['template', 'nta', path.join(REPO, 'charts/node-tuning-advisor'), '-n', namespace], { maxBuffer: 16 << 20 });
  return parseAllDocuments(stdout).map((d) => d.toJS() as K8sObject)
    .filter((o) => o && (o.metadata as { labels?: Record<string, string> }).labels?.['app.kubernetes.io/component'] === 'cleanup' && o.kind !== 'Job');
}

describe('the heartbeat Lease and the admission policy on a real kube-apiserver', { skip: realServerTier().skip ?? layerToolTier().skip }, () => {
  let cp: ControlPlane;
  let tmp: string;
  let agent: AgentIdentity;
  let uidA: string;
  let cleanupToken: string;

  before(async () => {
    tmp = await mkdtemp(path.join(tmpdir(), 'nta-heartbeat-policy-'));
    cp = await ControlPlane.start();
    const applied = await applyKustomization(cp, BASE);
    assert.equal(applied.code, 0, applied.stderr);
    for (const name of [A, B]) await createReadyNode(cp, name);
    uidA = (await cp.must('GET', `/api/v1/nodes/${A}`)).metadata.uid;
    agent = await agentIdentity(cp, A, tmp);
    const identity = await cp.kubectl(['apply', '-f', '-'], { input: (await cleanupIdentity(AGENT_NAMESPACE)).map((o) => JSON.stringify(o)).join('\n') });
    assert.equal(identity.code, 0, identity.stderr);
    cleanupToken = (await cp.must('POST', `/api/v1/namespaces/${AGENT_NAMESPACE}/serviceaccounts/${CLEANUP_SA}/token`,
      { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } })).status.token;
    // The policies are enforced a moment after they are applied: until a Lease of B, and a cleanup that adds a key, are refused.
    await waitForAdmission(async () => (await create(lease(B), AGENT_NAMESPACE, true)).status, 422, 30_000);
    await waitForAdmission(async () => (await cp.request('PATCH', `/api/v1/nodes/${B}?dryRun=All`, { metadata: { annotations: { [`${PREFIX}x`]: 'y' } } },
      { token: cleanupToken, contentType: MERGE })).status, 422, 30_000);
  });
  after(async () => {
    await cp?.stop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  /** The Lease as the agent creates it for `node`, changed where a test says so. */
  const lease = (node: string, over: (l: any) => void = () => {}) => {
    const l = heartbeatLease(node, AGENT_NAMESPACE, heartbeatSpec(node, 10_000, Date.now()), node === A ? uidA : undefined) as any;
    over(l);
    return l;
  };
  const create = (body: any, namespace = AGENT_NAMESPACE, dryRun = false, token = agent.token): Promise<KubeResponse> =>
    cp.request('POST', `${LEASES(namespace)}${dryRun ? '?dryRun=All' : ''}`, { ...body, metadata: { ...body.metadata, namespace } }, { token });
  const patchLease = (name: string, body: unknown, namespace = AGENT_NAMESPACE): Promise<KubeResponse> =>
    cp.request('PATCH', `${LEASES(namespace)}/${name}?fieldManager=node-tuning-advisor`, body, { token: agent.token, contentType: MERGE });
  const denied = (res: KubeResponse, code: number, message: RegExp) => {
    assert.equal(res.status, code, JSON.stringify(res.body));
    assert.match(res.body.message, message);
  };
  const asAdmin = (method: string, url: string, body?: unknown) => cp.request(method, url, body, method === 'PATCH' ? { contentType: MERGE } : {});

  test("the agent's Heartbeat creates its Lease (owned by its Node), then renews it with one PATCH each time", async () => {
    const logs: string[] = [];
    let current = true;
    const renewals: number[] = [];
    const heartbeat = new Heartbeat({
      api: leaseWrites(agentClient({ kubeconfig: agent.kubeconfig })), nodeName: A, namespace: AGENT_NAMESPACE, periodMs: 1_000,
      current: () => current, nodeUid: () => uidA, log: (l) => logs.push(l), onRenewed: (at) => renewals.push(at),
    });
    heartbeat.start();
    heartbeat.published();
    const until = async (n: number) => { while (renewals.length < n) await new Promise((r) => setTimeout(r, 50)); };
    await until(3);
    current = false; // a failed publish: no more renewals until the next one
    const held = renewals.length;
    const stored = await cp.must('GET', `${LEASES(AGENT_NAMESPACE)}/${A}`);
    await heartbeat.stop();
    assert.ok(renewals.length <= held + 1, 'a renewal in flight at most');
    assert.deepEqual(stored.spec.holderIdentity, A);
    assert.equal(stored.spec.leaseDurationSeconds, 3);
    assert.equal(Date.parse(stored.spec.renewTime) >= renewals[renewals.length - 2]!, true, 'renewTime is the agent\'s last renewal');
    assert.deepEqual(stored.metadata.labels, { [HEARTBEAT_LABEL]: 'agent' });
    assert.deepEqual(stored.metadata.ownerReferences, [{ apiVersion: 'v1', kind: 'Node', name: A, uid: uidA }]);
    assert.ok(logs.some((l) => /^heartbeat: Lease node-tuning-advisor\/heartbeat-a renewed/.test(l)), logs.join('\n'));
    assert.ok(!logs.some((l) => /failed/.test(l)), logs.join('\n'));
  });

  test('denied: another node\'s Lease, other namespaces, a Lease that is not a heartbeat, a delete', async () => {
    denied(await create(lease(B)), 422, /ValidatingAdmissionPolicy 'node-tuning-advisor-own-heartbeat'.*only the heartbeat Lease of its own Node \(heartbeat-a\), not heartbeat-b/);
    // RBAC: a Role in the agent's namespace only.
    for (const namespace of ['kube-node-lease', 'kube-system', 'default']) {
      denied(await create(lease(A), namespace), 403, new RegExp(`cannot create resource "leases" in API group "coordination.k8s.io" in the namespace "${namespace}"`));
    }
    denied(await patchLease(A, { spec: { renewTime: null } }, 'kube-node-lease'), 403, /cannot patch resource "leases"/);
    denied(await cp.request('DELETE', `${LEASES(AGENT_NAMESPACE)}/${A}`, undefined, { token: agent.token }), 403, /cannot delete resource "leases"/);
    // A Lease named after A that is not a heartbeat (an admin's): the agent may not take it over.
    assert.equal((await asAdmin('DELETE', `${LEASES(AGENT_NAMESPACE)}/${A}`)).status, 200);
    assert.equal((await asAdmin('POST', LEASES(AGENT_NAMESPACE), { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: A }, spec: { holderIdentity: 'someone' } })).status, 201);
    denied(await patchLease(A, { metadata: { labels: { [HEARTBEAT_LABEL]: 'agent' } }, spec: { holderIdentity: A, leaseDurationSeconds: 30 } }), 422,
      /renews only a Lease that already is its heartbeat/);
    assert.equal((await asAdmin('DELETE', `${LEASES(AGENT_NAMESPACE)}/${A}`)).status, 200);
  });

  test('denied: a heartbeat shaped otherwise (holder, duration, labels, annotations, owners, managedFields)', async () => {
    const entry = (fieldsV1: unknown) => ({ manager: 'node-tuning-advisor', operation: 'Update', apiVersion: 'coordination.k8s.io/v1', fieldsType: 'FieldsV1', fieldsV1 });
    const stuffed = Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`f:k${i}`, {}]));
    const shapes: [string, (l: any) => void, RegExp][] = [
      ['holder', (l) => { l.spec.holderIdentity = B; }, /held by its own Node \(heartbeat-a\)/],
      ['duration', (l) => { l.spec.leaseDurationSeconds = 1_000_000; }, /leaseDurationSeconds from 3 to 259200/],
      ['acquireTime', (l) => { l.spec.acquireTime = l.spec.renewTime; }, /nothing else/],
      ['label', (l) => { l.metadata.labels.extra = 'x'; }, /carries the one label/],
      ['annotation', (l) => { l.metadata.annotations = { a: 'b' }; }, /carries the one label/],
      ['owner', (l) => { l.metadata.ownerReferences = [{ apiVersion: 'v1', kind: 'Node', name: B, uid: 'x' }]; }, /no owner but its own Node/],
      ['managedFields stuffed', (l) => { l.metadata.managedFields = [entry({ 'f:metadata': { 'f:labels': stuffed } })]; }, /managedFields name only a heartbeat's own fields/],
      ['managedFields of other fields', (l) => { l.metadata.managedFields = [entry({ 'f:spec': { 'f:renewTime': {} }, 'f:x': {} })]; }, /managedFields name only/],
    ];
    for (const [what, change, message] of shapes) denied(await create(lease(A, change)), 422, message);
    assert.equal((await create(lease(A))).status, 201, 'as the agent shapes it');
    denied(await patchLease(A, { metadata: { labels: { [HEARTBEAT_LABEL]: null } } }), 422, /carries the one label/);
    denied(await patchLease(A, { spec: { holderIdentity: B } }), 422, /held by its own Node/);
    assert.equal((await patchLease(A, { spec: { renewTime: heartbeatSpec(A, 10_000, Date.now()).renewTime } })).status, 200);
  });

  const asCleanup = (method: string, url: string, body?: unknown) => cp.request(method, url, body, { token: cleanupToken, ...(method === 'PATCH' ? { contentType: MERGE } : {}) });
  const meta = async (node: string) => (await cp.must('GET', `/api/v1/nodes/${node}`)).metadata;

  test('the cleanup identity may only remove our annotations, our two labels and heartbeat Leases', async () => {
    // What an agent and an operator left on B (written as admin, each under its own field manager).
    assert.equal((await cp.kubectl(['annotate', 'node', B, `${PREFIX}summary=70/100 C`, `${PREFIX}report={}`, 'example.com/owner=team-a'])).code, 0);
    assert.equal((await cp.kubectl(['label', 'node', B, `${GRADE}=C`, 'example.com/pool=batch'])).code, 0);
    const patchB = (metadata: unknown) => asCleanup('PATCH', `/api/v1/nodes/${B}`, { metadata });
    const refused: [unknown, RegExp][] = [
      [{ annotations: { [`${PREFIX}findings`]: 'new' } }, /may only remove annotations under node-tuning-advisor\.io\//],
      [{ annotations: { [`${PREFIX}summary`]: 'changed' } }, /may only remove annotations/],
      [{ annotations: { 'example.com/owner': null } }, /may only remove annotations/],
      [{ labels: { 'example.com/pool': null } }, /may only remove the labels node-tuning-advisor\.io\/grade and/],
      [{ labels: { [`${PREFIX}critical-failing`]: '0' } }, /may only remove the labels/],
      [{ finalizers: ['example.com/keep'] }, /may not change a Node's spec, status, finalizers or owners/],
    ];
    for (const [metadata, message] of refused) denied(await patchB(metadata), 422, message);
    denied(await asCleanup('PATCH', `/api/v1/nodes/${B}`, { spec: { unschedulable: true } }), 422, /spec, status, finalizers or owners/);
    const fields = (await meta(B)).managedFields as any[];
    denied(await patchB({ managedFields: fields.filter((m) => m.manager !== 'kubectl-label'), annotations: { [`${PREFIX}report`]: null } }), 422,
      /may change managedFields only by what they said about our annotations and labels/);
    denied(await asCleanup('PATCH', `/api/v1/nodes/${B}/status`, { status: { conditions: [] } }), 403, /cannot patch resource "nodes\/status"/);
    denied(await asCleanup('DELETE', `/api/v1/nodes/${B}`), 403, /cannot delete resource "nodes"/);
    // Leases: only deleted, as a collection, and only heartbeats; a leader-election Lease beside them stays.
    assert.equal((await asAdmin('POST', LEASES(AGENT_NAMESPACE), { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'leader' }, spec: { holderIdentity: 'x' } })).status, 201);
    denied(await asCleanup('DELETE', LEASES(AGENT_NAMESPACE)), 422, /deletes only heartbeat Leases/);
    denied(await asCleanup('DELETE', `${LEASES(AGENT_NAMESPACE)}/leader`), 403, /cannot delete resource "leases"/);
    denied(await asCleanup('POST', LEASES(AGENT_NAMESPACE), lease(A)), 403, /cannot create resource "leases"/);
    denied(await asCleanup('DELETE', `${LEASES('kube-node-lease')}?labelSelector=x`), 403, /cannot deletecollection resource "leases".*"kube-node-lease"/);
    // What it may do: remove ours, each key or all at once.
    assert.equal((await patchB({ annotations: { [`${PREFIX}report`]: null } })).status, 200);
    assert.equal((await patchB({ annotations: { [`${PREFIX}summary`]: null }, labels: { [GRADE]: null } })).status, 200);
    const after = await meta(B);
    assert.deepEqual([Object.keys(after.annotations).filter((k) => k.startsWith(PREFIX)), after.labels[GRADE], after.annotations['example.com/owner'], after.labels['example.com/pool']],
      [[], undefined, 'team-a', 'batch']);
    assert.ok((await cp.request('GET', `${LEASES(AGENT_NAMESPACE)}/leader`)).status === 200, 'the leader Lease stays');
  });

  test('cleanup as the chart\'s cleanup identity removes every key and heartbeat of ours (again: nothing); the agent\'s policy still refuses it B\'s heartbeat and keys', async () => {
    // A's agent publishes (annotations, labels) and has its heartbeat (the first test's, renewed here).
    const agentPatch = (node: string, metadata: unknown) => cp.request('PATCH', `/api/v1/nodes/${node}?fieldManager=node-tuning-advisor`, { metadata }, { token: agent.token, contentType: MERGE });
    assert.equal((await agentPatch(A, { annotations: { [`${PREFIX}summary`]: '90/100 A: 0 failing, 0 unknown' }, labels: { [GRADE]: 'A', [`${PREFIX}critical-failing`]: '0' } })).status, 200);
    await cp.request('DELETE', `${LEASES(AGENT_NAMESPACE)}/${A}`);
    assert.equal((await create(lease(A))).status, 201);
    const kubeconfig = await cp.writeKubeconfig(path.join(tmp, 'cleanup.kubeconfig'), `system:serviceaccount:${AGENT_NAMESPACE}:${CLEANUP_SA}`, cleanupToken);
    const first = await runCli(['cleanup', `--kubeconfig=${kubeconfig}`]);
    assert.equal(first.code, 0, first.stdout + first.stderr);
    assert.match(first.stdout, /^cleanup: removed 1 annotations and 2 labels under node-tuning-advisor\.io\/ from 1 of 2 nodes, and 1 heartbeat Lease in node-tuning-advisor$/m);
    for (const node of [A, B]) {
      const m = await meta(node);
      assert.deepEqual([...Object.keys(m.annotations ?? {}), ...Object.keys(m.labels ?? {})].filter((k) => k.startsWith(PREFIX)), [], node);
    }
    assert.deepEqual(((await cp.must('GET', LEASES(AGENT_NAMESPACE))).items as any[]).map((l) => l.metadata.name), ['leader'], 'only the heartbeats went');
    const again = await runCli(['cleanup', `--kubeconfig=${cp.kubeconfig}`]);
    assert.equal(again.code, 0, again.stdout + again.stderr);
    assert.match(again.stdout, /^cleanup: nothing to remove \(2 nodes carry no node-tuning-advisor\.io\/ key; no heartbeat Lease in node-tuning-advisor\)$/m);
    // The agent of A: still its own heartbeat and keys, never B's.
    denied(await create(lease(B)), 422, /only the heartbeat Lease of its own Node \(heartbeat-a\), not heartbeat-b/);
    denied(await agentPatch(B, { annotations: { [`${PREFIX}summary`]: 'x' } }), 422, /may change only its own Node \(heartbeat-a\), not heartbeat-b/);
    assert.equal((await create(lease(A))).status, 201);
  });
});
