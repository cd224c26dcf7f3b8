// The agent as the DaemonSet runs it, on a real kube-apiserver: the bundle, the container's args and
// env and rules ConfigMap as the server holds them after `kubectl apply`, the ServiceAccount's token
// bound to a Pod on node A, a fixture host tree as the host. Everything it did is read from the
// server's audit log and objects, never from the agent: one PATCH and one Event per failing rule,
// nothing on a restart, one PATCH to repair a hand edit, nothing when the API server goes away (until
// every watch has failed) or forgets its history (410 Gone), and the server refusing what the agent
// must not do. "Nothing more" is checked over the agent's next cycle (its log line after each cycle's
// writes), not over a fixed sleep.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseAnnotations, REPORT_KEY } from '../../src/wire/annotations.ts';
import { CRITICAL_FAILING_LABEL, GRADE_LABEL } from '../../src/wire/node-labels.ts';
import { auditArgs, describeRequests, isWrite, type AuditLog } from '../helpers/audit.ts';
import { AgentProcess, buildApp, scrape } from '../helpers/bundled-agent.ts';
import { ControlPlane, realServerTier } from '../helpers/control-plane.ts';
import { createReadyNode, ensureNamespace } from '../helpers/kube-objects.ts';
import { BASE, REPO } from '../helpers/manifests.ts';
import {
  AGENT_FIELD_MANAGER, AGENT_USER, PREFIX, agentIdentity, applyKustomization, daemonSetRun, nodeEvents, ownAnnotations, type AgentIdentity, type LocalRun,
} from '../helpers/shipped.ts';

