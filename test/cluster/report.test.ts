// `report`'s cluster checks on the real control plane: Nodes whose agents published annotations (one
// without an agent, one broken), Tekton with RWO workspaces and the affinity assistant off (seed
// 001), a CSI driver whose provisioner logs client-side throttling (seed 002), logs fetched by the
// real kube-apiserver from the test playing the kubelet. Run with the README's ClusterRole, which
// must be exactly what `report` reads: each permission in it is used, and without it the checks
// that need it say why instead of passing; and the readers' Role for the heartbeat Leases, without
// which no node is called stale and the report says why.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';
import type { ClusterReport } from '../../src/cluster/report.ts';
import { REPORT_KEY } from '../../src/wire/annotations.ts';
import { DEFAULT_AGENT_NAMESPACE, DEFAULT_HEARTBEAT_MS, heartbeatLease, heartbeatSpec } from '../../src/wire/heartbeat.ts';
import { auditArgs, describeRequests, type AuditLog } from '../helpers/audit.ts';
import { runCli } from '../helpers/cli.ts';
import { ControlPlane, realServerTier } from '../helpers/control-plane.ts';
import { buildFleet, CI_NS, markRunning, TEKTON_NS } from '../helpers/fleet-cluster.ts';
import { ensureNamespace, ensureServiceAccount } from '../helpers/kube-objects.ts';
import { THROTTLE_LINES } from '../helpers/cluster-fixture.ts';
import { nodeObject, podObject, workloadObject } from '../helpers/fleet-objects.ts';
import { KubeletLogs } from '../helpers/kubelet-logs.ts';
import { REPO } from '../helpers/manifests.ts';

const SEED_001 = 'tekton-rwo-without-affinity-assistant';
const NFS_NS = 'csi-nfs';
const NFS_SA = 'csi-nfs-controller-sa';
const REPORTER = 'ci-reporter';
/** The README's ClusterRole without the readers' heartbeat Role. */
const NO_HEARTBEATS = 'without-heartbeats';
const token = (user: string) => `token-${user}-0123456789abcdef`;
type Rule = { apiGroups: string[]; resources: string[]; verbs: string[] };
type Permission = { group: string; resource: string; verb: string };

