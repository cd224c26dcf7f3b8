import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { ClusterReport } from '../../src/cluster/report.ts';
import { REPORT_KEY } from '../../src/publish/annotations.ts';
import { runCli } from '../helpers/cli.ts';
import { startCluster, type ClusterShape } from '../helpers/cluster-fixture.ts';
import type { FakeApiServer } from '../helpers/fake-apiserver.ts';

const servers: FakeApiServer[] = [];
after(async () => { for (const s of servers) await s.stop(); });

async function run(shape: ClusterShape, ...extra: string[]) {
  const server = await startCluster(shape);
  servers.push(server);
  const json = await runCli(['report', '--kubeconfig', server.writeKubeconfig(), '--output', 'json', ...extra]);
  assert.equal(json.stderr, '');
  const parsed = JSON.parse(json.stdout) as ClusterReport;
  const status = (rule: string) => parsed.cluster.findings.find((f) => f.ruleId === rule)?.status;
  return { server, json, report: parsed, status };
}

const SEED_001 = 'tekton-rwo-without-affinity-assistant';
const DISABLED = { 'disable-affinity-assistant': 'true', coschedule: 'workspaces' };

describe('report: cluster view over the stand-in API', () => {
  it('RWO workspaces with the affinity assistant disabled get the seed-001 finding, with evidence and fix', async () => {
    const { report, status, json } = await run({ tektonFlags: DISABLED });
    assert.equal(status(SEED_001), 'fail');
    const finding = report.cluster.findings.find((f) => f.ruleId === SEED_001)!;
    assert.equal(finding.observed, 'assistant disabled; 2/2 workspaces RWO/RWOP');
    assert.match(finding.remediation.text, /coschedule: workspaces/);
    assert.ok(finding.references.some((r) => r.seed?.startsWith('001_')));
    assert.ok(finding.evidence.some((e) => e.fact === 'cluster.tekton.workspaces.singleNode' && /ci\/build-42 source: volumeClaimTemplate RWO, longhorn/.test(e.detail ?? '')));
    // Longhorn's CSIDriver leaves attachRequired unset (true); the claim on NFS does not attach.
    assert.equal(status('tekton-attach-workspaces'), 'fail');
    assert.equal(report.cluster.facts['cluster.tekton.workspaces.attach']?.value, 1);
    assert.equal(json.code, 1, 'etcd-fsync-latency (critical) fails on the control-plane nodes');
  });

  it('RWX workspaces or a coscheduling assistant do not get it', async () => {
    assert.equal((await run({ tektonFlags: DISABLED, templateModes: ['ReadWriteMany'], claimModes: ['ReadWriteMany'] })).status(SEED_001), 'pass');
    assert.equal((await run({ tektonFlags: { 'disable-affinity-assistant': 'false', coschedule: 'workspaces' } })).status(SEED_001), 'pass');
    assert.equal((await run({ tektonFlags: { 'disable-affinity-assistant': 'true', coschedule: 'pipelineruns' } })).status(SEED_001), 'pass');
    assert.equal((await run({ tektonFlags: { coschedule: 'disabled' } })).status(SEED_001), 'fail');
  });

  it('a CSI sidecar with throttling lines gets the seed-002 finding; a clean one passes', async () => {
    const { report, status } = await run({});
    assert.equal(status('csi-provisioner-throttling'), 'fail');
    assert.equal(report.cluster.facts['cluster.csi.external-provisioner.throttled']?.value, 3, 'all three formats count');
    assert.equal(report.cluster.facts['cluster.csi.external-provisioner.maxWaitMs']?.value, 2500);
    assert.deepEqual(report.cluster.facts['cluster.csi.external-provisioner.versions']?.value, ['v3.1.0']);
    assert.match(String(report.cluster.facts['cluster.csi.external-provisioner.instances']?.value), /driver longhorn-csi-plugin \(longhorn-manager:v1.6.0\), QPS 5\/burst 10/);
    assert.equal(status('csi-attacher-throttling'), 'pass');
    assert.equal(status('csi-resizer-throttling'), 'not-applicable');
  });

  it('sends one read-only LIST per kind, no per-node request, bounded log tails', async () => {
    const { server } = await run({ tektonFlags: DISABLED });
    assert.equal(server.writes(), 0);
    for (const path of ['/api/v1/nodes', '/api/v1/configmaps', '/api/v1/pods', '/api/v1/persistentvolumeclaims',
      '/apis/storage.k8s.io/v1/storageclasses', '/apis/storage.k8s.io/v1/csidrivers', '/apis/tekton.dev/v1/pipelineruns']) {
      assert.equal(server.requests.filter((r) => r.path === path).length, 1, path);
    }
    assert.equal(server.count('GET', '/api/v1/nodes/'), 0, 'no GET of a single node');
    const logs = server.requests.filter((r) => r.path.endsWith('/log'));
    assert.equal(logs.length, 3, 'provisioner, attacher, Tekton controller');
    for (const r of logs) {
      assert.ok(Number(r.query.get('tailLines')) > 0 && Number(r.query.get('limitBytes')) > 0 && Number(r.query.get('sinceSeconds')) > 0);
    }
    assert.equal(server.requests.length, 10);
    assert.equal(server.requests.find((r) => r.path === '/api/v1/configmaps')?.query.get('fieldSelector'), 'metadata.name=feature-flags');
  });

  it('the table fits 80 columns: nodes worst first, "no agent", fleet counts by role', async () => {
    const server = await startCluster({ tektonFlags: DISABLED });
    servers.push(server);
    const out = await runCli(['report', '--kubeconfig', server.writeKubeconfig()]);
    const lines = out.stdout.split('\n');
    const wide = lines.filter((l) => [...l].length > 80);
    assert.deepEqual(wide, []);
    assert.match(out.stdout, /CRIT etcd-fsync-latency on 3\/3 control-plane nodes/);
    assert.match(out.stdout, /WARN kernel-tick-rate on 1\/1 worker node\b/);
    const order = lines.filter((l) => /^(cp|worker)-\d/.test(l)).map((l) => l.split(' ')[0]);
    assert.deepEqual(order, ['cp-1', 'cp-2', 'cp-3', 'worker-1', 'worker-3', 'worker-2']);
    assert.match(lines.find((l) => l.startsWith('worker-2')) ?? '', /no agent/);
    assert.match(lines.find((l) => l.startsWith('worker-3')) ?? '', /unreadable/);
    assert.equal(out.code, 1, 'a critical rule fails on the control-plane nodes');
    assert.equal((await runCli(['report', '--kubeconfig', server.writeKubeconfig(), '--fail-on', 'never'])).code, 0);
  });

  it('reads agents of the previous release (version-1 annotation) next to current ones during a rollout', async () => {
    const server = await startCluster({});
    servers.push(server);
    // As an agent of the previous release wrote it (every rule listed, with its category).
    server.addNode('worker-old', { [REPORT_KEY]: [
      '{"schemaVersion":1,"score":80,"grade":"B","counts":{"fail":1,"unknown":0,"pass":1,"not-applicable":0},"omitted":0,"rules":[',
      '{"rule":"cpu-governor","status":"fail","severity":"warning","category":"cpu","observed":"governor powersave, driver intel_pstate, EPP power"},',
      '{"rule":"kernel-tick-rate","status":"pass","severity":"warning","category":"kernel"}',
      ']}',
    ].join('\n') });
    const out = await runCli(['report', '--kubeconfig', server.writeKubeconfig(), '-o', 'json', '--fail-on', 'never']);
    const report = JSON.parse(out.stdout) as ClusterReport;
    const old = report.nodes.find((n) => n.name === 'worker-old');
    assert.equal(old?.agent, 'ok');
    assert.equal(old?.report?.score, 80);
    const cpu = report.fleet.find((g) => g.rule === 'cpu-governor');
    assert.deepEqual([cpu?.category, cpu?.nodes], ['cpu', ['worker-old']]);
    // Version-2 annotations carry no category: it comes from the rule set report loaded.
    assert.equal(report.fleet.find((g) => g.rule === 'etcd-fsync-latency')?.category, 'etcd');
    const table = await runCli(['report', '--kubeconfig', server.writeKubeconfig(), '--fail-on', 'never']);
    assert.match(table.stdout, /^worker-old +worker +80 +B +cpu-governor$/m);
  });

  it('without Tekton: its rules are not applicable and no storage kinds are listed', async () => {
    const { server, status } = await run({});
    assert.equal(status(SEED_001), 'not-applicable');
    assert.equal(server.count('GET', '/apis/storage.k8s.io'), 0);
    assert.equal(server.count('GET', '/api/v1/persistentvolumeclaims'), 0);
  });
});

