// Where the API stand-in (test/helpers/fake-apiserver.ts) was found to answer differently from a real
// kube-apiserver, the same request now goes to both and the answers must agree. The stand-in stays
// for what a real server cannot be made to do on demand (500/429 with Retry-After, slow bodies,
// malformed responses); everything else it claims is checked here against the real thing.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { eventObject } from '../../src/publish/events.ts';
import { REASON_RECOMMENDATION } from '../../src/wire/events.ts';
import { ControlPlane, realServerTier } from '../helpers/control-plane.ts';
import { FakeApiServer } from '../helpers/fake-apiserver.ts';
import { createReadyNode } from '../helpers/kube-objects.ts';

interface Answer { status: number; body: any }

/** The same JSON request to the stand-in (plain HTTP on loopback). */
function standIn(server: FakeApiServer, method: string, urlPath: string, body?: unknown): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port: server.port, method, path: urlPath, headers: { 'content-type': 'application/json' } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => { text += c; });
      res.on('end', () => {
        let parsed: unknown = text;
        try { parsed = JSON.parse(text); } catch { /* keep the text (a watch stream) */ }
        resolve({ status: res.statusCode ?? 0, body: parsed });
      });
    });
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

describe('the API stand-in answers as a real kube-apiserver where they once differed', realServerTier(), () => {
  let cp: ControlPlane;
  let fake: FakeApiServer;

  before(async () => {
    [cp, fake] = [await ControlPlane.start(), new FakeApiServer()];
    await fake.start();
    await createReadyNode(cp, 'node-a');
    fake.addNode('node-a');
  });
  after(async () => {
    await cp?.stop();
    await fake?.stop();
  });

  const both = async (method: string, urlPath: string, body?: unknown): Promise<[Answer, Answer]> =>
    [await cp.request(method, urlPath, body), await standIn(fake, method, urlPath, body)];

  test('Events about a Node: only in "default"; the namespace in the body must match the path', async () => {
    const event = (namespace: string) => {
      const e = eventObject({ reason: REASON_RECOMMENDATION, type: 'Warning', ruleId: 'r', message: 'm' }, { name: 'node-a', uid: 'u' }, new Date(), Math.random().toString(16).slice(2));
      return { ...e, metadata: { ...e.metadata, namespace } };
    };
    const [realElsewhere, fakeElsewhere] = await both('POST', '/api/v1/namespaces/kube-public/events', event('kube-public'));
    assert.equal(realElsewhere.status, 422);
    assert.deepEqual([fakeElsewhere.status, fakeElsewhere.body.message], [realElsewhere.status, realElsewhere.body.message]);
    const [realMismatch, fakeMismatch] = await both('POST', '/api/v1/namespaces/kube-public/events', event('default'));
    assert.equal(realMismatch.status, 400);
    assert.deepEqual([fakeMismatch.status, fakeMismatch.body.message], [realMismatch.status, realMismatch.body.message]);
    const [realOk, fakeOk] = await both('POST', '/api/v1/namespaces/default/events', event('default'));
    assert.deepEqual([realOk.status, fakeOk.status], [201, 201]);
  });

  test('a CSIDriver created without attachRequired comes back with attachRequired: true', async () => {
    await cp.must('POST', '/apis/storage.k8s.io/v1/csidrivers', { apiVersion: 'storage.k8s.io/v1', kind: 'CSIDriver', metadata: { name: 'x.example.com' }, spec: {} });
    fake.csiDrivers.upsert({ metadata: { name: 'x.example.com' }, spec: {} });
    const [real, stand] = await both('GET', '/apis/storage.k8s.io/v1/csidrivers');
    assert.deepEqual([real.body.items[0].spec.attachRequired, stand.body.items[0].spec.attachRequired], [true, true]);
  });

  test('after a kube-apiserver restart a re-watch from before it is answered 410 Expired, without any compaction', async () => {
    const realRv = (await cp.must('GET', '/api/v1/nodes')).metadata.resourceVersion;
    const fakeRv = (await standIn(fake, 'GET', '/api/v1/nodes')).body.metadata.resourceVersion;
    await cp.must('PATCH', '/api/v1/nodes/node-a', { metadata: { labels: { x: '1' } } }, { contentType: 'application/merge-patch+json' });
    fake.editNode('node-a', (n) => { n.metadata.labels.x = '1'; });
    await cp.restartApiserver();
    fake.restartWatchCache();
    const expired = (text: unknown) => /"type":"ERROR".*"code":410/.test(typeof text === 'string' ? text : JSON.stringify(text));
    const real = await cp.request('GET', `/api/v1/nodes?watch=true&resourceVersion=${realRv}&timeoutSeconds=1`);
    const stand = await standIn(fake, 'GET', `/api/v1/nodes?watch=true&resourceVersion=${fakeRv}&timeoutSeconds=1`);
    assert.deepEqual([real.status, expired(real.body)], [200, true], JSON.stringify(real.body));
    assert.deepEqual([stand.status, expired(stand.body)], [200, true], JSON.stringify(stand.body));
  });
});