/** The ClusterRole the README gives for `report` (section "Cluster view"), as written there. */
async function readmeReportRules(): Promise<Rule[]> {
  const readme = await readFile(path.join(REPO, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('**RBAC** for `report`'));
  const block = /```yaml\n([\s\S]*?)```/.exec(section)?.[1];
  assert.ok(block, 'README has the RBAC block for report');
  return parse(block).rules;
}

/** The workload with its pods running as `serviceAccount`. */
function withServiceAccount(workload: any, serviceAccount: string): any {
  return { ...workload, spec: { ...workload.spec, template: { ...workload.spec.template, spec: { ...workload.spec.template.spec, serviceAccountName: serviceAccount } } } };
}

const permissions = (rules: Rule[]): Permission[] => rules.flatMap((r) => r.apiGroups.flatMap((group) => r.resources.flatMap((resource) => r.verbs.map((verb) => ({ group, resource, verb })))));
const without = (all: Permission[], p: Permission): Rule[] => all.filter((q) => q !== p).map((q) => ({ apiGroups: [q.group], resources: [q.resource], verbs: [q.verb] }));
const userFor = (p: Permission) => `without-${p.group || 'core'}-${p.resource.replace('/', '-')}-${p.verb}`.replace(/\./g, '-');

describe('report: cluster checks on a real kube-apiserver', realServerTier(), () => {
  let cp: ControlPlane;
  let audit: AuditLog;
  let tmp: string;
  let kubelet: KubeletLogs;
  let granted: Permission[];
  const kubeconfigs = new Map<string, string>();

  /** The readers' Role for the heartbeat Leases (manifests/readers), bound to `user`. */
  async function bindHeartbeats(user: string): Promise<void> {
    await cp.must('POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/node-tuning-advisor/rolebindings', {
      apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: user },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'node-tuning-advisor-reader-heartbeats' }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }],
    });
  }

  async function bind(user: string, rules: Rule[]): Promise<void> {
    await cp.must('POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: user }, rules });
    await cp.must('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
      apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: user },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: user }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }],
    });
    kubeconfigs.set(user, await cp.writeKubeconfig(path.join(tmp, `${user}.kubeconfig`), user, token(user)));
  }

  before(async () => {
    tmp = await mkdtemp(path.join(tmpdir(), 'nta-report-'));
    const rules = await readmeReportRules();
    granted = permissions(rules);
    const users = [REPORTER, ...granted.map(userFor), NO_HEARTBEATS];
    const auditing = await auditArgs(tmp, users);
    audit = auditing.log;
    [cp, kubelet] = await Promise.all([
      ControlPlane.start({ apiserverArgs: auditing.args, extraTokens: users.map((user) => ({ token: token(user), user })) }),
      KubeletLogs.start(tmp),
    ]);
    await bind(REPORTER, rules);
    for (const p of granted) await bind(userFor(p), without(granted, p));
    await bind(NO_HEARTBEATS, rules);
    await buildFleet(cp, kubelet, { workers: 3, appNamespaces: 1, appsPerNamespace: 1, podsPerApp: 2, daemonSets: false, pipelineRuns: 2, noAgentEvery: 2, unreadableEvery: 3 });
    const readers = await cp.kubectl(['apply', '-k', path.join(REPO, 'manifests/readers')]);
    assert.equal(readers.code, 0, readers.stderr);
    for (const user of [REPORTER, ...granted.map(userFor)]) await bindHeartbeats(user);
    // A second CSI driver, as a StatefulSet, whose resizer's log the kubelet cannot serve. Outside
    // kube-system, so trusted by its ServiceAccount's ClusterRoleBinding (csi-driver-nfs's
    // deploy/rbac-csi-nfs.yaml: csi-nfs-controller-sa, nfs-csi-provisioner-binding).
    const labels = { 'app.kubernetes.io/name': 'nfs-csi-controller' };
    const containers = [{ name: 'nfs', image: 'registry.example/sig-storage/nfsplugin:v4.9.0' }, { name: 'csi-resizer', image: 'registry.example/sig-storage/csi-resizer:v1.9.0' }];
    await ensureNamespace(cp, NFS_NS);
    await ensureServiceAccount(cp, NFS_NS, NFS_SA);
    await cp.must('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
      apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'nfs-csi-provisioner-binding' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'system:persistent-volume-provisioner' }, subjects: [{ kind: 'ServiceAccount', name: NFS_SA, namespace: NFS_NS }],
    });
    await cp.must('POST', `/apis/apps/v1/namespaces/${NFS_NS}/statefulsets`, withServiceAccount(workloadObject('StatefulSet', 'nfs-csi-controller', labels, containers), NFS_SA));
    const nfsPod = podObject('nfs-csi-controller-0', labels, 'worker-00001', containers, { kind: 'StatefulSet', name: 'nfs-csi-controller' });
    await cp.must('POST', `/api/v1/namespaces/${NFS_NS}/pods`, { ...nfsPod, spec: { ...nfsPod.spec, serviceAccountName: NFS_SA } });
    await markRunning(cp, NFS_NS, 'nfs-csi-controller-0');
    // RBAC is cached by the authorizer: wait until the last binding works.
    for (let i = 0; i < 100 && (await cp.request('GET', '/api/v1/nodes?limit=1', undefined, { token: token(REPORTER) })).status !== 200; i++) await new Promise((r) => setTimeout(r, 100));
  });
  after(async () => {
    await cp?.stop();
    await kubelet?.stop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  async function report(user: string, ...args: string[]) {
    const since = Date.now();
    const out = await runCli(['report', '--kubeconfig', kubeconfigs.get(user) as string, ...args]);
    const requests = await audit.requests((r) => r.user === user && r.at >= since);
    const json = args.includes('json') && out.code !== 2 ? JSON.parse(out.stdout) as ClusterReport : undefined;
    const status = (rule: string) => json?.cluster.findings.find((f) => f.ruleId === rule);
    return { out, requests, json, status };
  }

  test('seed 001 and seed 002 from what the cluster carries, with evidence and fix', async () => {
    const { out, json, status } = await report(REPORTER, '--output', 'json');
    assert.equal(out.stderr, '');
    assert.equal(status(SEED_001)?.status, 'fail');
    assert.equal(status(SEED_001)?.observed, 'assistant disabled; 2/2 workspaces RWO/RWOP');
    assert.match(status(SEED_001)?.remediation.text ?? '', /coschedule: workspaces/);
    assert.ok(status(SEED_001)?.evidence.some((e) => e.fact === 'cluster.tekton.workspaces.singleNode' && /ci\/build-00002 source: volumeClaimTemplate RWO, gp3/.test(e.detail ?? '')));
    assert.equal(status('tekton-attach-workspaces')?.status, 'fail', 'gp3 is EBS (attachRequired unset), the claim is on NFS');
    assert.equal(json?.cluster.facts['cluster.tekton.workspaces.attach']?.value, 1);
    assert.equal(status('csi-provisioner-throttling')?.status, 'fail');
    assert.equal(json?.cluster.facts['cluster.csi.external-provisioner.throttled']?.value, 6, 'three lines in each of the two controller pods\' logs');
    assert.equal(json?.cluster.facts['cluster.csi.external-provisioner.maxWaitMs']?.value, 2500);
    assert.match(String(json?.cluster.facts['cluster.csi.external-provisioner.instances']?.value), /kube-system\/ebs-csi-controller \(Deployment\): csi-provisioner:v3.6.0, driver ebs-plugin \(aws-ebs-csi-driver:v1.30.0\), QPS 5\/burst 10/);
    assert.equal(status('csi-attacher-throttling')?.status, 'pass');
    assert.equal(status('tekton-controller-api-qps')?.status, 'fail');
    assert.equal(json?.cluster.facts['cluster.tekton.controller.kubeAPIQPS']?.value, 10, '-kube-api-qps 5, doubled');
    assert.equal(out.code, 1, 'etcd-fsync-latency (critical) fails on the control-plane nodes');
  });

  test('an unreadable log is unknown with the reason, never "no throttling"', async () => {
    const { status } = await report(REPORTER, '--output', 'json');
    const resizer = status('csi-resizer-throttling');
    assert.equal(resizer?.status, 'unknown');
    assert.match(resizer?.message ?? '', /nfs-csi-controller-0 csi-resizer: HTTP \d{3}/);
  });

  test('reads only what the README grants; each permission there is used, and without it the checks say why', async () => {
    const { requests, out } = await report(REPORTER, '--output', 'json');
    assert.equal(out.code, 1);
    assert.deepEqual(requests.filter((r) => !['list', 'get'].includes(r.verb)), [], 'reads only');
    assert.deepEqual(requests.filter((r) => r.code === 401 || r.code === 403), [], `the README's RBAC grants every request\n${describeRequests(requests)}`);
    assert.equal(requests.filter((r) => /^\/api\/v1\/nodes\/./.test(r.path)).length, 0, 'no request per node');
    for (const r of requests.filter((x) => x.path.endsWith('/log'))) assert.ok(['tailLines', 'limitBytes', 'sinceSeconds'].every((k) => Number(r.query.get(k)) > 0), r.uri);
    for (const p of granted) {
      const denied = await report(userFor(p), '--output', 'json');
      const refused = denied.requests.filter((r) => r.code === 403);
      assert.ok(refused.length > 0, `${p.verb} ${p.resource} (${p.group || 'core'}) is in the README but never used`);
      if (p.resource === 'nodes') {
        assert.equal(denied.out.code, 2);
        assert.match(denied.out.stderr, /^node-tuning-advisor report: cannot list nodes: HTTP 403.*list on nodes/);
        continue;
      }
      assert.equal(denied.out.stderr, '', `${p.resource}: the report is still printed`);
      if (p.resource === 'pods') {
        assert.equal(denied.status('csi-provisioner-throttling')?.status, 'unknown');
        assert.match(denied.status('csi-provisioner-throttling')?.message ?? '', /HTTP 403/);
        assert.equal(denied.status('tekton-controller-api-qps')?.status, 'unknown');
      }
    }
  });

  test('without the readers\' heartbeat Role: the report is printed, no node is stale, every heartbeat unknown with the reason', async () => {
    const { out, json, requests } = await report(NO_HEARTBEATS, '--output', 'json');
    assert.equal(out.stderr, '');
    assert.equal(requests.filter((r) => r.code === 403).map((r) => r.path).join(), '/apis/coordination.k8s.io/v1/namespaces/node-tuning-advisor/leases');
    assert.match(json?.summary.heartbeats?.problem ?? '', /^heartbeats not read: HTTP 403: .* \(report needs list on leases in node-tuning-advisor: manifests\/readers\)$/);
    assert.equal(json?.summary.stale, 0);
    const annotated = json?.nodes.filter((n) => n.agent !== 'none') ?? [];
    assert.ok(annotated.length > 0 && annotated.every((n) => n.heartbeat?.state === 'unknown'), JSON.stringify(annotated.map((n) => n.heartbeat)));
    assert.deepEqual((await report(REPORTER, '--output', 'json')).json?.nodes.filter((n) => n.agent !== 'none').map((n) => n.heartbeat?.state),
      annotated.map(() => 'current'), 'with it: each agent\'s heartbeat, current');
    const table = await report(NO_HEARTBEATS, '--fail-on', 'never');
    assert.match(table.out.stdout.replace(/\n {2}/g, ' '), /^heartbeats not read: HTTP 403: .*: no node is marked stale$/m);
  });

  test('the table fits the piped 100 columns: nodes worst first, "no agent", "unreadable", failing rules by role', async () => {
    const { out } = await report(REPORTER, '--all');
    const lines = out.stdout.split('\n');
    assert.deepEqual(lines.filter((l) => [...l].length > 100), []);
    assert.match(out.stdout, /CRIT etcd-fsync-latency on 3\/3 control-plane nodes/);
    const order = lines.filter((l) => /^(cp|worker)-\d/.test(l)).map((l) => l.split(' ')[0]);
    assert.deepEqual(order, ['cp-1', 'cp-2', 'cp-3', 'worker-00001', 'worker-00003', 'worker-00002']);
    assert.match(lines.find((l) => l.startsWith('worker-00002')) ?? '', /no agent/);
    assert.match(lines.find((l) => l.startsWith('worker-00003')) ?? '', /unreadable/);
    assert.equal((await report(REPORTER, '--fail-on', 'never')).out.code, 0);
  });

  test('--selector goes to the node list; the cluster size is then unknown', async () => {
    const { requests, json, status } = await report(REPORTER, '--output', 'json', '--selector', 'node-role.kubernetes.io/control-plane');
    assert.ok(requests.filter((r) => r.path === '/api/v1/nodes').every((r) => r.query.get('labelSelector') === 'node-role.kubernetes.io/control-plane'));
    assert.deepEqual(json?.nodes.map((n) => n.name), ['cp-1', 'cp-2', 'cp-3']);
    assert.equal(status('cluster-events-split')?.status, 'unknown');
    assert.equal(json?.fleet[0]?.text, 'etcd-fsync-latency on 3/3 control-plane nodes');
  });

  test('reads agents of the previous release (version-1 annotation) next to current ones during a rollout', async () => {
    // As an agent of the previous release wrote it (every rule listed, with its category).
    const v1 = [
      '{"schemaVersion":1,"score":80,"grade":"B","counts":{"fail":1,"unknown":0,"pass":1,"not-applicable":0},"omitted":0,"rules":[',
      '{"rule":"cpu-governor","status":"fail","severity":"warning","category":"cpu","observed":"governor powersave, driver intel_pstate, EPP power"},',
      '{"rule":"kernel-tick-rate","status":"pass","severity":"warning","category":"kernel"}',
      ']}',
    ].join('\n');
    await cp.must('POST', '/api/v1/nodes', nodeObject('worker-old', 99, { annotations: { [REPORT_KEY]: v1 } }));
    // Agents of the previous release renew no heartbeat: until the rollout reaches its node, it shows stale.
    const stale = (await report(REPORTER, '-o', 'json', '--fail-on', 'never')).json?.nodes.find((n) => n.name === 'worker-old');
    assert.equal(stale?.heartbeat?.state, 'stale');
    await cp.must('POST', `/apis/coordination.k8s.io/v1/namespaces/${DEFAULT_AGENT_NAMESPACE}/leases`,
      heartbeatLease('worker-old', DEFAULT_AGENT_NAMESPACE, heartbeatSpec('worker-old', DEFAULT_HEARTBEAT_MS, Date.now()), undefined));
    try {
      const { json } = await report(REPORTER, '-o', 'json', '--fail-on', 'never');
      const old = json?.nodes.find((n) => n.name === 'worker-old');
      assert.equal(old?.agent, 'ok');
      assert.equal(old?.report?.score, 80);
      const cpu = json?.fleet.find((g) => g.rule === 'cpu-governor');
      assert.equal(cpu?.category, 'cpu');
      assert.deepEqual(cpu?.examples, ['cp-1', 'worker-old'], 'cp-1 (version 2) and worker-old (version 1)');
      // Version-2 annotations carry no category: it comes from the rule set report loaded.
      assert.equal(json?.fleet.find((g) => g.rule === 'etcd-fsync-latency')?.category, 'etcd');
      const table = await report(REPORTER, '--fail-on', 'never', '--all');
      assert.match(table.out.stdout, /^worker-old +worker +80 +B +cpu-governor$/m);
    } finally {
      await cp.must('DELETE', '/api/v1/nodes/worker-old');
      await cp.must('DELETE', `/apis/coordination.k8s.io/v1/namespaces/${DEFAULT_AGENT_NAMESPACE}/leases/worker-old`);
    }
  });

  test('tenants\' look-alikes decide nothing (issue 37 item 4): a fake Tekton controller, twenty csi-provisioner Deployments and their logs', async (t) => {
    // A tenant who may create Deployments in its own namespace, which lists before kube-system and tekton-pipelines.
    const ns = 'aaa-tenant';
    await ensureNamespace(cp, ns);
    await ensureServiceAccount(cp, ns, 'default');
    const fake = [{ name: 'tekton-pipelines-controller', image: 'registry.example/tenant/controller:v1', args: ['-kube-api-qps', '2000', '-kube-api-burst=4000'] }];
    await cp.must('POST', `/apis/apps/v1/namespaces/${ns}/deployments`, workloadObject('Deployment', 'pipelines', { app: 'pipelines' }, fake));
    const storage = [{ name: 'csi-provisioner', image: 'registry.example/tenant/csi-provisioner:v0.0.1', args: ['--kube-api-qps=1'] }];
    for (let i = 0; i < 20; i++) {
      const labels = { app: `storage-${i}` };
      await cp.must('POST', `/apis/apps/v1/namespaces/${ns}/deployments`, workloadObject('Deployment', `storage-${String(i).padStart(2, '0')}`, labels, storage));
      if (i >= 5) continue;
      await cp.must('POST', `/api/v1/namespaces/${ns}/pods`, podObject(`storage-${i}-0`, labels, 'worker-00001', storage, { kind: 'ReplicaSet', name: `storage-${i}` }));
      await markRunning(cp, ns, `storage-${i}-0`);
      kubelet.set(ns, `storage-${i}-0`, 'csi-provisioner', THROTTLE_LINES.repeat(10));
    }
    try {
      const { json, status } = await report(REPORTER, '--output', 'json');
      const fact = (key: string) => json?.cluster.facts[key];
      t.diagnostic(['cluster.tekton.controller.kubeAPIQPS', 'cluster.csi.external-provisioner.instances', 'cluster.csi.external-provisioner.throttled']
        .map((key) => `${key}: ${JSON.stringify(fact(key)?.value ?? fact(key)?.unknown)}`).join('\n'));
      assert.equal(fact('cluster.tekton.controller.kubeAPIQPS')?.value, 10, 'the real controller\'s -kube-api-qps 5, doubled: not the tenant\'s 2000');
      assert.equal(status('tekton-controller-api-qps')?.status, 'fail');
      assert.match(String(fact('cluster.tekton.controller.present')?.detail), /tekton-pipelines\/tekton-pipelines-controller \(Deployment\) \(verified: in tekton-pipelines/);
      const instances = String(fact('cluster.csi.external-provisioner.instances')?.value);
      assert.match(instances, /kube-system\/ebs-csi-controller \(Deployment\): csi-provisioner:v3.6.0.*\(verified: in kube-system/);
      assert.doesNotMatch(instances, /aaa-tenant/);
      assert.equal(fact('cluster.csi.external-provisioner.throttled')?.value, 6, 'only the driver\'s two pods\' logs are read');
      assert.equal(fact('cluster.csi.external-provisioner.kubeAPIQPS')?.value, 5);
      assert.match(String(fact('cluster.csi.external-provisioner.present')?.detail), /20 look-alike workload\(s\) elsewhere not used/);
      assert.match(String(fact('cluster.csi.external-resizer.instances')?.value), /csi-nfs\/nfs-csi-controller \(StatefulSet\).*\(inferred: its ServiceAccount csi-nfs\/csi-nfs-controller-sa is bound cluster-wide by ClusterRoleBinding nfs-csi-provisioner-binding/);
    } finally {
      await cp.must('DELETE', `/apis/apps/v1/namespaces/${ns}/deployments`);
      await cp.must('DELETE', `/api/v1/namespaces/${ns}/pods?gracePeriodSeconds=0`);
    }
  });

  // Last: it removes Tekton.
  test('without Tekton: its rules are not applicable and no storage kind is read', async () => {
    await cp.must('DELETE', `/api/v1/namespaces/${TEKTON_NS}/configmaps/feature-flags`);
    await cp.must('DELETE', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/pipelineruns.tekton.dev');
    for (let i = 0; i < 300 && (await cp.request('GET', `/apis/tekton.dev/v1/namespaces/${CI_NS}/pipelineruns`)).status !== 404; i++) await new Promise((r) => setTimeout(r, 100));
    const { requests, status } = await report(REPORTER, '--output', 'json');
    assert.equal(status(SEED_001)?.status, 'not-applicable');
    assert.deepEqual(requests.filter((r) => /storageclasses|csidrivers|persistentvolumeclaims/.test(r.path)), []);
  });
});