const A = 'agent-a';
const B = 'agent-b';
const HOST = path.join(REPO, 'test/fixtures/hosts/seed-000-before');
const INTERVAL_S = 2;
const FOREIGN = { label: ['topology.kubernetes.io/zone', 'z1'], annotation: ['example.com/owner', 'team-a'] } as const;
const LEASES = '/apis/coordination.k8s.io/v1/namespaces/node-tuning-advisor/leases';
const WATCHED = ['/api/v1/nodes', '/api/v1/pods', '/apis/storage.k8s.io/v1/csidrivers', '/apis/storage.k8s.io/v1/csinodes'];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until<T>(what: string, check: () => Promise<T | undefined | false>, timeoutMs: number, explain: () => Promise<string> | string = () => ''): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms\n${await explain()}`);
    await sleep(200);
  }
}

/** The merge patch an `agent --dry-run --once` prints: the JSON block after "dry-run: PATCH". */
function dryRunPatch(out: string): Record<string, string> | undefined {
  const lines = out.split('\n');
  const start = lines.findIndex((l) => l === '{');
  if (start < 0) return undefined;
  const end = lines.findIndex((l, i) => i > start && l === '}');
  return JSON.parse(lines.slice(start, end + 1).join('\n')).metadata.annotations;
}

describe('the bundled agent on a real kube-apiserver', realServerTier(), () => {
  let cp: ControlPlane;
  let audit: AuditLog;
  let tmp: string;
  let bundle: string;
  let identity: AgentIdentity;
  let run: LocalRun;
  let agent: AgentProcess | undefined;
  let expected: Record<string, string>;
  let failing: string[];
  let infoRules: Set<string>; // an info finding's Event is Normal, any other Warning

  /** The agent's requests but its start's admission check (dry runs, counted in the first-publish test). */
  const agentRequests = (since = 0) => audit.requests((r) => r.user === AGENT_USER && r.at >= since && r.query.get('dryRun') !== 'All');
  const admissionChecks = (since = 0) => audit.requests((r) => r.user === AGENT_USER && r.at >= since && r.query.get('dryRun') === 'All');
  const explain = (since = 0) => async () => `agent requests:\n${describeRequests(await agentRequests(since))}\nagent log:\n${agent?.log ?? ''}`;
  const startAgent = () => AgentProcess.start(bundle, run.args, run.env);

  before(async () => {
    tmp = await mkdtemp(path.join(tmpdir(), 'nta-agent-e2e-'));
    const auditing = await auditArgs(tmp, [AGENT_USER]);
    audit = auditing.log;
    [cp, bundle] = await Promise.all([ControlPlane.start({ apiserverArgs: auditing.args }), buildApp(path.join(tmp, 'app'))]);
    const applied = await applyKustomization(cp, BASE);
    assert.equal(applied.code, 0, applied.stderr);
    // The fixture host runs kubelet 1.20.2; its Node says so too (the agent reads the version from there).
    await createReadyNode(cp, A, {
      labels: { [FOREIGN.label[0]]: FOREIGN.label[1] }, annotations: { [FOREIGN.annotation[0]]: FOREIGN.annotation[1] }, kubeletVersion: 'v1.20.2',
    });
    await createReadyNode(cp, B);
    identity = await agentIdentity(cp, A, tmp);
    run = await daemonSetRun(cp, 'node-tuning-advisor', { node: A, hostRoot: HOST, rulesDir: path.join(tmp, 'rules'), kubeconfig: identity.kubeconfig });
    // The DaemonSet's 5 min interval, shortened so the test sees several cycles; the heartbeat (5 min)
    // lengthened so that its renewals (test/e2e/liveness.test.ts) fall outside the writes counted here.
    run.args = [...run.args.filter((a) => !a.startsWith('--interval=')), `--interval=${INTERVAL_S}s`, '--startup-jitter=1ms', '--heartbeat=1h'];
  });
  after(async () => {
    await agent?.stop();
    await cp?.stop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  test('--dry-run --once with the pod\'s token only reads, and says what it would write', async () => {
    const since = Date.now();
    const dry = AgentProcess.start(bundle, [...run.args, '--dry-run', '--once'], run.env);
    assert.equal(await dry.wait(), 0, dry.log);
    expected = dryRunPatch(dry.log) as Record<string, string>;
    assert.ok(expected && Object.keys(expected).every((k) => k.startsWith(PREFIX)), dry.log);
    // The same rules and host through `scan` (a separate process, no cluster): the rules failing there fail here.
    const scan = AgentProcess.start(bundle, ['scan', `--host-root=${HOST}`, '--no-bundled-rules', `--rules=${path.join(tmp, 'rules')}`, '--output=json', '--fail-on=never'], {});
    assert.equal(await scan.wait(), 0, scan.log);
    const failed = JSON.parse(scan.log).findings.filter((f: { status: string }) => f.status === 'fail') as { ruleId: string; severity: string }[];
    failing = failed.map((f) => f.ruleId);
    infoRules = new Set(failed.filter((f) => f.severity === 'info').map((f) => f.ruleId));
    assert.ok(infoRules.size > 0 && infoRules.size < failing.length, `the fixture fails info and other rules: ${failing}`);
    assert.ok(failing.length >= 3, `the fixture fails several rules: ${failing}`);
    const parsed = parseAnnotations(expected);
    assert.equal(parsed.state, 'ok');
    assert.deepEqual(parsed.state === 'ok' && parsed.report.rules.filter((r) => r.status === 'fail').map((r) => r.rule).sort(), [...failing].sort());
    assert.equal((dry.log.match(/^dry-run: Event Warning /gm) ?? []).length, failing.length - infoRules.size);
    assert.equal((dry.log.match(/^dry-run: Event Normal /gm) ?? []).length, infoRules.size);
    const requests = await agentRequests(since);
    assert.deepEqual(requests.filter(isWrite), [], 'a dry run writes nothing');
    assert.deepEqual(requests.filter((r) => r.code >= 400), []);
  });

  test('first publish: exactly one PATCH of its Node and one Event per failing rule, then its heartbeat Lease; every request granted', async () => {
    const since = Date.now();
    agent = startAgent();
    await until('the first publish and the heartbeat', async () => (await agentRequests(since)).filter((r) => r.verb === 'create').length >= failing.length + 1, 30_000, explain(since));
    await agent.waitForCycles(agent.cycles + 1); // a further cycle: nothing more may be sent
    const requests = await agentRequests(since);
    const writes = requests.filter(isWrite);
    assert.deepEqual(writes.map((r) => `${r.verb} ${r.path}`), [
      `patch /api/v1/nodes/${A}`, ...failing.map(() => 'create /api/v1/namespaces/default/events'),
      `create ${LEASES}`,
    ], describeRequests(requests));
    // The heartbeat's one GET at start finds no Lease yet (404): it creates it.
    assert.deepEqual(requests.filter((r) => r.code >= 400).map((r) => `${r.verb} ${r.path} ${r.code}`), [`get ${LEASES}/${A} 404`], 'every request the agent needs is granted');
    assert.equal(writes[0]?.code, 200);
    // Before that, its admission check: one dry run each policy must refuse, each refused by it (issue 37 item 1).
    assert.deepEqual((await admissionChecks(since)).map((r) => `${r.verb} ${r.path} ${r.code}`),
      [`patch /api/v1/nodes/${A} 422`, 'create /api/v1/namespaces/default/events 422', `create ${LEASES} 422`]);
    assert.deepEqual(await ownAnnotations(cp, A), expected, 'the Node carries what --dry-run said');
    const entries = ((await cp.must('GET', `/api/v1/nodes/${A}`)).metadata.managedFields as any[]).filter((m) => m.manager === AGENT_FIELD_MANAGER);
    assert.deepEqual(entries.map((m) => Object.keys(m.fieldsV1['f:metadata']).join()), ['f:annotations,f:labels'], 'its own managedFields entry, owning only annotations and labels');
    assert.deepEqual(Object.keys(entries[0].fieldsV1['f:metadata']['f:labels']).sort(), [`f:${CRITICAL_FAILING_LABEL}`, `f:${GRADE_LABEL}`], 'and of the labels only its two');

    const events = await nodeEvents(cp, A);
    assert.equal(events.length, failing.length);
    for (const rule of failing) {
      assert.equal(events.filter((e) => e.message.includes(rule)).length, 1, `one Event names ${rule}`);
    }
    const uid = (await cp.must('GET', `/api/v1/nodes/${A}`)).metadata.uid;
    for (const e of events) {
      const type = [...infoRules].some((rule) => e.message.includes(`${rule}:`)) ? 'Normal' : 'Warning';
      assert.deepEqual([e.type, e.reason, e.source.component, e.metadata.namespace, e.involvedObject.uid],
        [type, 'TuningRecommendation', 'node-tuning-advisor', 'default', uid]);
    }
  });

  test('kubectl describe node shows every advisor line whole, and the Events', async () => {
    const { stdout, code } = await cp.kubectl(['describe', 'node', A]);
    assert.equal(code, 0);
    const printed = stdout.split('\n');
    for (const [key, value] of Object.entries(expected)) {
      const lines = value.split('\n');
      for (const line of lines) {
        const shown = printed.map((p) => p.replace(/^Annotations:/, '').trim()).some((p) => p === line.trim() || p === `${key}: ${line}`);
        assert.ok(shown, `${key}: not shown whole: ${line}`);
      }
    }
    assert.deepEqual(printed.filter((p) => p.includes('node-tuning-advisor') && p.endsWith('...')), [], 'nothing cut by kubectl');
    const eventsAt = printed.findIndex((p) => p.startsWith('Events:'));
    const shownEvents = printed.slice(eventsAt).filter((p) => /(Warning|Normal)\s+TuningRecommendation\s+.*node-tuning-advisor/.test(p));
    assert.equal(shownEvents.length, failing.length, printed.slice(eventsAt).join('\n'));
  });

  test('a restart with nothing changed writes nothing (its heartbeat, renewed within the period, neither)', async () => {
    assert.equal(await agent?.stop(), 0, 'SIGTERM: exit 0');
    const since = Date.now();
    agent = startAgent();
    const metrics = await agent.metricsUrl();
    await until('ready', async () => (await scrape(metrics, '/readyz')).status === 200, 30_000, explain(since));
    await agent.waitForCycles(2); // its first cycle (which would write) and one more
    const requests = await agentRequests(since);
    assert.deepEqual(requests.filter(isWrite), [], describeRequests(requests));
    assert.deepEqual(requests.filter((r) => r.code >= 400), []);
    for (const resource of WATCHED) {
      assert.equal(requests.filter((r) => r.verb === 'list' && r.path === resource).length, 1, `one LIST of ${resource}`);
    }
  });

  test('a hand edit of one advisor annotation is repaired by one PATCH of that key; foreign ones are never touched', async () => {
    const key = `${PREFIX}findings`;
    const since = Date.now();
    const live = agent as AgentProcess;
    const cyclesBefore = live.cycles;
    const edit = await cp.kubectl(['annotate', 'node', A, '--overwrite', `${key}=edited by hand`, 'example.com/ticket=OPS-7']);
    assert.equal(edit.code, 0, edit.stderr);
    assert.equal((await cp.kubectl(['label', 'node', A, 'example.com/pool=batch'])).code, 0);
    await until('the repair', async () => (await ownAnnotations(cp, A))[key] === expected[key], 20_000, explain(since));
    // The cycle that sent the repair, then one more: nothing more may be sent.
    await until('a cycle after the repair', () => {
      const since = live.cycleLines().slice(cyclesBefore);
      const repaired = since.findIndex((l) => /PATCH yes/.test(l));
      return Promise.resolve(repaired >= 0 && since.length > repaired + 1);
    }, 60_000, explain(since));
    const writes = (await agentRequests(since)).filter(isWrite);
    assert.equal(writes.length, 1, describeRequests(writes));
    assert.deepEqual(writes[0]?.body, { metadata: { annotations: { [key]: expected[key] } } }, 'only the key that differs');
    const node = await cp.must('GET', `/api/v1/nodes/${A}`);
    assert.equal(node.metadata.annotations['example.com/ticket'], 'OPS-7');
    assert.equal(node.metadata.annotations[FOREIGN.annotation[0]], FOREIGN.annotation[1]);
    assert.equal(node.metadata.labels['example.com/pool'], 'batch');
    assert.equal(node.metadata.labels[FOREIGN.label[0]], FOREIGN.label[1]);
    assert.deepEqual(await ownAnnotations(cp, A), expected);
  });

  test('the server refuses the agent\'s token for another Node, a label, a foreign annotation and the status', async () => {
    const MERGE = { token: identity.token, contentType: 'application/merge-patch+json' };
    const refused = async (url: string, body: unknown, code: number, message: RegExp) => {
      const res = await cp.request('PATCH', url, body, MERGE);
      assert.equal(res.status, code, JSON.stringify(res.body));
      assert.match(res.body.message, message);
    };
    await refused(`/api/v1/nodes/${B}`, { metadata: { annotations: { [`${PREFIX}summary`]: 'x' } } }, 422, /may change only its own Node \(agent-a\), not agent-b/);
    await refused(`/api/v1/nodes/${A}`, { metadata: { labels: { 'example.com/pool': null } } }, 422, /may change only its labels node-tuning-advisor\.io\/grade/);
    await refused(`/api/v1/nodes/${A}`, { metadata: { annotations: { 'example.com/ticket': 'x' } } }, 422, /may change only annotations under node-tuning-advisor\.io\//);
    await refused(`/api/v1/nodes/${A}/status`, { status: { conditions: [] } }, 403, /cannot patch resource "nodes\/status"/);
  });

  test('faults: the API server stopped until every watch failed twice, then etcd compacted (410 Gone): /metrics keeps serving, one re-list, no write', async (t) => {
    const live = agent as AgentProcess;
    const pid = live.pid;
    const metrics = await live.metricsUrl();
    const logFrom = live.log.length;
    const outageAt = Date.now();
    await cp.stopApiserver();
    // Down until each watch has failed twice (dropped, then a retry refused: in backoff against a
    // server that is away), scraped all along.
    const watchFailures = (): Map<string, number> => {
      const seen = new Map<string, number>();
      for (const m of live.log.slice(logFrom).matchAll(/^agent: watch on (.+?) failed /gm)) seen.set(m[1] as string, (seen.get(m[1] as string) ?? 0) + 1);
      return seen;
    };
    const inBackoff = (): boolean => watchFailures().size === WATCHED.length && [...watchFailures().values()].every((n) => n >= 2);
    const served: number[] = [];
    while (!inBackoff() || served.length < 8) {
      if (Date.now() - outageAt > 120_000) assert.fail(`watch failures during the outage: ${JSON.stringify([...watchFailures()])}\n${live.log.slice(logFrom)}`);
      const [m, h] = await Promise.all([scrape(metrics), scrape(metrics, '/healthz')]);
      served.push(m.status, h.status);
      await sleep(250);
    }
    assert.ok(served.every((s) => s === 200), `served during the outage: ${served}`);
    t.diagnostic(`server down ${((Date.now() - outageAt) / 1000).toFixed(1)} s: ${served.length} scrapes answered; watch failures ${JSON.stringify([...watchFailures()])}`);
    const back = Date.now(); // what reaches the server from now on reaches the new kube-apiserver
    await cp.restartApiserver();
    const relisted = await until('re-watching after the restart', async () => {
      const watches = (await agentRequests(back)).filter((r) => r.verb === 'watch');
      return WATCHED.every((w) => watches.some((r) => r.path === w)) && watches;
    }, 180_000, explain(back)); // backoff after the outage (and a 403 while RBAC syncs at start)
    t.diagnostic(`all four watches back ${((Math.max(...relisted.map((r) => r.at)) - back) / 1000).toFixed(1)} s after the restart`);

    // Compaction: every write so far is history; a restarted API server keeps none of it in its cache.
    await ensureNamespace(cp, 'compaction-1');
    await ensureNamespace(cp, 'compaction-2');
    const compacted = await cp.compact();
    const since = Date.now();
    const lastKnown = Math.max(...(await agentRequests(outageAt)).filter((r) => r.verb === 'watch').map((r) => Number(r.query.get('resourceVersion'))));
    await cp.restartApiserver();
    // The server no longer has what the agent last knew: a watch from there is answered 410 Expired.
    const probe = await cp.request('GET', `/api/v1/nodes?watch=true&fieldSelector=metadata.name%3D${A}&resourceVersion=${lastKnown}&timeoutSeconds=1`);
    assert.match(JSON.stringify(probe.body), /"reason":"Expired","code":410/, `resourceVersion ${lastKnown} is gone after compaction at ${compacted}`);
    const resumedAll = await until('a LIST and a watch from it for each resource', async () => {
      const requests = await agentRequests(since);
      return WATCHED.every((w) => requests.some((r) => r.verb === 'watch' && r.path === w && Number(r.query.get('resourceVersion')) > compacted)) && requests;
    }, 180_000, explain(since));
    await live.waitForCycles(live.cycles + 2); // two more cycles: nothing more may be sent
    const after = await agentRequests(since);
    for (const resource of WATCHED) {
      // Whether its first try reached the restarted server (and got the 410) or not, each watch
      // resumes from one LIST of the current state, never from what was compacted away. A restarted
      // kube-apiserver answers 403 for a moment while its RBAC cache fills; such a LIST is retried.
      const lists = after.filter((r) => r.verb === 'list' && r.path === resource);
      assert.equal(lists.filter((r) => r.code < 400).length, 1, `one successful re-list of ${resource}\n${describeRequests(after)}`);
      assert.ok(lists.filter((r) => r.code >= 400).every((r) => r.code === 403 || r.code >= 500), `only transient refusals\n${describeRequests(after)}`);
      assert.ok(lists.length <= 3, `no re-list storm of ${resource}\n${describeRequests(after)}`);
      const resumed = after.filter((r) => r.verb === 'watch' && r.path === resource && r.code < 400).at(-1);
      assert.ok(Number(resumed?.query.get('resourceVersion')) > compacted, `${resource} watched from after the compaction\n${describeRequests(after)}`);
    }
    t.diagnostic(`after the compaction: ${resumedAll.filter((r) => r.verb === 'watch' && Number(r.query.get('resourceVersion')) <= compacted).length} re-watch(es) from a compacted resourceVersion reached the server`);

    const all = await agentRequests(outageAt);
    assert.deepEqual(all.filter(isWrite), [], 'no write: nothing changed');
    t.diagnostic(`requests from the outage to now: ${all.length} (${all.filter((r) => r.code >= 400).length} answered ≥ 400)`);
    assert.ok(all.length <= 40, `no request storm: ${all.length}\n${describeRequests(all)}`);
    assert.ok(live.running && live.pid === pid, 'the same process throughout');
    assert.equal((await scrape(metrics, '/healthz')).status, 200);
    assert.deepEqual(await ownAnnotations(cp, A), expected);
    const check = AgentProcess.start(bundle, [...run.args, '--dry-run', '--once'], run.env);
    assert.equal(await check.wait(), 0, check.log);
    assert.match(check.log, /already carries this report; nothing to send/);
    assert.ok(parseAnnotations(await ownAnnotations(cp, A)).state === 'ok' && (await ownAnnotations(cp, A))[REPORT_KEY] === expected[REPORT_KEY]);
  });
});

