// `report` over Nodes annotated by the agent itself: four bundled agents (`agent --once`, each with
// its node's pod-bound token and a fixture host tree) publish on a real kube-apiserver, one Node has
// no agent; `report`, run with the shipped readers' role (manifests/readers, the README's RBAC), must print what the Nodes carry, field by field,
// and the failing rules counted across them; the server's audit log shows reads only, all granted. Its HTML page is opened in
// headless Chromium with the network off.
// (The cluster checks - Tekton, CSI sidecars, logs through the kubelet - are proven on the real
// server in test/cluster/report.test.ts.)
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';
import type { ClusterReport } from '../../src/cluster/report.ts';
import { REPORT_KEY } from '../../src/wire/annotations.ts';
import { loadRuleSet } from '../../src/rules/rule-set.ts';
import { auditArgs, describeRequests, type AuditLog } from '../helpers/audit.ts';
import { PAGE_WIDTH, PageBrowser, browserMissing } from '../helpers/browser.ts';
import { AgentProcess, buildApp } from '../helpers/bundled-agent.ts';
import { ControlPlane, realServerTier } from '../helpers/control-plane.ts';
import { createReadyNode } from '../helpers/kube-objects.ts';
import { BASE, REPO } from '../helpers/manifests.ts';
import { heartbeatLease, heartbeatSpec } from '../../src/wire/heartbeat.ts';
import { AGENT_FIELD_MANAGER, AGENT_NAMESPACE, agentIdentity, applyKustomization, daemonSetRun } from '../helpers/shipped.ts';

const REPORTER = 'ci-reporter';
const TOKEN = 'report-e2e-token-0123456789abcdef';
const CP = 'node-role.kubernetes.io/control-plane';
/** Node → the fixture host its agent scans (cp-* get the control-plane label). */
const AGENTS: Record<string, string> = {
  'cp-1': 'etcd-lvm-chain', 'cp-2': 'rke2-server', 'worker-1': 'intel-pstate-epp-power', 'worker-2': 'seed-000-before',
};
const NO_AGENT = 'worker-3';

const READERS = path.join(REPO, 'manifests/readers');

/** The rules the README gives for `report` (section "Cluster view"), as written there. */
async function readmeReportRules(): Promise<unknown[]> {
  const readme = await readFile(path.join(REPO, 'README.md'), 'utf8');
  const block = /```yaml\n([\s\S]*?)```/.exec(readme.slice(readme.indexOf('**RBAC** for `report`')))?.[1];
  assert.ok(block, 'README has the RBAC block for report');
  return parse(block).rules;
}

