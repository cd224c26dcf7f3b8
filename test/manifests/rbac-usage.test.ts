// RBAC from use: the agent runs against the apiserver stand-in (first publish with Events, a
// change, a resolved rule), its requests are mapped to (resource, verb), and the ClusterRole must
// grant exactly those plus the grants listed here as planned - each of which must still be unused.
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

function grant(req: RecordedRequest): string {
  // /api/v1/… (core) or /apis/<group>/<version>/…: the resource path starts after the version.
  const parts = req.path.split('/').filter(Boolean).slice(req.path.startsWith('/apis/') ? 3 : 2);
  const named = parts.length % 2 === 0 ? parts.at(-1) : undefined;
  const resource = (named === undefined ? parts.at(-1) : parts.at(-2)) as string;
  const verb = req.method === 'GET' ? (req.query.get('watch') === 'true' || req.query.get('watch') === '1' ? 'watch' : named ? 'get' : 'list')
    : ({ POST: 'create', PATCH: 'patch', PUT: 'update', DELETE: 'delete' } as Record<string, string>)[req.method] ?? req.method;
  return `${resource} ${verb}`;
}

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
  assert.equal(await runAgent(server.writeKubeconfig(), reportFor, { stopAfterScans: 5 }).result, 0);
  const used = new Set(server.requests.map(grant));
  assert.ok(used.has('nodes patch') && used.has('events create'), `the run published: ${[...used].join(', ')}`);

  const docs = parseAllDocuments(await readFile(path.join(REPO, 'manifests/base/rbac.yaml'), 'utf8')).map((d) => d.toJS());
  const role = docs.find((d) => d.kind === 'ClusterRole');
  const granted = new Set<string>(role.rules.flatMap((r: { resources: string[]; verbs: string[] }) => r.resources.flatMap((res) => r.verbs.map((v) => `${res} ${v}`))));
  assert.deepEqual([...used].filter((g) => !granted.has(g)), [], 'used but not granted: the agent would get 403');
  assert.deepEqual([...used].filter((g) => g in PLANNED), [], 'used now: delete from PLANNED');
  assert.deepEqual([...granted].filter((g) => !used.has(g) && !(g in PLANNED)).sort(), [], 'granted but neither used nor planned');
});
