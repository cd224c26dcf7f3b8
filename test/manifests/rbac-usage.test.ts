// RBAC from use: the agent runs against the apiserver stand-in (first publish with Events, a
// change, a resolved rule), its requests are mapped to (resource, verb, namespace), and the
// ClusterRole and Roles must grant exactly those plus the grants listed here as planned - each of
// which must still be unused. (test/e2e/agent.test.ts runs it on a real server with these very
// grants and counts every response >= 400.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { FakeApiServer, type RecordedRequest } from '../helpers/fake-apiserver.ts';
import { runAgent } from '../helpers/agent-harness.ts';
import { finding, seedReport } from '../helpers/reports.ts';
import { REPO } from '../helpers/manifests.ts';

/** Granted ahead of (or beside) the code that uses them: "resource verb" → why. */
const PLANNED: Record<string, string> = {
  'csidrivers get': 'issue 6 grants get/list/watch; the agent list-watches', 'csinodes get': 'issue 6 grants get/list/watch; the agent list-watches',
};

/**
 * Used at the kubelet, not at the API server (the kubelet asks the API server a SubjectAccessReview
 * in the agent's name): test/agent/kubelet-https.test.ts shows HTTP 200 with it and 403 without it.
 */
const AT_KUBELET: Record<string, string> = {
  'nodes/metrics get': "the kubelet's /metrics (start-up histograms)", 'nodes/configz get': "the kubelet's /configz (its running configuration; test/e2e/kubelet-running-config.test.ts)",
};

/** "resource verb" for a cluster-wide request, "resource verb in NAMESPACE" for a namespaced one. */
function grant(req: RecordedRequest): string {
  // /api/v1/… (core) or /apis/<group>/<version>/…: the resource path starts after the version.
  let parts = req.path.split('/').filter(Boolean).slice(req.path.startsWith('/apis/') ? 3 : 2);
  const namespace = parts[0] === 'namespaces' && parts.length > 2 ? parts[1] : undefined;
  if (namespace !== undefined) parts = parts.slice(2);
  const named = parts.length % 2 === 0 ? parts.at(-1) : undefined;
  const resource = (named === undefined ? parts.at(-1) : parts.at(-2)) as string;
  const verb = req.method === 'GET' ? (req.query.get('watch') === 'true' || req.query.get('watch') === '1' ? 'watch' : named ? 'get' : 'list')
    : ({ POST: 'create', PATCH: 'patch', PUT: 'update', DELETE: 'delete' } as Record<string, string>)[req.method] ?? req.method;
  return `${resource} ${verb}${namespace === undefined ? '' : ` in ${namespace}`}`;
}

type Rule = { resources: string[]; verbs: string[] };
const grants = (rules: Rule[], suffix = ''): string[] => rules.flatMap((r) => r.resources.flatMap((res) => r.verbs.map((v) => `${res} ${v}${suffix}`)));

test('the ClusterRole grants what the agent uses, plus only the planned grants, which are still unused', async (t) => {
  const server = new FakeApiServer();
  await server.start();
  t.after(() => server.stop());
  server.addNode('worker-1', {});
  const reportFor = (scan: number) => {
    const r = seedReport();
    if (scan >= 3) r.findings = r.findings.map((f) => (f.ruleId === 'kernel-tick-rate' ? finding(f.ruleId, 'pass') : f));
    return r;
  };
  // A heartbeat period shorter than the run: its GET at start, its create, then renewals.
  assert.equal(await runAgent(server.writeKubeconfig(), reportFor, { stopAfterScans: 5, heartbeat: { periodMs: 50, namespace: 'node-tuning-advisor' } }).result, 0);
  const used = new Set(server.requests.map(grant));
  assert.ok(used.has('nodes patch') && used.has('events create in default'), `the run published: ${[...used].join(', ')}`);
  assert.ok(['get', 'create', 'patch'].every((verb) => used.has(`leases ${verb} in node-tuning-advisor`)), `the heartbeat ran: ${[...used].join(', ')}`);

  const docs = parseAllDocuments(await readFile(path.join(REPO, 'manifests/base/rbac.yaml'), 'utf8')).map((d) => d.toJS());
  // A ClusterRole grants in every namespace; a Role only in its own (the agent's Events: "default").
  const clusterWide = grants(docs.find((d) => d.kind === 'ClusterRole').rules);
  const namespaced = docs.filter((d) => d.kind === 'Role').flatMap((r) => grants(r.rules, ` in ${r.metadata.namespace}`));
  const isGranted = (use: string) => namespaced.includes(use) || clusterWide.includes(use.replace(/ in \S+$/, ''));
  assert.deepEqual([...used].filter((g) => !isGranted(g)), [], 'used but not granted: the agent would get 403');
  assert.deepEqual([...used].filter((g) => g in PLANNED), [], 'used now: delete from PLANNED');
  assert.deepEqual([...used].filter((g) => g in AT_KUBELET), [], 'the API server is never asked for what the kubelet authorizes');
  const unused = [...clusterWide, ...namespaced].filter((g) => !used.has(g) && !(g in PLANNED) && !(g in AT_KUBELET));
  assert.deepEqual(unused.sort(), [], 'granted but neither used nor planned');
  // RBAC cannot hold the token to its node (docs/security.md): the agent's own selectors are what
  // keep it to its node's objects. Every list and watch of a per-node kind names the node.
  const nodeScoped = server.requests.filter((r) => r.method === 'GET' && /^\/api\/v1\/(nodes|pods)$|\/csinodes$/.test(r.path));
  assert.ok(nodeScoped.length > 0);
  assert.deepEqual(nodeScoped.filter((r) => !['metadata.name=worker-1', 'spec.nodeName=worker-1'].includes(r.query.get('fieldSelector') ?? '')).map((r) => `${r.path}?${r.query}`), [],
    'a list or watch of Nodes, pods or CSINodes without a field selector on this node');
});
