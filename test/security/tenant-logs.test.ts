// Issue 17 item 10: a tenant pod that prints a client-go throttling line with delay="99s" must not
// make client-throttling-long-waits (critical) fail on the node, and no log line — with the Bearer
// token planted in it — may be copied into facts, findings or annotations. Judged: the kubelet and the
// control plane's static pods; other pods counted apart as information. Output keeps the time, the
// delay, the verb and the path, without query string or token-like segments.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runScan } from '../../src/scan.ts';
import { renderAnnotations } from '../../src/wire/annotations.ts';
import { throttledRequest } from '../../src/collectors/throttle-lines.ts';
import { tempHost } from '../helpers/fixtures.ts';
import { fixtureHost } from '../helpers/fixtures.ts';
import { cp } from 'node:fs/promises';

const TOKEN = 'eyJhbGciOiJSUzI1NiIsImtpZCI6Ik5UQSJ9.eyJzdWIiOiJzeXN0ZW06c2VydmljZWFjY291bnQifQ.c2lnbmF0dXJl';
const QUERY_SECRET = 's3cr3t-in-query';

const tenantLine = `2026-11-30T13:40:00.000000000Z stderr F I1130 13:40:00.000000       1 request.go:752] "Waited before sending request" delay="99s" reason="client-side throttling, not priority and fairness" verb="GET" URL="https://10.0.0.10:6443/api/v1/namespaces/tenant-a/secrets/${TOKEN}?access_token=${QUERY_SECRET}" Authorization="Bearer ${TOKEN}"\n`;
const kubeletLine = `Nov 30 13:45:00 cp1 kubelet[812]: I1130 13:45:00.000000     812 request.go:697] Waited for 120ms due to client-side throttling, not priority and fairness, request: GET:https://10.0.0.10:6443/api/v1/pods?fieldSelector=spec.nodeName%3Dcp1&token=${QUERY_SECRET}\n`;

async function tenantNode(t: Parameters<typeof tempHost>[0]): Promise<string> {
  const root = await tempHost(t, {
    // A tenant's pod (namespace tenant-a, UID a UUID as the API server assigns them).
    'var/log/pods/tenant-a_evil-7d9f8c6b5-x2x2x_1b2c3d4e-5f60-4a7b-8c9d-0e1f2a3b4c5d/app/0.log': tenantLine,
    // A pod named like the scheduler but created through the API (UUID): not the static pod.
    'var/log/pods/kube-system_kube-scheduler-fake_9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d/app/0.log': tenantLine,
    'var/log/syslog': kubeletLine,
  });
  // A kubelet to judge (kubeadm 1.30 host files: unit, config, package).
  await cp(fixtureHost('kubeadm-1.30'), root, { recursive: true, force: false, errorOnExist: false });
  return root;
}

test('a tenant\'s 99 s throttling line is information only: client-throttling-long-waits stays passing', async (t) => {
  const root = await tenantNode(t);
  const report = await runScan({ hostRoot: root, nodeName: 'cp1', only: ['client-throttling-long-waits', 'client-throttling'] });
  const status = Object.fromEntries(report.findings.map((f) => [f.ruleId, f.status]));
  assert.equal(status['client-throttling-long-waits'], 'pass', JSON.stringify(report.facts['throttling.total.maxWaitMs']));
  assert.equal(status['client-throttling'], 'fail', 'the kubelet\'s own 120 ms wait still counts');
  assert.equal(report.facts['throttling.total.maxWaitMs']?.value, 120);
  assert.equal(report.facts['throttling.otherPods.maxWaitMs']?.value, 99_000);
  assert.equal(report.facts['throttling.otherPods.count']?.value, 2);
  assert.equal(report.facts['throttling.scheduler.count']?.value, null, 'no static scheduler pod on this node');
});

test('no raw log line, token or query string reaches facts, findings or annotations', async (t) => {
  const root = await tenantNode(t);
  const report = await runScan({ hostRoot: root, nodeName: 'cp1' });
  for (const [what, text] of [['report', JSON.stringify(report)], ['annotations', JSON.stringify(renderAnnotations(report))]] as const) {
    for (const secret of [TOKEN, TOKEN.slice(0, 20), QUERY_SECRET, 'Bearer', 'Authorization', 'request.go']) {
      assert.ok(!text.includes(secret), `${what} contains "${secret}"`);
    }
  }
  assert.match(report.facts['throttling.otherPods.maxWaitMs']?.detail ?? '', /longest: 2026-11-30T13:40:00\.000Z waited 99000 ms before GET \/api\/v1\/namespaces\/tenant-a\/secrets\/<redacted>;/);
  assert.match(report.facts['throttling.kubelet.maxWaitMs']?.detail ?? '', /longest: \d{4}-11-30T13:45:00\.000Z waited 120 ms before GET \/api\/v1\/pods(;|$)/);
});

test('request summaries: verb and path only, token-like segments redacted', () => {
  const api = 'https://10.0.0.10:6443';
  assert.deepEqual(throttledRequest(`request: PUT:${api}/api/v1/namespaces/kube-system/pods/kube-proxy-x2x/status?timeout=10s`), { verb: 'PUT', path: '/api/v1/namespaces/kube-system/pods/kube-proxy-x2x/status' });
  assert.deepEqual(throttledRequest(`verb="GET" URL="${api}/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/cp1"`), { verb: 'GET', path: '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/cp1' });
  assert.deepEqual(throttledRequest(`request: GET:${api}/api/v1/secrets/AbCdEfGhIjKlMnOpQrStUv`), { verb: 'GET', path: '/api/v1/secrets/<redacted>' });
  assert.deepEqual(throttledRequest(`request: GET:${api}/x/0123456789abcdef0123456789abcdef`), { verb: 'GET', path: '/x/<redacted>' });
  assert.deepEqual(throttledRequest(`request: GET:${api}/x/%2e%2e%1b[31m`), { verb: 'GET', path: '/x/<redacted>' });
  assert.deepEqual(throttledRequest('request: SMUGGLE:not a url'), { verb: null, path: null });
  assert.deepEqual(throttledRequest('no request at all'), { verb: null, path: null });
});