describe('report: API errors are reasons, never passes', () => {
  it('403 on pods makes the CSI and Tekton controller checks unknown', async () => {
    const server = await startCluster({ tektonFlags: DISABLED });
    servers.push(server);
    server.inject('GET', '/api/v1/pods', { status: 403 });
    const out = await runCli(['report', '--kubeconfig', server.writeKubeconfig(), '--output', 'json']);
    const report = JSON.parse(out.stdout) as ClusterReport;
    const f = report.cluster.findings.find((x) => x.ruleId === 'csi-provisioner-throttling')!;
    assert.equal(f.status, 'unknown');
    assert.match(f.message, /cannot list Pods: HTTP 403/);
    assert.equal(report.cluster.findings.find((x) => x.ruleId === 'tekton-controller-api-qps')?.status, 'unknown');
  });

  it('an unreadable log does not count as zero throttling', async () => {
    const server = await startCluster({ provisionerLog: '' });
    servers.push(server);
    server.inject('GET', '/api/v1/namespaces/longhorn-system/pods/longhorn-csi-controller-0/log', { status: 403 });
    const out = await runCli(['report', '--kubeconfig', server.writeKubeconfig(), '--output', 'json']);
    const report = JSON.parse(out.stdout) as ClusterReport;
    const statuses = ['csi-provisioner-throttling', 'csi-attacher-throttling'].map((id) => report.cluster.findings.find((x) => x.ruleId === id)?.status);
    assert.ok(statuses.includes('unknown'), `one of the two logs was refused: ${statuses}`);
    assert.ok(!statuses.includes('fail'));
  });

  it('403 on nodes: exit 2 with one sentence naming the permission', async () => {
    const server = await startCluster({});
    servers.push(server);
    server.inject('GET', '/api/v1/nodes', { status: 403 });
    const out = await runCli(['report', '--kubeconfig', server.writeKubeconfig()]);
    assert.equal(out.code, 2);
    assert.match(out.stderr, /^node-tuning-advisor report: cannot list nodes: HTTP 403.*list on nodes/);
    assert.doesNotMatch(out.stderr, /\n\s+at /);
  });

  it('--selector goes to the node LIST; cluster size is then unknown', async () => {
    const { server, report } = await run({}, '--selector', 'node-role.kubernetes.io/control-plane');
    assert.equal(server.requests.find((r) => r.path === '/api/v1/nodes')?.query.get('labelSelector'), 'node-role.kubernetes.io/control-plane');
    assert.deepEqual(report.nodes.map((n) => n.name), ['cp-1', 'cp-2', 'cp-3']);
    assert.equal(report.cluster.findings.find((f) => f.ruleId === 'cluster-events-split')?.status, 'unknown');
    assert.equal(report.fleet[0]?.text, 'etcd-fsync-latency on 3/3 control-plane nodes');
  });
});
