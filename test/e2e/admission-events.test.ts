// What a stolen agent token may write as Events, judged by a real kube-apiserver with the shipped
// policy (manifests/base/admission-policy.yaml) and the token a DaemonSet pod on the node gets: the
// attacks of issue 22 (1.4 MiB Events, another node's name in source.host, reportingInstance, related,
// owners, names in another node's prefix, stuffed managedFields) are refused, every Event the agent
// really sends (the real Publisher over the real client) is created, and a 409 is never taken as ours.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { agentClient, agentWrites, type WriteApi } from '../../src/agent/api.ts';
import { Publisher } from '../../src/agent/publisher.ts';
import { KubeError } from '../../src/kube/errors.ts';
import type { EventObject, NodeObject } from '../../src/kube/objects.ts';
import { eventObject } from '../../src/publish/events.ts';
import { REASON_RECOMMENDATION } from '../../src/wire/events.ts';
import { ControlPlane, realServerTier, type KubeResponse } from '../helpers/control-plane.ts';
import { createReadyNode, waitForAdmission } from '../helpers/kube-objects.ts';
import { BASE } from '../helpers/manifests.ts';
import { finding, report } from '../helpers/reports.ts';
import { agentIdentity, applyKustomization, nodeEvents, type AgentIdentity } from '../helpers/shipped.ts';

const A = 'events-a';
const B = 'events-b';
/** The longest node name whose Event names (name, a dot, 27 hex digits) still fit 253 characters. */
const LONG = `${'l'.repeat(60)}.${'o'.repeat(60)}.${'n'.repeat(60)}.${'g'.repeat(42)}`;

