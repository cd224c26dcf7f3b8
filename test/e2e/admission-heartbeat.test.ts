// The heartbeat Lease on a real kube-apiserver with the shipped base (kubectl apply): the agent's own
// Heartbeat (src/agent/heartbeat.ts) with the token a DaemonSet pod on node A gets creates and renews
// the Lease named after A in the agent's namespace; the server refuses it every other Lease: node
// B's, one in kube-node-lease (the kubelets' node Leases) or kube-system, a Lease that is not a
// heartbeat, one shaped otherwise (labels, owners, holder, duration, managedFields), a delete.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { agentClient, leaseWrites } from '../../src/agent/api.ts';
import { Heartbeat } from '../../src/agent/heartbeat.ts';
import { HEARTBEAT_LABEL, heartbeatLease, heartbeatSpec } from '../../src/wire/heartbeat.ts';
import { ControlPlane, realServerTier, type KubeResponse } from '../helpers/control-plane.ts';
import { createReadyNode, waitForAdmission } from '../helpers/kube-objects.ts';
import { BASE } from '../helpers/manifests.ts';
import { AGENT_NAMESPACE, agentIdentity, applyKustomization, type AgentIdentity } from '../helpers/shipped.ts';

const A = 'heartbeat-a';
const B = 'heartbeat-b';
const MERGE = 'application/merge-patch+json';
const LEASES = (namespace: string) => `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases`;

describe('the heartbeat Lease and the admission policy on a real kube-apiserver', realServerTier(), () => {
  let cp: ControlPlane;
  let tmp: string;
  let agent: AgentIdentity;
  let uidA: string;

  before(async () => {
    tmp = await mkdtemp(path.join(tmpdir(), 'nta-heartbeat-policy-'));
    cp = await ControlPlane.start();
    const applied = await applyKustomization(cp, BASE);
    assert.equal(applied.code, 0, applied.stderr);
    for (const name of [A, B]) await createReadyNode(cp, name);
    uidA = (await cp.must('GET', `/api/v1/nodes/${A}`)).metadata.uid;
    agent = await agentIdentity(cp, A, tmp);
    // The policy is enforced a moment after it is applied: until a Lease of B is refused.
    await waitForAdmission(async () => (await create(lease(B), AGENT_NAMESPACE, true)).status, 422, 30_000);
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
});
