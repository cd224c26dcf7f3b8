// The harness itself, on the real control plane: it starts, serves, mints node-bound tokens the
// way a DaemonSet pod gets them, survives an apiserver restart, and compaction is visible as 410.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ControlPlane, realServerTier } from '../helpers/control-plane.ts';
import { createBoundPod, createReadyNode, ensureNamespace, ensureServiceAccount, podBoundToken, whoAmI } from '../helpers/kube-objects.ts';

describe('real control plane harness', realServerTier(), () => {
  let cp: ControlPlane;
  before(async () => { cp = await ControlPlane.start(); });
  after(async () => { await cp?.stop(); });

  test('serves /readyz and reports v1.36', async () => {
    assert.equal((await cp.request('GET', '/readyz')).body, 'ok');
    const version = await cp.must('GET', '/version');
    assert.match(version.gitVersion, /^v1\.36\./);
  });

  test('a token bound to a Pod on a node carries that node in its node-name claim', async () => {
    await createReadyNode(cp, 'harness-node-a');
    await ensureNamespace(cp, 'harness');
    await ensureServiceAccount(cp, 'harness', 'agent');
    const pod = await createBoundPod(cp, 'harness', 'agent-pod', 'harness-node-a', 'agent');
    const token = await podBoundToken(cp, 'harness', 'agent', pod);
    const me = await whoAmI(cp, token);
    assert.equal(me.username, 'system:serviceaccount:harness:agent');
    assert.deepEqual(me.extra['authentication.kubernetes.io/node-name'], ['harness-node-a']);
  });

  test('a watch from a compacted resourceVersion is answered 410 Gone', async () => {
    const list = await cp.must('GET', '/api/v1/namespaces');
    const oldRv = list.metadata.resourceVersion;
    for (let i = 0; i < 3; i++) await ensureNamespace(cp, `harness-compact-${i}`);
    await cp.compact();
    // The watch cache keeps a window of recent events; a restart drops it and re-reads from etcd.
    await cp.restartApiserver();
    const res = await cp.request('GET', `/api/v1/namespaces?watch=1&resourceVersion=${oldRv}&timeoutSeconds=1`);
    // A watch answers 200 and then streams an ERROR event whose Status says 410 Expired.
    const text = typeof res.body === 'string' ? res.body : JSON.stringify(res.body);
    assert.equal(res.status, 200);
    assert.match(text, /"type":"ERROR".*"reason":"Expired","code":410/);
  });
});