describe('report over Nodes the bundled agent annotated, on a real kube-apiserver', realServerTier(), () => {
  let cp: ControlPlane;
  let audit: AuditLog;
  let tmp: string;
  let bundle: string;
  let kubeconfig: string;

  before(async () => {
    tmp = await mkdtemp(path.join(tmpdir(), 'nta-report-e2e-'));
    const auditing = await auditArgs(tmp, [REPORTER]);
    audit = auditing.log;
    [cp, bundle] = await Promise.all([
      ControlPlane.start({ apiserverArgs: auditing.args, extraTokens: [{ token: TOKEN, user: REPORTER }] }),
      buildApp(path.join(tmp, 'app')),
    ]);
    const applied = await applyKustomization(cp, BASE);
    assert.equal(applied.code, 0, applied.stderr);
    // The readers' roles as shipped, bound as their kustomization's comment says.
    for (const args of [['apply', '-k', READERS],
      ['create', 'clusterrolebinding', 'nta-reader', '--clusterrole=node-tuning-advisor-reader', `--user=${REPORTER}`],
      ['-n', 'default', 'create', 'rolebinding', 'nta-reader', '--role=node-tuning-advisor-reader-events', `--user=${REPORTER}`],
      ['-n', 'node-tuning-advisor', 'create', 'rolebinding', 'nta-reader', '--role=node-tuning-advisor-reader-heartbeats', `--user=${REPORTER}`]]) {
      const done = await cp.kubectl(args);
      assert.equal(done.code, 0, `kubectl ${args.join(' ')}: ${done.stderr}`);
    }
    kubeconfig = await cp.writeKubeconfig(path.join(tmp, 'reporter.kubeconfig'), REPORTER, TOKEN);
    for (const name of [...Object.keys(AGENTS), NO_AGENT]) await createReadyNode(cp, name, name.startsWith('cp-') ? { labels: { [CP]: '' } } : {});
    await Promise.all(Object.entries(AGENTS).map(async ([node, host]) => {
      const identity = await agentIdentity(cp, node, tmp);
      const run = await daemonSetRun(cp, 'node-tuning-advisor', { node, hostRoot: path.join(REPO, 'test/fixtures/hosts', host), rulesDir: path.join(tmp, `rules-${node}`), kubeconfig: identity.kubeconfig });
      // --probe-interval off: on a control-plane host the fsync probe would write 22 MiB into the fixture's etcd dir.
      const once = AgentProcess.start(bundle, [...run.args, '--once', '--probe-interval=off'], run.env);
      assert.equal(await once.wait(), 0, `${node}: ${once.log}`);
    }));
    // RBAC takes a moment: wait until the reporter may list nodes.
    for (let i = 0; i < 100 && (await cp.request('GET', '/api/v1/nodes?limit=1', undefined, { token: TOKEN })).status !== 200; i++) await new Promise((r) => setTimeout(r, 100));
  });
  after(async () => {
    await cp?.stop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  const runReport = async (...args: string[]) => {
    const since = Date.now();
    const proc = AgentProcess.start(bundle, ['report', `--kubeconfig=${kubeconfig}`, ...args], {});
    const code = await proc.wait();
    return { code, out: proc.log, requests: await audit.requests((r) => r.user === REPORTER && r.at >= since) };
  };
  /** The report annotation each agent left on its Node, as the server holds it (parsed as plain JSON). */
  const published = async (): Promise<Map<string, any>> => {
    const nodes = (await cp.must('GET', '/api/v1/nodes')).items as any[];
    return new Map(nodes.map((n) => [n.metadata.name, n.metadata.annotations?.[REPORT_KEY] === undefined ? undefined : JSON.parse(n.metadata.annotations[REPORT_KEY])]));
  };

  test('JSON: every node as its agent published it, failing rules counted across them; reads only, all granted', async () => {
    const { code, out, requests } = await runReport('--output=json', '--fail-on=never');
    assert.equal(code, 0, out);
    const report = JSON.parse(out) as ClusterReport;
    const carried = await published();
    assert.equal(report.nodes.length, carried.size);
    for (const [name, annotation] of carried) {
      const row = report.nodes.find((r) => r.name === name);
      if (annotation === undefined) {
        assert.equal(row?.agent, 'none', name);
        continue;
      }
      assert.equal(row?.agent, 'ok', name);
      assert.equal(row?.heartbeat?.state, 'current', `${name}: its agent's --once renewed its heartbeat (5 min, current for 15)`);
      for (const [key, value] of Object.entries(annotation)) assert.deepEqual((row?.report as any)?.[key], value, `${name}: ${key} is what the Node carries`);
      assert.deepEqual(row?.roles, name.startsWith('cp-') ? ['control-plane'] : ['worker']);
    }
    const failingOn = (rule: string) => [...carried].filter(([, a]) => a?.rules.some((r: any) => r.rule === rule && r.status === 'fail')).map(([n]) => n);
    assert.ok(report.fleet.length > 0, 'the fixtures fail rules');
    for (const group of report.fleet) {
      assert.equal(group.count, failingOn(group.rule).length, group.rule);
      assert.ok(group.examples.every((n) => failingOn(group.rule).includes(n)), group.rule);
      assert.equal(group.of, Object.keys(AGENTS).length);
    }
    assert.deepEqual(requests.filter((r) => !['list', 'get'].includes(r.verb)), [], 'reads only');
    assert.deepEqual(requests.filter((r) => r.code === 401 || r.code === 403), [], `the readers' role grants every request\n${describeRequests(requests)}`);
    assert.deepEqual(requests.filter((r) => r.code >= 400).map((r) => `${r.path} ${r.code}`), ['/apis/tekton.dev/v1/pipelineruns 404'], 'Tekton is not installed here');
    assert.equal(requests.filter((r) => /^\/api\/v1\/nodes\/./.test(r.path)).length, 0, 'no request per node');
  });

  test('manifests/readers: the README\'s rules for report; bound to them a user runs report and describe and can do nothing else', async () => {
    const role = await cp.must('GET', '/apis/rbac.authorization.k8s.io/v1/clusterroles/node-tuning-advisor-reader');
    const readme = await readmeReportRules() as { resources: string[]; verbs: string[] }[];
    // The README's block rule for rule, then `get nodes` for describe.
    assert.deepEqual(role.rules, [...readme, { apiGroups: [''], resources: ['nodes'], verbs: ['get'] }]);
    const since = Date.now();
    const proc = AgentProcess.start(bundle, ['describe', 'worker-1', `--kubeconfig=${kubeconfig}`], {});
    assert.equal(await proc.wait(), 1, proc.log); // 1: the node has failing rules, all read
    assert.match(proc.log, /^node worker-1 · score \d+\/100/);
    assert.match(proc.log, /Events \(node-tuning-advisor, newest first\)\n.*TuningRecommendation/);
    const requests = await audit.requests((r) => r.user === REPORTER && r.at >= since);
    assert.ok(requests.length >= 2, describeRequests(requests));
    assert.deepEqual(requests.filter((r) => r.code >= 400), [], `describe: every request granted\n${describeRequests(requests)}`);
    const can = async (...args: string[]) => (await cp.kubectl(['auth', 'can-i', `--as=${REPORTER}`, ...args])).stdout.trim();
    for (const denied of [['get', 'secrets', '-A'], ['list', 'secrets', '-n', 'default'], ['patch', 'nodes'], ['create', 'pods', '-n', 'default'],
      ['delete', 'pods', '-n', 'default'], ['list', 'events', '-n', 'kube-system'], ['create', 'events', '-n', 'default'], ['create', 'pods', '--subresource=exec', '-n', 'default'],
      ['update', 'configmaps', '-n', 'default'], ['watch', 'nodes'], ['list', 'leases', '-n', 'kube-node-lease'], ['patch', 'leases', '-n', 'node-tuning-advisor']]) {
      assert.equal(await can(...denied), 'no', denied.join(' '));
    }
    for (const granted of [['list', 'nodes'], ['get', 'nodes'], ['get', 'pods', '--subresource=log', '-n', 'kube-system'], ['list', 'events', '-n', 'default'],
      ['list', 'leases', '-n', 'node-tuning-advisor'], ['get', 'leases', '-n', 'node-tuning-advisor']]) {
      assert.equal(await can(...granted), 'yes', granted.join(' '));
    }
  });

  test('the table shows each node\'s score and grade as its annotation says, in the piped 100 columns', async () => {
    const { out } = await runReport('--all', '--fail-on=never');
    const lines = out.split('\n');
    assert.deepEqual(lines.filter((l) => [...l].length > 100), []);
    for (const [name, annotation] of await published()) {
      const row = lines.find((l) => l.startsWith(`${name} `));
      assert.ok(row, `a row for ${name}:\n${out}`);
      if (annotation === undefined) assert.match(row, /no agent/);
      else assert.match(row, new RegExp(`\\s${annotation.score}\\s+${annotation.grade}\\b`), row);
    }
  });

  test('--output html: a row per node as its annotation says, each failing rule explained; a real browser shows it whole, offline', async (t) => {
    const missing = browserMissing();
    if (missing) return t.skip(missing);
    const { code, out } = await runReport('--output=html', '--fail-on=never');
    assert.equal(code, 0, out);
    const page = path.join(tmp, 'report.html');
    await writeFile(page, out);
    const carried = await published();
    assert.deepEqual([...out.matchAll(/data-node="([^"]+)"/g)].map((m) => m[1]).sort(), [...carried.keys()].sort());
    for (const [name, annotation] of carried) {
      const row = new RegExp(`data-node="${name}"><td>${name}</td><td>[^<]*</td><td>${annotation?.score ?? '—'}</td><td>${annotation?.grade ?? '—'}</td>`);
      assert.match(out, row, name);
      for (const rule of (annotation?.rules ?? []).filter((r: any) => r.status === 'fail')) assert.match(out, new RegExp(`id="rule-${rule.rule}"`), `${rule.rule} is explained`);
    }
    const browser = await PageBrowser.launch();
    t.after(() => browser.stop());
    const check = await browser.check(page);
    assert.deepEqual([check.consoleErrors, check.requests, check.cut], [[], [], []]);
    assert.ok(check.scrollWidth <= PAGE_WIDTH, `${check.scrollWidth} px`);
  });

  /** The report annotation as a compromised agent would write it: as many critical fake ids as fit the policy's 8 KiB. */
  const forgedReport = (prefix: string): string => {
    const rules: unknown[] = [];
    const text = () => JSON.stringify({ schemaVersion: 2, score: 0, grade: 'F', counts: { pass: 0, fail: rules.length, unknown: 0, 'not-applicable': 0 }, rules });
    while (Buffer.byteLength(REPORT_KEY + text()) < 8100) rules.push({ rule: `${prefix}${rules.length}`, status: 'fail', severity: 'critical' });
    return text();
  };

  /** A heartbeat, as the policy lets the node's own agent token write it: its forged report is current, not stale. */
  async function heartbeatAs(node: string, token: string): Promise<void> {
    const lease = heartbeatLease(node, AGENT_NAMESPACE, heartbeatSpec(node, 5 * 60_000, Date.now()), undefined);
    const beat = await cp.request('POST', `/apis/coordination.k8s.io/v1/namespaces/${AGENT_NAMESPACE}/leases`, lease, { token });
    assert.equal(beat.status, 201, JSON.stringify(beat.body).slice(0, 300));
  }

  test('compromised agents naming hundreds of fake failing rules on their own Nodes do not push the real ones out of the fleet', async () => {
    const known = new Set((await loadRuleSet({ ruleLocations: [], bundledRules: true })).map((r) => r.id));
    const realFailing = new Set([...(await published()).values()].flatMap((a) => (a?.rules ?? []).filter((r: any) => r.status === 'fail').map((r: any) => r.rule as string)));
    assert.ok(realFailing.size > 0);
    // Each forged Node's own agent token writes what the policy lets it: 8 KiB of critical fake ids, sorted before the real Nodes.
    const forged = ['aaa-forged-1', 'aaa-forged-2', 'aaa-forged-3', 'aaa-forged-4'];
    for (const node of forged) {
      await createReadyNode(cp, node);
      const identity = await agentIdentity(cp, node, tmp);
      const patch = await cp.request('PATCH', `/api/v1/nodes/${node}?fieldManager=${AGENT_FIELD_MANAGER}`,
        { metadata: { annotations: { [REPORT_KEY]: forgedReport(`f${node.slice(-1)}-`) } } }, { token: identity.token, contentType: 'application/merge-patch+json' });
      assert.equal(patch.status, 200, JSON.stringify(patch.body).slice(0, 300));
      await heartbeatAs(node, identity.token);
    }
    const carried = await published();
    const fakeIds = new Set(forged.flatMap((n) => carried.get(n).rules.map((r: any) => r.rule as string)));
    assert.ok(fakeIds.size > 500, `${fakeIds.size} fake ids on the Nodes`);

    const { code, out } = await runReport('--output=json', '--fail-on=never');
    assert.equal(code, 0, out);
    const json = JSON.parse(out) as ClusterReport;
    assert.deepEqual(new Set(json.fleet.map((g) => g.rule)), realFailing, 'the fleet counts exactly the real failing rules');
    assert.ok(json.fleet.every((g) => known.has(g.rule) && g.of === Object.keys(AGENTS).length + forged.length));
    assert.deepEqual({ ...json.summary.unknownRules, examples: json.summary.unknownRules.examples.length },
      { nodes: forged.length, ids: 500, more: true, examples: 5 });
    assert.ok(json.summary.failing.critical <= Object.keys(AGENTS).length, 'fake critical ids make no node count as failing a critical rule');

    const table = await runReport('--fail-on=never');
    for (const rule of realFailing) assert.match(table.out, new RegExp(`(CRIT|WARN|INFO) ${rule} on `), rule);
    assert.match(table.out.replace(/\n\s+/g, ' '), /Unknown rules: over 500 ids this rule set does not know, failing on 4 nodes \(f1-0, /);
  });

  test('a compromised agent repeating real rule ids (issue 37 item 3): counted once per node, severity and category from the rule set', async () => {
    const ruleSet = new Map((await loadRuleSet({ ruleLocations: [], bundledRules: true })).map((r) => [r.id, r]));
    const realFailing = [...(await published()).entries()].filter(([name]) => name in AGENTS)
      .flatMap(([, a]) => (a?.rules ?? []).filter((r: any) => r.status === 'fail').map((r: any) => r.rule as string));
    const rank = { critical: 0, warning: 1, info: 2 } as const;
    const bySeverity = [...new Set(realFailing)].sort((a, b) => rank[ruleSet.get(a)?.severity ?? 'info'] - rank[ruleSet.get(b)?.severity ?? 'info']);
    const [worst, lesser] = bySeverity as [string, string];
    assert.ok(lesser && ruleSet.get(worst)?.severity !== 'info', `the fixtures fail two rules, one above info: ${bySeverity.join(', ')}`);
    // Sorted first, its own agent token writes what the policy lets it: another rule repeated as
    // critical as often as 8 KiB holds, and the most severe real one as info.
    const rules: unknown[] = [{ rule: worst, status: 'fail', severity: 'info', category: 'forged' }];
    const text = () => JSON.stringify({ schemaVersion: 2, score: 0, grade: 'F', counts: { pass: 0, fail: rules.length, unknown: 0, 'not-applicable': 0 }, rules });
    while (Buffer.byteLength(REPORT_KEY + text()) < 8000) rules.unshift({ rule: lesser, status: 'fail', severity: 'critical' });
    const node = 'aaa-repeats';
    await createReadyNode(cp, node);
    const identity = await agentIdentity(cp, node, tmp);
    const patch = await cp.request('PATCH', `/api/v1/nodes/${node}?fieldManager=${AGENT_FIELD_MANAGER}`,
      { metadata: { annotations: { [REPORT_KEY]: text() } } }, { token: identity.token, contentType: 'application/merge-patch+json' });
    assert.equal(patch.status, 200, JSON.stringify(patch.body).slice(0, 300));
    await heartbeatAs(node, identity.token);
    assert.ok(rules.length > 100, `${rules.length} entries in the forged annotation`);

    const { code, out } = await runReport('--output=json', '--fail-on=never');
    assert.equal(code, 0, out);
    const json = JSON.parse(out) as ClusterReport;
    const reporting = [...(await published()).values()].filter(Boolean).length;
    for (const group of json.fleet) {
      assert.ok(group.count <= group.of && group.of === reporting, `${group.text} (${reporting} nodes report)`);
      assert.equal(group.severity, ruleSet.get(group.rule)?.severity, `${group.rule}: the rule set's severity`);
      assert.equal(group.category, ruleSet.get(group.rule)?.category, `${group.rule}: the rule set's category`);
    }
    assert.equal(json.fleet.find((g) => g.rule === lesser)?.count, realFailing.filter((r) => r === lesser).length + 1, 'each node that names it once');
    const table = await runReport('--fail-on=never');
    const tag = (rule: string) => ({ critical: 'CRIT', warning: 'WARN', info: 'INFO' })[ruleSet.get(rule)?.severity ?? 'info'];
    for (const rule of [worst, lesser]) assert.match(table.out, new RegExp(`${tag(rule)} ${rule} on `), `${rule} as the rule set rates it:\n${table.out}`);
  });
});
