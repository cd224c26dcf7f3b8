// The shipped manifests on a real kube-apiserver: applied with the real kubectl (base and probe
// overlay), then the RBAC and ValidatingAdmissionPolicies judged by the server itself, with the token
// a DaemonSet pod on node A gets (bound to the Pod, carrying the node-name claim). The real CEL
// evaluator, the real request shape (an empty subresource is absent, not ''), real managedFields.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { eventObject } from '../../src/publish/events.ts';
import { REASON_RECOMMENDATION } from '../../src/wire/events.ts';
import { ControlPlane, realServerTier, type KubeResponse } from '../helpers/control-plane.ts';
import { createReadyNode, podBoundToken } from '../helpers/kube-objects.ts';
import { BASE, PROBE_OVERLAY } from '../helpers/manifests.ts';
import { AGENT_NAMESPACE, AGENT_SA, CRD_DIR, PREFIX, agentIdentity, applyKustomization, installCrds, type AgentIdentity } from '../helpers/shipped.ts';
import { documentedReads } from '../helpers/token-reads.ts';

const A = 'policy-a';
const B = 'policy-b';
const MERGE = 'application/merge-patch+json';
/** Not installed: the ServiceMonitor's schema is checked offline (test/manifests/validate.test.ts). */
const NO_CRD = ['ServiceMonitor'];