describe('Events under the shipped policy, with the agent token of a DaemonSet pod', realServerTier(), () => {
  let cp: ControlPlane;
  let tmp: string;
  let agent: AgentIdentity;
  let agentLong: AgentIdentity;

  before(async () => {
    tmp = await mkdtemp(path.join(tmpdir(), 'nta-events-'));
    cp = await ControlPlane.start();
    const applied = await applyKustomization(cp, BASE, ['ServiceMonitor', 'PrometheusRule']);
    assert.equal(applied.code, 0, applied.stderr);
    for (const name of [A, B]) await createReadyNode(cp, name);
    await cp.must('POST', '/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: LONG } });
    agent = await agentIdentity(cp, A, tmp);
    agentLong = await agentIdentity(cp, LONG, tmp, 'agent-long');
    // The Events policy is enforced a moment after it is applied: wait until an Event about B is refused.
    await waitForAdmission(async () => (await post(forged({}, B), agent.token, true)).status, 422, 30_000);
  });
  after(async () => {
    await cp?.stop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  function post(body: unknown, token = agent.token, dryRun = false): Promise<KubeResponse> {
    return cp.request('POST', `/api/v1/namespaces/default/events${dryRun ? '?dryRun=All' : ''}`, body, { token });
  }
  /** The Event as the agent builds it for node A, with the fields an attacker changes. */
  function forged(over: Record<string, unknown> = {}, node = A): EventObject & Record<string, unknown> {
    const e = eventObject({ reason: REASON_RECOMMENDATION, type: 'Warning', ruleId: 'kernel-tick-rate', message: 'WARN kernel-tick-rate: 250 Hz' },
      { name: node, uid: `uid-of-${node}`.slice(0, 36) }, new Date(), `${Date.now().toString(16)}${Math.random().toString(16).slice(2, 18).padEnd(16, '0')}`);
    return { ...e, ...over };
  }
  const denied = (res: KubeResponse, message: RegExp) => {
    assert.equal(res.status, 422, JSON.stringify(res.body).slice(0, 400));
    assert.match(res.body.message, /ValidatingAdmissionPolicy 'node-tuning-advisor-own-node-events'/);
    assert.match(res.body.message, message);
  };
  const publisherFor = (api: WriteApi) => new Publisher(api, () => {});
  const nodeObject = async (name: string) => (await cp.must('GET', `/api/v1/nodes/${name}`)) as NodeObject;

  test('every Event the agent sends is created: a recommendation with the longest message, its resolution, on a node with the longest name', async () => {
    for (const who of [agent, agentLong]) {
      const api = agentWrites(agentClient({ kubeconfig: who.kubeconfig }));
      const publisher = publisherFor(api);
      const long = finding('kernel-tick-rate', 'fail', { observed: 'µ'.repeat(400), severity: 'critical' });
      const failing = report([long, finding('cpu-governor', 'fail')], { node: who.node });
      assert.deepEqual(await publisher.publish(failing, await nodeObject(who.node)), { patched: true, events: 2 });
      const fixed = report([finding('kernel-tick-rate', 'pass'), finding('cpu-governor', 'not-applicable')], { node: who.node });
      assert.deepEqual(await publisher.publish(fixed, await nodeObject(who.node)), { patched: true, events: 2 });
      const events = await nodeEvents(cp, who.node);
      assert.deepEqual(events.map((e) => e.reason).sort(), ['TuningRecommendation', 'TuningRecommendation', 'TuningResolved', 'TuningResolved']);
      const longest = events.find((e) => e.message.includes('µ'));
      assert.ok(Buffer.byteLength(longest.message) >= 299 && Buffer.byteLength(longest.message) <= 300, 'the findings line is cut at 300 bytes');
      for (const e of events) assert.ok(e.metadata.name.length <= 253 && e.metadata.name.startsWith(`${who.node}.`), e.metadata.name);
    }
  });

  test('size: a 1.4 MiB message, a long reason, action, fieldPath or uid, another type are refused', async () => {
    const huge = 'x'.repeat(1_400_000);
    const floods = await Promise.all(Array.from({ length: 30 }, () => post(forged({ message: huge }))));
    for (const res of floods) denied(res, /a message of at most 1024 bytes \(not 1400000\)/);
    assert.equal((await post(forged({ message: 'µ'.repeat(512) }))).status, 201, 'exactly 1024 bytes');
    denied(await post(forged({ message: `${'µ'.repeat(512)}x` })), /at most 1024 bytes \(not 1025\)/);
    denied(await post(forged({ reason: 'R'.repeat(129) })), /a reason and an action of at most 128 bytes/);
    denied(await post(forged({ action: 'A'.repeat(129) })), /a reason and an action of at most 128 bytes/);
    denied(await post(forged({ type: 'Critical' })), /the type Normal or Warning/);
    const involved = forged().involvedObject;
    denied(await post(forged({ involvedObject: { ...involved, fieldPath: 'f'.repeat(100_000) } })), /may report only on its own Node \(events-a\)/);
    denied(await post(forged({ involvedObject: { ...involved, uid: 'u'.repeat(100_000) } })), /may report only on its own Node/);
    denied(await post(forged({ involvedObject: { ...involved, namespace: 'default' } })), /may report only on its own Node/);
    const ofA = (await nodeEvents(cp, A)).filter((e) => e.message.startsWith('x'));
    assert.deepEqual(ofA, [], 'no flood Event was stored');
  });

  test("identity: another node's name in source.host, reportingInstance, related, owners, or as the name's prefix is refused", async () => {
    const identity = /an advisor Event names its own Node \(events-a\) as source\.host, reportingInstance, related object and owner/;
    denied(await post(forged({ source: { component: 'node-tuning-advisor', host: B } })), identity);
    denied(await post(forged({ source: { component: 'node-tuning-advisor' } })), identity);
    denied(await post(forged({ reportingInstance: B })), identity);
    denied(await post(forged({ related: { apiVersion: 'v1', kind: 'Node', name: B } })), identity);
    denied(await post(forged({ related: { apiVersion: 'v1', kind: 'Pod', namespace: 'default', name: 'web-1' } })), identity);
    const node = (name: string) => ({ apiVersion: 'v1', kind: 'Node', name, uid: '3f1c1f4e-0000-4000-8000-000000000001' });
    const named = (extra: Record<string, unknown>, name = `${A}.${Date.now().toString(16)}0123456789abcdef`) =>
      forged({ metadata: { name, namespace: 'default', ...extra } });
    denied(await post(named({ ownerReferences: [node(B)] })), identity);
    denied(await post(named({ ownerReferences: [node(A), { ...node(A), uid: '3f1c1f4e-0000-4000-8000-000000000002' }] })), identity);
    assert.equal((await post(named({ ownerReferences: [node(A)] }))).status, 201, 'its own Node as owner');
    assert.equal((await post(forged({ related: node(A) }))).status, 201, 'its own Node as related object');
    const prefix = /an advisor Event name begins with the name of its own Node and a dot \(events-a\.\)/;
    denied(await post(named({}, `${B}.17a2b3c4d5e0123456789abcdef`)), prefix);
    denied(await post(named({}, `${A}x.17a2b3c4d5e0123456789abcdef`)), prefix);
    denied(await post(named({}, `${A}-b.17a2b3c4d5e0123456789abcdef`)), prefix);
    // Node B's Events are B's own: the token of A can neither write them nor take their names.
    denied(await post(forged({}, B)), /may report only on its own Node \(events-a\)/);
  });

  test('metadata: labels, annotations, finalizers and managedFields stuffed with field names are refused', async () => {
    const meta = (extra: Record<string, unknown>) => forged({ metadata: { name: `${A}.${Date.now().toString(16)}fedcba9876543210`, namespace: 'default', ...extra } });
    const message = /an advisor Event carries no labels, annotations or finalizers, and managedFields only for an Event's own fields/;
    denied(await post(meta({ annotations: { 'example.com/x': 'y'.repeat(200_000) } })), message);
    denied(await post(meta({ labels: { 'example.com/x': 'y' } })), message);
    denied(await post(meta({ finalizers: ['example.com/keep'] })), message);
    const entry = (fieldsV1: unknown, manager = 'node-tuning-advisor') => ({ manager, operation: 'Update', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1 });
    const stuffed = Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`f:k${i}`, {}]));
    denied(await post(meta({ managedFields: [entry({ 'f:message': {}, 'f:source': stuffed })] })), message);
    denied(await post(meta({ managedFields: [entry({ 'f:message': {}, 'f:x': {} })] })), message);
    // events.k8s.io (where `note` lives) is not granted at all.
    const newApi = await cp.request('POST', '/apis/events.k8s.io/v1/namespaces/default/events', {
      apiVersion: 'events.k8s.io/v1', kind: 'Event', metadata: { name: `${A}.new-api` }, eventTime: new Date().toISOString().replace('Z', '000Z'),
      reportingController: 'node-tuning-advisor', reportingInstance: A, action: 'Recommend', reason: 'TuningRecommendation', type: 'Warning',
      regarding: { kind: 'Node', name: A }, note: 'n'.repeat(1_000_000),
    }, { token: agent.token });
    assert.equal(newApi.status, 403, JSON.stringify(newApi.body).slice(0, 300));
  });

  test('the largest Event the policy admits is stored in under 6 KiB', async (t) => {
    const node = LONG;
    const uid = (await nodeObject(node)).metadata?.uid as string;
    const ref = { apiVersion: 'v1', kind: 'Node', name: node, uid: 'u'.repeat(253), resourceVersion: '9'.repeat(64) };
    const name = `${node}.${Date.now().toString(16)}${'f'.repeat(16)}`;
    const ownerKey = `k:{"uid":"${uid}"}`;
    const ownerFields = { '.': {}, 'f:apiVersion': {}, 'f:kind': {}, 'f:name': {}, 'f:uid': {}, 'f:controller': {}, 'f:blockOwnerDeletion': {} };
    const fieldsV1 = {
      'f:action': {}, 'f:count': {}, 'f:eventTime': {}, 'f:firstTimestamp': {}, 'f:involvedObject': {}, 'f:lastTimestamp': {},
      'f:message': {}, 'f:reason': {}, 'f:related': {}, 'f:reportingComponent': {}, 'f:reportingInstance': {}, 'f:type': {},
      'f:source': { 'f:component': {}, 'f:host': {} }, 'f:series': { '.': {}, 'f:count': {}, 'f:lastObservedTime': {} },
      'f:metadata': { 'f:ownerReferences': { '.': {}, [ownerKey]: ownerFields } },
    };
    const micro = new Date().toISOString().replace('Z', '000Z');
    const largest = forged({
      metadata: {
        name, namespace: 'default',
        ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: node, uid, controller: true, blockOwnerDeletion: true }],
        managedFields: [{ manager: 'm'.repeat(128), operation: 'Update', apiVersion: 'v'.repeat(64), subresource: 's'.repeat(64), fieldsType: 'FieldsV1', fieldsV1 }],
      },
      involvedObject: ref, related: ref, reason: 'R'.repeat(128), action: 'A'.repeat(128), message: 'µ'.repeat(512),
      series: { count: 2_147_483_647, lastObservedTime: micro }, count: 2_147_483_647,
    }, node);
    const created = await post(largest, agentLong.token);
    assert.equal(created.status, 201, JSON.stringify(created.body.message).slice(-400));
    const stored = await cp.must('GET', `/api/v1/namespaces/default/events/${encodeURIComponent(name)}`);
    const bytes = Buffer.byteLength(JSON.stringify(stored));
    t.diagnostic(`largest admitted Event: ${bytes} bytes as JSON`);
    assert.ok(bytes <= 6 * 1024, `${bytes} bytes`);
  });

  test('a 409 is ours only after a try that may have reached the server: a taken name is never counted as sent', async () => {
    const real = agentWrites(agentClient({ kubeconfig: agent.kubeconfig }));
    const squatted: string[] = [];
    // Someone who may create Events in "default" takes the name the agent is about to use, first.
    const squatter: WriteApi = {
      patchNode: (name, patch) => real.patchNode(name, patch),
      createEvent: async (event) => {
        if (squatted.length === 0) {
          squatted.push(event.metadata.name);
          await cp.must('POST', '/api/v1/namespaces/default/events', { ...event, message: 'written by someone else', reportingInstance: 'mallory' });
        }
        return real.createEvent(event);
      },
    };
    const failing = report([finding('swap-enabled', 'fail')], { node: A });
    assert.deepEqual(await publisherFor(squatter).publish(failing, await nodeObject(A)), { patched: true, events: 1 });
    const ours = (await nodeEvents(cp, A)).filter((e) => e.message.includes('swap-enabled'));
    assert.equal(ours.length, 1, JSON.stringify(ours.map((e) => e.metadata.name)));
    assert.notEqual(ours[0].metadata.name, squatted[0], 'sent under a fresh name');
    assert.equal(ours[0].reportingInstance, A);
    const taken = await cp.must('GET', `/api/v1/namespaces/default/events/${squatted[0]}`);
    assert.equal(taken.message, 'written by someone else');

    // The answer to a create is lost (written, then a timeout): the retry's 409 is the agent's own Event.
    let calls = 0;
    const lossy: WriteApi = {
      patchNode: (name, patch) => real.patchNode(name, patch),
      createEvent: async (event) => {
        calls += 1;
        const created = await real.createEvent(event);
        if (calls === 1) throw new KubeError({ verb: 'create', target: 'events in namespace default', code: 'timeout', detail: 'no answer within 30 s' });
        return created;
      },
    };
    const publisher = publisherFor(lossy);
    const more = report([finding('swap-enabled', 'fail'), finding('thp-enabled', 'fail')], { node: A });
    await assert.rejects(publisher.publish(more, await nodeObject(A)), /no answer within 30 s/);
    assert.deepEqual(await publisher.publish(more, await nodeObject(A)), { patched: false, events: 1 });
    assert.equal(calls, 2);
    assert.equal((await nodeEvents(cp, A)).filter((e) => e.message.includes('thp-enabled')).length, 1, 'sent once');
  });
});
