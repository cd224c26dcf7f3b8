// The Kubernetes client on the real control plane: every verb, paginated and metadata-only lists,
// selectors, watches and their 410, errors that name the verb and the resource, and each way of
// authenticating (static token, client certificate, exec plugin with a re-run after 401, the pod's
// service-account files with the projected token rotated on disk).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmod, mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ControlPlane, realServerTier } from '../helpers/control-plane.ts';
import { createBoundPod, createReadyNode, ensureNamespace, ensureServiceAccount, podBoundToken } from '../helpers/kube-objects.ts';
import { TokenBucket } from '../../src/kube/backoff.ts';
import { KubeClient } from '../../src/kube/client.ts';
import { SERVICE_ACCOUNT_DIR } from '../../src/kube/config.ts';
import { ContinueExpired, KubeError } from '../../src/kube/errors.ts';
import type { KubeObject, WatchEvent } from '../../src/kube/objects.ts';
import { CONFIGMAPS, NAMESPACES, NODES, PODS, resource } from '../../src/kube/resources.ts';

const SELF_SUBJECT_REVIEWS = resource('authentication.k8s.io', 'v1', 'selfsubjectreviews', 'SelfSubjectReview', false);
const EXEC_TOKEN = randomBytes(24).toString('hex');

async function whoIs(client: KubeClient): Promise<{ username: string; extra: Record<string, string[]> }> {
  const review = await client.create<KubeObject>(SELF_SUBJECT_REVIEWS, { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' });
  return { username: review.status.userInfo.username, extra: review.status.userInfo.extra ?? {} };
}

function configMap(name: string, labels: Record<string, string> = {}): KubeObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels }, data: { payload: 'x'.repeat(2000) } };
}