describe('shipped manifests on a real kube-apiserver', realServerTier(), () => {
  let cp: ControlPlane;
  let tmp: string;
  let agent: AgentIdentity;
  const applied: Record<string, Awaited<ReturnType<typeof applyKustomization>>> = {};

  before(async () => {
    tmp = await mkdtemp(path.join(tmpdir(), 'nta-policy-'));
    cp = await ControlPlane.start();
    await installCrds(cp, [path.join(CRD_DIR, 'monitoring.coreos.com_prometheusrules.yaml')]);
    applied.base = await applyKustomization(cp, BASE, NO_CRD);
    applied.overlay = await applyKustomization(cp, PROBE_OVERLAY, NO_CRD);
    for (const name of [A, B]) {
      await createReadyNode(cp, name, { labels: { 'topology.kubernetes.io/zone': 'z1' }, annotations: { 'example.com/owner': 'team-a' } });
    }
    agent = await agentIdentity(cp, A, tmp);
  });
  after(async () => {
    await cp?.stop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  // fieldManager: the agent's writes get their own managedFields entry, apart from the test's as admin.
  const patchAs = (token: string, node: string, body: unknown, subresource = ''): Promise<KubeResponse> =>
    cp.request('PATCH', `/api/v1/nodes/${node}${subresource ? `/${subresource}` : ''}?fieldManager=agent`, body, { token, contentType: MERGE });
  const patch = (node: string, body: unknown, subresource = '') => patchAs(agent.token, node, body, subresource);
  const annotate = (annotations: Record<string, string | null>) => patch(A, { metadata: { annotations } });
  const denied = (res: KubeResponse, code: number, message: RegExp) => {
    assert.equal(res.status, code, JSON.stringify(res.body));
    assert.match(res.body.message, message);
  };

  test('kubectl apply: the server accepts every object of the base and of the probe overlay', async (t) => {
    for (const [name, run] of Object.entries(applied)) {
      assert.equal(run.code, 0, `${name}: ${run.stderr}`);
      const lines = run.stdout.trim().split('\n');
      assert.equal(lines.length, run.objects.length, `${name}: one line per object\n${run.stdout}`);
      assert.ok(lines.every((l) => / (created|configured|unchanged)$/.test(l)), run.stdout);
      const read = await cp.kubectl(['get', '-f', '-', '-o', 'name'], { input: run.input });
      assert.equal(read.code, 0, read.stderr);
      assert.equal(read.stdout.trim().split('\n').length, run.objects.length);
      t.diagnostic(`${name}: ${run.objects.length} objects applied; skipped ${run.skipped} (${NO_CRD.join(', ')}: CRD servicemonitors.monitoring.coreos.com not installed)`);
    }
    const kinds = new Set(applied.base!.objects.map((o) => o.kind));
    for (const kind of ['Namespace', 'ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding',
      'ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding', 'ConfigMap', 'DaemonSet', 'Service']) {
      assert.ok(kinds.has(kind), `base has a ${kind}`);
    }
    const probe = await cp.must('GET', `/apis/apps/v1/namespaces/${AGENT_NAMESPACE}/daemonsets/node-tuning-advisor-etcd-probe`);
    assert.ok(probe.spec.template.spec.containers[0].args.includes('--probe-interval=6h'));
  });

  test('its own Node: annotations under our prefix may come, change and go', async () => {
    assert.equal((await annotate({ [`${PREFIX}summary`]: 'score 80/100 grade B', [`${PREFIX}findings`]: 'WARN x: y' })).status, 200);
    assert.equal((await annotate({ [`${PREFIX}summary`]: 'score 95/100 grade A', [`${PREFIX}findings`]: null })).status, 200);
    const node = await cp.must('GET', `/api/v1/nodes/${A}`);
    assert.equal(node.metadata.annotations[`${PREFIX}summary`], 'score 95/100 grade A');
    assert.equal(node.metadata.annotations[`${PREFIX}findings`], undefined);
    assert.equal(node.metadata.annotations['example.com/owner'], 'team-a');
  });

  test('at most 8 keys and 8 KiB (keys + values, UTF-8 bytes) under our prefix', async () => {
    const keys = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`${PREFIX}k${i}`, 'v']));
    const clear = { ...Object.fromEntries(Object.keys(keys(9)).map((k) => [k, null])), [`${PREFIX}summary`]: null };
    assert.equal((await annotate(clear)).status, 200);
    assert.equal((await annotate(keys(8))).status, 200);
    denied(await annotate(keys(9)), 422, /at most 8 annotations under node-tuning-advisor\.io\/, not 9/);
    assert.equal((await annotate(clear)).status, 200);
    const key = `${PREFIX}report`;
    const exactly = (bytes: number) => 'µ'.repeat((bytes - key.length) >> 1) + 'x'.repeat((bytes - key.length) & 1);
    assert.equal(Buffer.byteLength(key + exactly(8192)), 8192);
    assert.equal((await annotate({ [key]: exactly(8192) })).status, 200, 'exactly 8192 bytes');
    denied(await annotate({ [key]: exactly(8193) }), 422, /at most 8192 bytes \(keys \+ values\), not 8193/);
    assert.equal((await annotate({ [key]: null })).status, 200);
  });

  test('denied by the server, with the reason: another Node, labels, other annotations, spec, status, owners', async () => {
    const ours = { metadata: { annotations: { [`${PREFIX}summary`]: 'x' } } };
    denied(await patch(B, ours), 422, /ValidatingAdmissionPolicy 'node-tuning-advisor-own-node-annotations'.*may change only its own Node \(policy-a\), not policy-b/);
    denied(await patch(A, { metadata: { labels: { 'node-role.kubernetes.io/control-plane': '' } } }), 422, /may change only its labels node-tuning-advisor\.io\/grade/);
    denied(await patch(A, { metadata: { labels: { 'topology.kubernetes.io/zone': null } } }), 422, /may change only its labels node-tuning-advisor\.io\/grade/);
    denied(await annotate({ 'example.com/owner': 'mallory' }), 422, /may change only annotations under node-tuning-advisor\.io\//);
    denied(await annotate({ 'example.com/owner': null }), 422, /may change only annotations under node-tuning-advisor\.io\//);
    denied(await annotate({ 'node-tuning-advisor.io.evil.example/x': '1' }), 422, /may change only annotations under/);
    denied(await patch(A, { spec: { unschedulable: true } }), 422, /may not change the Node's spec or status/);
    denied(await patch(A, { spec: { taints: [{ key: 'k', effect: 'NoSchedule' }] } }), 422, /spec or status/);
    denied(await patch(A, { metadata: { finalizers: ['example.com/keep'] } }), 422, /may not change the Node's finalizers or owners/);
    // RBAC grants `patch` on nodes, not on nodes/status: the server refuses before any policy runs.
    denied(await patch(A, { status: { conditions: [{ type: 'Ready', status: 'False' }] } }, 'status'), 403,
      /cannot patch resource "nodes\/status" in API group "" at the cluster scope/);
    const deleted = await cp.request('DELETE', `/api/v1/nodes/${B}`, undefined, { token: agent.token });
    denied(deleted, 403, /cannot delete resource "nodes"/);
    const node = await cp.must('GET', `/api/v1/nodes/${A}`);
    assert.deepEqual({ labels: node.metadata.labels, owner: node.metadata.annotations['example.com/owner'], spec: node.spec.unschedulable },
      { labels: { 'kubernetes.io/hostname': A, 'topology.kubernetes.io/zone': 'z1' }, owner: 'team-a', spec: undefined });
  });

  test('its own Node: exactly our two labels, with their values, for kubectl get nodes -L; nothing else, nowhere else', async () => {
    const grade = `${PREFIX}grade`;
    const critical = `${PREFIX}critical-failing`;
    const label = (labels: Record<string, string | null>, node = A) => patch(node, { metadata: { labels } });
    assert.equal((await label({ [grade]: 'F', [critical]: '2' })).status, 200);
    assert.equal((await label({ [grade]: 'A', [critical]: '0' })).status, 200);
    assert.equal((await label({ [critical]: '999' })).status, 200);
    const shown = await cp.kubectl(['get', 'node', A, '-L', grade, '-L', critical, '--no-headers']);
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, /\sA\s+999\s*$/, shown.stdout);
    const selected = await cp.kubectl(['get', 'nodes', '-l', `${grade}=A`, '-o', 'name']);
    assert.equal(selected.stdout.trim(), `node/${A}`);
    const refusal = /may change only its labels node-tuning-advisor\.io\/grade \(A, B, C, D or F\) and/;
    const bads: Record<string, string>[] = [{ [grade]: 'E' }, { [grade]: 'a' }, { [critical]: '1000' }, { [critical]: '1x' }, { [critical]: '07' },
      { [critical]: 'many' }, { [`${PREFIX}score`]: '80' }, { 'node-tuning-advisor.io.evil.example/grade': 'A' }];
    for (const bad of bads) denied(await label(bad), 422, refusal);
    denied(await label({ [grade]: 'A' }, B), 422, /may change only its own Node \(policy-a\), not policy-b/);
    // Someone else's label under our prefix stays as it is: the agent may neither change nor remove it.
    assert.equal((await cp.kubectl(['label', 'node', A, `${PREFIX}pool=gold`])).code, 0);
    denied(await label({ [`${PREFIX}pool`]: null }), 422, refusal);
    assert.equal((await label({ [grade]: 'C' })).status, 200, 'ours still change beside it');
    assert.equal((await cp.kubectl(['label', 'node', A, `${PREFIX}pool-`])).code, 0);
    // Our labels may go again (an uninstall by the agent's own hand).
    assert.equal((await label({ [grade]: null, [critical]: null })).status, 200);
    const node = await cp.must('GET', `/api/v1/nodes/${A}`);
    assert.deepEqual(node.metadata.labels, { 'kubernetes.io/hostname': A, 'topology.kubernetes.io/zone': 'z1' });
  });

  test('managedFields change only in what they say about our annotations', async () => {
    // Someone annotates by hand one of our keys and one of theirs in one command.
    const edit = await cp.kubectl(['annotate', 'node', A, '--overwrite', `${PREFIX}summary=edited by hand`, 'example.com/ticket=OPS-1']);
    assert.equal(edit.code, 0, edit.stderr);
    // The agent takes its key back: ownership moves from kubectl-annotate to the agent, theirs stays.
    assert.equal((await annotate({ [`${PREFIX}summary`]: 'score 95/100 grade A' })).status, 200);
    const fields = (await cp.must('GET', `/api/v1/nodes/${A}`)).metadata.managedFields as any[];
    const byHand = fields.find((m) => m.manager === 'kubectl-annotate');
    assert.deepEqual(Object.keys(byHand.fieldsV1['f:metadata']['f:annotations']), ['f:example.com/ticket']);

    const current = (await cp.must('GET', `/api/v1/nodes/${A}`)).metadata.managedFields as any[];
    const withPatch = (managedFields: unknown) => ({ metadata: { managedFields, annotations: { [`${PREFIX}summary`]: 'forged' } } });
    const creator = current.find((m) => m.manager !== 'agent' && m.manager !== 'kubectl-annotate').manager;
    const older = current.map((m) => (m.manager === creator ? { ...m, time: '2020-01-01T00:00:00Z' } : m));
    denied(await patch(A, withPatch(older)), 422, /may not change managedFields except for its own annotations and labels/);
    const claims = [...current, { manager: 'kubelet', operation: 'Update', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:metadata': { 'f:labels': { 'f:example.com/x': {} } } } }];
    denied(await patch(A, withPatch(claims)), 422, /managedFields/);
    denied(await patch(A, withPatch(current.filter((m) => m.manager !== 'kubectl-annotate'))), 422, /managedFields/);
    // Why the agent writes under its own manager name: through an entry it shares with another
    // writer's fields (here the creator's), even its own annotations are refused, once the entry's
    // time (whole seconds) would change.
    const creatorTime = Date.parse(current.find((m) => m.manager === creator).time);
    await new Promise((r) => setTimeout(r, Math.max(0, creatorTime + 1_100 - Date.now())));
    const shared = await cp.request('PATCH', `/api/v1/nodes/${A}?fieldManager=${encodeURIComponent(creator)}`,
      { metadata: { annotations: { [`${PREFIX}summary`]: 'through a shared entry' } } }, { token: agent.token, contentType: MERGE });
    denied(shared, 422, /may not change managedFields except for its own annotations and labels/);
  });

  test('Events: only in "default", only about its own Node, only as node-tuning-advisor', async () => {
    const node = await cp.must('GET', `/api/v1/nodes/${A}`);
    // The Event as the agent builds it (src/publish/events.ts), changed where a test says so.
    const event = (over: Record<string, unknown> = {}, name = A, namespace = 'default') => {
      const e = eventObject({ reason: REASON_RECOMMENDATION, type: 'Warning', ruleId: 'kernel-tick-rate', message: 'WARN kernel-tick-rate: 250 Hz' },
        { name, uid: node.metadata.uid }, new Date(), Math.random().toString(16).slice(2));
      return { ...e, metadata: { ...e.metadata, namespace }, ...over };
    };
    const post = (ns: string, body: unknown, token = agent.token) => cp.request('POST', `/api/v1/namespaces/${ns}/events`, body, { token });
    const created = await post('default', event());
    assert.equal(created.status, 201, JSON.stringify(created.body));
    denied(await post(AGENT_NAMESPACE, event({}, A, AGENT_NAMESPACE)), 403, /cannot create resource "events" in API group "" in the namespace "node-tuning-advisor"/);
    // Why "default": the server itself refuses Events about a cluster-scoped object elsewhere.
    denied(await post(AGENT_NAMESPACE, event({}, A, AGENT_NAMESPACE), cp.adminToken), 422, /involvedObject\.namespace: Invalid value: "": does not match event\.namespace/);
    denied(await post('default', event({}, B)), 422, /node-tuning-advisor-own-node-events.*may report only on its own Node \(policy-a\)/);
    denied(await post('default', event({ source: { component: 'kubelet', host: A } })), 422, /must name it as their source and reporting component/);
    denied(await post('default', event({ involvedObject: { kind: 'Pod', namespace: 'default', name: 'web-1', uid: 'x' } })), 422, /only on its own Node/);
    const name = created.body.metadata.name as string;
    denied(await cp.request('DELETE', `/api/v1/namespaces/default/events/${name}`, undefined, { token: agent.token }), 403, /cannot delete resource "events"/);
    denied(await cp.request('PATCH', `/api/v1/namespaces/default/events/${name}`, { message: 'x' }, { token: agent.token, contentType: MERGE }), 403, /cannot patch resource "events"/);
    const newApi = await cp.request('POST', '/apis/events.k8s.io/v1/namespaces/default/events', {
      apiVersion: 'events.k8s.io/v1', kind: 'Event', metadata: { name: `${A}.new-api` }, eventTime: new Date().toISOString().replace('Z', '000Z'),
      reportingController: 'node-tuning-advisor', reportingInstance: A, action: 'Recommend', reason: 'TuningRecommendation', type: 'Warning',
      regarding: { kind: 'Node', name: A },
    }, { token: agent.token });
    denied(newApi, 403, /cannot create resource "events" in API group "events\.k8s\.io"/);
  });

  test('a token without the node-name claim may change no Node at all', async () => {
    // A TokenRequest bound to nothing (as `kubectl create token` mints by default) has no node claim.
    const review = await cp.must('POST', `/api/v1/namespaces/${AGENT_NAMESPACE}/serviceaccounts/${AGENT_SA}/token`,
      { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 600 } });
    const unbound = review.status.token as string;
    denied(await patchAs(unbound, A, { metadata: { annotations: { [`${PREFIX}summary`]: 'x' } } }), 422,
      /may change only its own Node \(its token carries no node-name claim\), not policy-a/);
    // A second pod of the DaemonSet, on node B, gets node B's claim: node A is not its own.
    const podB = await cp.must('POST', `/api/v1/namespaces/${AGENT_NAMESPACE}/pods`, {
      apiVersion: 'v1', kind: 'Pod', metadata: { name: 'agent-on-b' },
      spec: { nodeName: B, serviceAccountName: AGENT_SA, automountServiceAccountToken: false, containers: [{ name: 'agent', image: 'example.invalid/x' }] },
    });
    const tokenB = await podBoundToken(cp, AGENT_NAMESPACE, AGENT_SA, podB);
    denied(await patchAs(tokenB, A, { metadata: { annotations: { [`${PREFIX}summary`]: 'x' } } }), 422, /only its own Node \(policy-b\), not policy-a/);
    assert.equal((await patchAs(tokenB, B, { metadata: { annotations: { [`${PREFIX}summary`]: 'x' } } })).status, 200);
  });

  test('the read side of node A\'s token, as docs/security.md states it: every pod spec and Node of the cluster, nothing more (issue 37 item 8)', async () => {
    // A tenant's pod on node B with a password written into its spec.
    await cp.must('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'tenant-reads' } });
    await cp.must('POST', '/api/v1/namespaces/tenant-reads/serviceaccounts', { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default' } });
    await cp.must('POST', '/api/v1/namespaces/tenant-reads/pods', {
      apiVersion: 'v1', kind: 'Pod', metadata: { name: 'db-client' },
      spec: { nodeName: B, automountServiceAccountToken: false, containers: [{ name: 'c', image: 'example.invalid/db-client:1', env: [{ name: 'DB_PASSWORD', value: 'hunter2' }] }] },
    });
    const get = (url: string) => cp.request('GET', url, undefined, { token: agent.token });
    // RBAC has no field-selector rule: any node's pods, or all of them, in every namespace.
    for (const url of ['/api/v1/pods', `/api/v1/pods?fieldSelector=spec.nodeName%3D${B}`]) {
      const listed = await get(url);
      assert.equal(listed.status, 200, url);
      const pod = listed.body.items.find((p: any) => p.metadata.name === 'db-client');
      assert.equal(pod?.spec.containers[0].env[0].value, 'hunter2', `${url}: the env value is in the pod spec it returns`);
    }
    assert.ok((await get('/api/v1/nodes')).body.items.some((n: any) => n.metadata.name === B), 'every Node');
    // Each read the document lists, asked of the server with the token itself; and what it says the token lacks.
    const { granted } = await documentedReads();
    assert.ok(granted.length > 0, 'docs/security.md lists the reads');
    const allowed = async (resource: string, verb: string, namespace?: string): Promise<boolean> => {
      const [plural, subresource] = resource.split('/') as [string, string | undefined];
      const group = ['csidrivers', 'csinodes'].includes(plural) ? 'storage.k8s.io' : '';
      const review = await cp.request('POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', {
        apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview',
        spec: { resourceAttributes: { group, resource: plural, verb, ...(subresource ? { subresource, name: B } : {}), ...(namespace ? { namespace } : {}) } },
      }, { token: agent.token });
      assert.equal(review.status, 201, JSON.stringify(review.body));
      return review.body.status.allowed === true;
    };
    for (const read of granted) {
      const [resource, verb] = read.split(' ') as [string, string];
      assert.equal(await allowed(resource, verb), true, `${read}: granted, as documented (nodes/metrics for node B, not its own)`);
    }
    for (const [resource, verb] of [['secrets', 'get'], ['secrets', 'list'], ['configmaps', 'list'], ['pods/log', 'get'], ['pods/exec', 'create'], ['nodes/proxy', 'get']] as const) {
      assert.equal(await allowed(resource, verb, resource.startsWith('nodes') ? undefined : 'tenant-reads'), false, `${resource} ${verb}: not readable, as documented`);
    }
  });
});