describe('Kubernetes client on the real control plane', realServerTier(), () => {
  let cp: ControlPlane;
  let dir: string;
  let admin: KubeClient;
  before(async () => {
    cp = await ControlPlane.start({ extraTokens: [{ token: EXEC_TOKEN, user: 'exec-user', groups: ['system:masters'] }] });
    dir = await mkdtemp(path.join(tmpdir(), 'nta-kube-client-'));
    admin = KubeClient.fromKubeconfig(cp.kubeconfig, { limiter: new TokenBucket(200, 200) });
  });
  after(async () => {
    await admin?.stop();
    await cp?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  test('create, get, merge patch, selectors, delete: plain objects; a 404 names the verb and the object', async () => {
    await admin.create(NAMESPACES, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'crud' } });
    for (const [name, tier] of [['a', 'web'], ['b', 'web'], ['c', 'db']] as const) {
      await admin.create(CONFIGMAPS, configMap(name, { tier }), { namespace: 'crud' });
    }
    const web = await admin.list(CONFIGMAPS, { namespace: 'crud', labelSelector: 'tier=web' });
    assert.deepEqual(web.items.map((c) => c.metadata.name).sort(), ['a', 'b']);
    assert.match(web.resourceVersion, /^\d+$/);
    const named = await admin.list(CONFIGMAPS, { namespace: 'crud', fieldSelector: 'metadata.name=c' });
    assert.deepEqual(named.items.map((c) => c.metadata.labels), [{ tier: 'db' }]);
    const patched = await admin.patch(CONFIGMAPS, 'a', { metadata: { annotations: { note: 'one' } }, data: { payload: null } }, { namespace: 'crud' });
    assert.equal(patched.metadata.annotations?.note, 'one');
    assert.equal(patched.data, undefined, 'a merge patch with null removes the key');
    assert.equal(Object.getPrototypeOf(patched), Object.prototype, 'plain JSON, no model class');
    const got = await admin.get(CONFIGMAPS, 'a', { namespace: 'crud' });
    assert.equal(got.metadata.resourceVersion, patched.metadata.resourceVersion);
    await admin.delete(CONFIGMAPS, 'a', { namespace: 'crud' });
    const missing = await admin.get(CONFIGMAPS, 'a', { namespace: 'crud' }).catch((e: unknown) => e);
    assert.ok(missing instanceof KubeError && missing.notFound);
    assert.equal(missing.message, 'cannot get configmaps "a" in namespace crud: HTTP 404: configmaps "a" not found');
  });

  test('paginated list: pages handed over one by one; metadata-only items are smaller; requests and bytes counted', async () => {
    await admin.create(NAMESPACES, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'paged' } });
    for (let i = 0; i < 25; i++) await admin.create(CONFIGMAPS, configMap(`cm-${String(i).padStart(2, '0')}`), { namespace: 'paged' });
    const counted: { verb: string; bytes: number }[] = [];
    const client = KubeClient.fromKubeconfig(cp.kubeconfig, { onRequest: (r) => counted.push(r), limiter: new TokenBucket(200, 200) });
    try {
      const sizes: number[] = [];
      const full = await client.listPages(CONFIGMAPS, { namespace: 'paged', limit: 10 }, (page) => { sizes.push(page.items.length); });
      assert.deepEqual(sizes, [10, 10, 5]);
      assert.deepEqual({ pages: full.pages, items: full.items }, { pages: 3, items: 25 });
      const fullBytes = counted.reduce((sum, r) => sum + r.bytes, 0);
      counted.length = 0;
      const meta = await client.list(CONFIGMAPS, { namespace: 'paged', limit: 10, metadataOnly: true });
      assert.equal(meta.items.length, 25);
      assert.equal(meta.items[0]?.kind, 'PartialObjectMetadata');
      assert.equal(meta.items[0]?.data, undefined, 'no data in a metadata-only item');
      const metaBytes = counted.reduce((sum, r) => sum + r.bytes, 0);
      assert.ok(metaBytes * 5 < fullBytes, `metadata only: ${metaBytes} bytes vs ${fullBytes}`);
      assert.deepEqual(counted.map((r) => r.verb), ['list', 'list', 'list']);
      assert.equal(client.stats.requests, 6);
      assert.equal(client.stats.bytesReceived, fullBytes + metaBytes);
    } finally {
      await client.stop();
    }
  });

  test('watch: ADDED, MODIFIED, DELETED in order from a resourceVersion; the server ends it at timeoutSeconds', async () => {
    await admin.create(NAMESPACES, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'watched' } });
    const from = (await admin.list(CONFIGMAPS, { namespace: 'watched' })).resourceVersion;
    await admin.create(CONFIGMAPS, configMap('w'), { namespace: 'watched' });
    await admin.patch(CONFIGMAPS, 'w', { data: { more: 'y' } }, { namespace: 'watched' });
    await admin.delete(CONFIGMAPS, 'w', { namespace: 'watched' });
    const events: WatchEvent[] = [];
    const end = await admin.watch(CONFIGMAPS, { namespace: 'watched', resourceVersion: from, timeoutSeconds: 1 }, (e) => { events.push(e); });
    const changes = events.filter((e) => e.type !== 'BOOKMARK');
    assert.deepEqual(changes.map((e) => `${e.type} ${e.object.metadata.name}`), ['ADDED w', 'MODIFIED w', 'DELETED w']);
    assert.equal(end.resourceVersion, events.at(-1)?.object.metadata.resourceVersion);
  });

  test('pods in a namespace: create, watch from the list, delete at once; the namespace deleted', async () => {
    await createReadyNode(cp, 'measure-node');
    await admin.create(NAMESPACES, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'measure' } });
    await ensureServiceAccount(cp, 'measure', 'default');
    const from = (await admin.list(PODS, { namespace: 'measure' })).resourceVersion;
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'probe-1' }, spec: { nodeName: 'measure-node', containers: [{ name: 'c', image: 'example.invalid/pause:1' }] } };
    const created = await admin.create(PODS, pod, { namespace: 'measure' });
    assert.equal(created.metadata.namespace, 'measure');
    await admin.delete(PODS, 'probe-1', { namespace: 'measure', gracePeriodSeconds: 0 });
    const seen: string[] = [];
    await admin.watch(PODS, { namespace: 'measure', resourceVersion: from, timeoutSeconds: 1 }, (e) => { if (e.type !== 'BOOKMARK') seen.push(`${e.type} ${e.object.metadata.name}`); });
    assert.deepEqual(seen.filter((e) => !e.startsWith('MODIFIED')), ['ADDED probe-1', 'DELETED probe-1']);
    assert.equal((await admin.get(NODES, 'measure-node')).status.nodeInfo.kubeletVersion, 'v1.36.2');
    await admin.delete(NAMESPACES, 'measure');
    assert.equal((await admin.get(NAMESPACES, 'measure')).status.phase, 'Terminating', 'no controller manager here to finish it');
  });

  test('/version, deletecollection by label, and the moment a create left (before its answer)', async () => {
    assert.equal((await admin.serverVersion()).gitVersion, 'v1.36.2');
    await admin.create(NAMESPACES, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'collection' } });
    for (const [name, tier] of [['a', 'web'], ['b', 'web'], ['c', 'db']] as const) {
      let written: number | undefined;
      const sent = performance.now();
      await admin.create(CONFIGMAPS, configMap(name, { tier }), { namespace: 'collection', onWritten: () => { written = performance.now(); } });
      const answered = performance.now();
      assert.ok(written !== undefined && written >= sent && written <= answered, 'written after it was asked for, before the answer');
    }
    await admin.deleteCollection(CONFIGMAPS, { namespace: 'collection', labelSelector: 'tier=web' });
    assert.deepEqual((await admin.list(CONFIGMAPS, { namespace: 'collection', labelSelector: 'tier' })).items.map((c) => c.metadata.name), ['c']);
    await assert.rejects(admin.deleteCollection(CONFIGMAPS, { namespace: '../x' }), /cannot deletecollection configmaps in namespace \.\.\/x: .*not a valid Kubernetes name/);
  });

  test('forbidden: the error says which verb on which resource, with the server\'s reason', async () => {
    await ensureNamespace(cp, 'nobody');
    await ensureServiceAccount(cp, 'nobody', 'plain');
    const review = await cp.must('POST', '/api/v1/namespaces/nobody/serviceaccounts/plain/token', { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: {} });
    const client = KubeClient.fromKubeconfig(await cp.writeKubeconfig(path.join(dir, 'plain.kubeconfig'), 'plain', review.status.token));
    try {
      const list = await client.list(PODS, { namespace: 'kube-system' }).catch((e: unknown) => e);
      assert.ok(list instanceof KubeError && list.forbidden);
      assert.match(list.message, /^cannot list pods in namespace kube-system: HTTP 403: pods is forbidden: User "system:serviceaccount:nobody:plain" cannot list resource "pods"/);
      const create = await client.create(NAMESPACES, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'x' } }).catch((e: unknown) => e);
      assert.match(String((create as Error).message), /^cannot create namespaces: HTTP 403: .*cannot create resource "namespaces"/);
      const node = await client.get(NODES, 'n1').catch((e: unknown) => e);
      assert.match(String((node as Error).message), /^cannot get nodes "n1": HTTP 403/);
    } finally {
      await client.stop();
    }
  });

  test('client certificate from the kubeconfig', async () => {
    const { cert, key } = await cp.clientCert('cert-user', 'system:masters');
    const file = await cp.writeKubeconfigWith(path.join(dir, 'cert.kubeconfig'), 'cert-user', {
      'client-certificate-data': Buffer.from(cert).toString('base64'), 'client-key-data': Buffer.from(key).toString('base64'),
    });
    const client = KubeClient.fromKubeconfig(file);
    try {
      assert.equal((await whoIs(client)).username, 'cert-user');
      assert.ok((await client.list(NAMESPACES)).items.length > 0);
    } finally {
      await client.stop();
    }
  });

  test('exec plugin: its credential is used; after a 401 the plugin runs again and the request is retried once', async () => {
    const runs = path.join(dir, 'exec-runs');
    const plugin = path.join(dir, 'credential-plugin.sh');
    // First run hands out a token the server rejects; later runs the right one (a rotated credential).
    await writeFile(plugin, [
      '#!/bin/sh',
      `echo run >> '${runs}'`,
      `if [ "$(wc -l < '${runs}')" -eq 1 ]; then token=expired-token; else token=${EXEC_TOKEN}; fi`,
      'printf \'{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"%s"}}\' "$token"',
      '',
    ].join('\n'));
    await chmod(plugin, 0o755);
    const file = await cp.writeKubeconfigWith(path.join(dir, 'exec.kubeconfig'), 'exec', {
      exec: { apiVersion: 'client.authentication.k8s.io/v1', command: plugin, interactiveMode: 'Never' },
    });
    const statuses: string[] = [];
    const client = KubeClient.fromKubeconfig(file, { onRequest: (r) => statuses.push(r.code) });
    try {
      assert.equal((await whoIs(client)).username, 'exec-user');
      assert.deepEqual(statuses, ['401', '201']);
      assert.equal((await readFile(runs, 'utf8')).trim().split('\n').length, 2);
      await whoIs(client);
      assert.equal((await readFile(runs, 'utf8')).trim().split('\n').length, 2, 'the credential is cached between requests');
    } finally {
      await client.stop();
    }
  });

  test('in-cluster: the service account files and env; a rotated token file is used from the next request on', async () => {
    await createReadyNode(cp, 'incluster-node');
    await ensureNamespace(cp, 'agents');
    await ensureServiceAccount(cp, 'agents', 'agent');
    const podA = await createBoundPod(cp, 'agents', 'agent-a', 'incluster-node', 'agent');
    const podB = await createBoundPod(cp, 'agents', 'agent-b', 'incluster-node', 'agent');
    const root = path.join(dir, 'pod-root');
    const sa = path.join(root, SERVICE_ACCOUNT_DIR);
    await mkdir(sa, { recursive: true });
    await writeFile(path.join(sa, 'ca.crt'), cp.caPem);
    await writeFile(path.join(sa, 'namespace'), 'agents');
    await writeFile(path.join(sa, 'token'), await podBoundToken(cp, 'agents', 'agent', podA));
    const url = new URL(cp.url);
    const client = KubeClient.fromKubeconfig(undefined, {}, { KUBERNETES_SERVICE_HOST: url.hostname, KUBERNETES_SERVICE_PORT: url.port });
    // fromKubeconfig reads the files under /; the test's pod root stands in for it:
    const rooted = KubeClient.fromSource({ kind: 'in-cluster', root, host: url.hostname, port: url.port });
    try {
      assert.equal(client.server.href, `https://127.0.0.1:${url.port}/`);
      const first = await whoIs(rooted);
      assert.equal(first.username, 'system:serviceaccount:agents:agent');
      assert.deepEqual(first.extra['authentication.kubernetes.io/pod-name'], ['agent-a']);
      // The kubelet rotates the projected token by swapping the file (atomically, as here).
      const next = path.join(sa, '..token.new');
      await writeFile(next, await podBoundToken(cp, 'agents', 'agent', podB));
      await rename(next, path.join(sa, 'token'));
      assert.deepEqual((await whoIs(rooted)).extra['authentication.kubernetes.io/pod-name'], ['agent-b']);
    } finally {
      await client.stop();
      await rooted.stop();
    }
  });

  // Last: it restarts the API server (its watch cache would otherwise keep serving the old versions).
  test('a continue token or a watch from a compacted version: 410, the list one as ContinueExpired', async () => {
    await admin.create(NAMESPACES, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'expiry' } });
    for (let i = 0; i < 4; i++) await admin.create(CONFIGMAPS, configMap(`e-${i}`), { namespace: 'expiry' });
    const oldVersion = (await admin.list(CONFIGMAPS, { namespace: 'expiry' })).resourceVersion;
    let pages = 0;
    const paging = admin.listPages(CONFIGMAPS, { namespace: 'expiry', limit: 2 }, async () => {
      pages += 1;
      if (pages > 1) return;
      for (let i = 4; i < 8; i++) await admin.create(CONFIGMAPS, configMap(`e-${i}`), { namespace: 'expiry' });
      await cp.compact();
      await cp.restartApiserver();
    });
    const error = await paging.catch((e: unknown) => e);
    assert.ok(error instanceof ContinueExpired, String(error));
    assert.equal(error.status, 410);
    assert.match(error.message, /^cannot list configmaps in namespace expiry: HTTP 410: continue token expired, list again from the start \(The provided continue parameter is too old/);
    const watch = await admin.watch(CONFIGMAPS, { namespace: 'expiry', resourceVersion: oldVersion, timeoutSeconds: 5 }, () => {}).catch((e: unknown) => e);
    assert.ok(watch instanceof KubeError && watch.expired, String(watch));
    assert.match(watch.message, /^cannot watch configmaps in namespace expiry: HTTP 410/);
  });
});
