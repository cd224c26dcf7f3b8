// `report` on a real control plane: six Nodes, four of them annotated by the bundled agent itself
// (`agent --once` with each node's pod-bound token, fixture host trees), one without an agent, one
// with a broken annotation; Tekton's PipelineRun CRD with runs, claims and storage classes; a CSI
// controller pod and Tekton's controller whose logs the real kube-apiserver fetches from the test
// playing their kubelet. Run with the README's RBAC for `report`; what it prints must be what the
// Nodes carry, and the server's audit log must show the documented requests, all reads, all granted.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';
import type { ClusterReport } from '../../src/cluster/report.ts';
import { REPORT_KEY } from '../../src/publish/annotations.ts';
import { auditArgs, describeRequests, type AuditLog } from '../helpers/audit.ts';
import { AgentProcess, buildApp } from '../helpers/bundled-agent.ts';
import { THROTTLE_LINES } from '../helpers/cluster-fixture.ts';
import { ControlPlane, realServerTier } from '../helpers/control-plane.ts';
import { createReadyNode, ensureNamespace, ensureServiceAccount } from '../helpers/kube-objects.ts';
import { KubeletLogs } from '../helpers/kubelet-logs.ts';
import { BASE, REPO } from '../helpers/manifests.ts';
import { CRD_DIR, agentIdentity, applyKustomization, daemonSetRun, installCrds } from '../helpers/shipped.ts';

const REPORTER = 'ci-reporter';
const TOKEN = 'report-e2e-token-0123456789abcdef';
const CP = 'node-role.kubernetes.io/control-plane';
/** Node → the fixture host its agent scans (cp-* get the control-plane label). */
const AGENTS: Record<string, string> = {
  'cp-1': 'etcd-lvm-chain', 'cp-2': 'rke2-server', 'cp-3': 'etcd-kubeadm-nvme', 'worker-1': 'intel-pstate-epp-power',
};
const MERGE = 'application/merge-patch+json';
const recent = (minutesAgo: number) => new Date(Date.now() - minutesAgo * 60_000).toISOString();

/** The ClusterRole the README gives for `report` (section "Cluster view"), as written there. */
async function readmeReportRules(): Promise<unknown[]> {
  const readme = await readFile(path.join(REPO, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('**RBAC** for `report`'));
  const block = /```yaml\n([\s\S]*?)```/.exec(section)?.[1];
  assert.ok(block, 'README has the RBAC block for report');
  return parse(block).rules;
}

describe('report on a real kube-apiserver', realServerTier(), () => {
  let cp: ControlPlane;
  let audit: AuditLog;
  let tmp: string;
  let bundle: string;
  let kubelet: KubeletLogs;
  let kubeconfig: string;

  before(async () => {
    tmp = await mkdtemp(path.join(tmpdir(), 'nta-report-e2e-'));
    const auditing = await auditArgs(tmp, [REPORTER]);
    audit = auditing.log;
    [cp, bundle, kubelet] = await Promise.all([
      ControlPlane.start({ apiserverArgs: auditing.args, extraTokens: [{ token: TOKEN, user: REPORTER }] }),
      buildApp(path.join(tmp, 'app')), KubeletLogs.start(tmp),
    ]);
    const applied = await applyKustomization(cp, BASE, ['ServiceMonitor', 'PrometheusRule']);
    assert.equal(applied.code, 0, applied.stderr);
    await installCrds(cp, [path.join(CRD_DIR, 'tekton.dev_pipelineruns.yaml')]);
    await cp.must('POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles',
      { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'node-tuning-advisor-report' }, rules: await readmeReportRules() });
    await cp.must('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
      apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'node-tuning-advisor-report' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'node-tuning-advisor-report' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: REPORTER }],
    });
    kubeconfig = await cp.writeKubeconfig(path.join(tmp, 'reporter.kubeconfig'), REPORTER, TOKEN);

    for (const name of ['cp-1', 'cp-2', 'cp-3', 'worker-1', 'worker-2', 'worker-3']) {
      await createReadyNode(cp, name, name.startsWith('cp-') ? { labels: { [CP]: '' } } : {});
      await cp.must('PATCH', `/api/v1/nodes/${name}/status`, { status: kubelet.nodeStatus() }, { contentType: MERGE });
    }
    await cp.must('PATCH', '/api/v1/nodes/worker-3', { metadata: { annotations: { [REPORT_KEY]: '{"schemaVersion":1,"score":"high"' } } }, { contentType: MERGE });
    await Promise.all(Object.entries(AGENTS).map(async ([node, host]) => {
      const identity = await agentIdentity(cp, node, tmp);
      const run = await daemonSetRun(cp, 'node-tuning-advisor', { node, hostRoot: path.join(REPO, 'test/fixtures/hosts', host), rulesDir: path.join(tmp, `rules-${node}`), kubeconfig: identity.kubeconfig });
      // --probe-interval off: the fsync probe would write 22 MiB into the fixture's etcd dir.
      const once = AgentProcess.start(bundle, [...run.args, '--once', '--probe-interval=off'], run.env);
      assert.equal(await once.wait(), 0, `${node}: ${once.log}`);
    }));
    await tekton();
    await csi();
  });
  after(async () => {
    await cp?.stop();
    await kubelet?.stop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  async function create(urlPath: string, obj: Record<string, unknown>): Promise<void> {
    await cp.must('POST', urlPath, obj);
  }

  /** Tekton with the affinity assistant off, RWO claims in both workspace shapes (seed 001). */
  async function tekton(): Promise<void> {
    for (const ns of ['tekton-pipelines', 'ci', 'team-a']) await ensureNamespace(cp, ns);
    await create('/api/v1/namespaces/team-a/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'feature-flags' }, data: { unrelated: 'yes' } });
    await create('/api/v1/namespaces/tekton-pipelines/configmaps', {
      apiVersion: 'v1', kind: 'ConfigMap', data: { 'disable-affinity-assistant': 'true', coschedule: 'workspaces' },
      metadata: { name: 'feature-flags', labels: { 'app.kubernetes.io/part-of': 'tekton-pipelines', 'app.kubernetes.io/instance': 'default' } },
    });
    await create('/apis/storage.k8s.io/v1/storageclasses', { apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name: 'longhorn', annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } }, provisioner: 'driver.longhorn.io' });
    await create('/apis/storage.k8s.io/v1/storageclasses', { apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name: 'nfs' }, provisioner: 'nfs.csi.k8s.io' });
    await create('/apis/storage.k8s.io/v1/csidrivers', { apiVersion: 'storage.k8s.io/v1', kind: 'CSIDriver', metadata: { name: 'driver.longhorn.io' }, spec: {} });
    await create('/apis/storage.k8s.io/v1/csidrivers', { apiVersion: 'storage.k8s.io/v1', kind: 'CSIDriver', metadata: { name: 'nfs.csi.k8s.io' }, spec: { attachRequired: false } });
    await create('/api/v1/namespaces/ci/persistentvolumeclaims', {
      apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'shared-src' },
      spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'nfs', resources: { requests: { storage: '1Gi' } } },
    });
    await create('/apis/tekton.dev/v1/namespaces/ci/pipelineruns', {
      apiVersion: 'tekton.dev/v1', kind: 'PipelineRun', metadata: { name: 'build-41' },
      spec: { pipelineRef: { name: 'build' }, workspaces: [{ name: 'cache', emptyDir: {} }, { name: 'src', persistentVolumeClaim: { claimName: 'shared-src' } }] },
    });
    await create('/apis/tekton.dev/v1/namespaces/ci/pipelineruns', {
      apiVersion: 'tekton.dev/v1', kind: 'PipelineRun', metadata: { name: 'build-42' },
      spec: { pipelineRef: { name: 'build' }, workspaces: [{ name: 'source', volumeClaimTemplate: { spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } } }] },
    });
    await pod('tekton-pipelines', 'tekton-pipelines-controller-7d9', [
      { name: 'tekton-pipelines-controller', image: 'registry.example/tektoncd/pipeline/controller:v0.65.0', args: ['-kube-api-qps', '5', '-kube-api-burst=10'] },
    ]);
    kubelet.set('tekton-pipelines', 'tekton-pipelines-controller-7d9', 'tekton-pipelines-controller', THROTTLE_LINES);
  }

  /** A CSI controller pod whose provisioner logs client-side throttling (seed 002); a clean attacher. */
  async function csi(): Promise<void> {
    await ensureNamespace(cp, 'longhorn-system');
    await pod('longhorn-system', 'longhorn-csi-controller-0', [
      { name: 'csi-provisioner', image: 'registry.example/sig-storage/csi-provisioner:v3.1.0', args: ['--v=2', '--csi-address=$(ADDRESS)'] },
      { name: 'csi-attacher', image: 'registry.example/sig-storage/csi-attacher:v4.5.0', args: ['--kube-api-qps=20', '--kube-api-burst=40'] },
      { name: 'longhorn-csi-plugin', image: 'registry.example/longhornio/longhorn-manager:v1.6.0' },
    ]);
    await pod('default', 'web-1', [{ name: 'web', image: 'nginx:1.27' }]);
    kubelet.set('longhorn-system', 'longhorn-csi-controller-0', 'csi-provisioner', THROTTLE_LINES);
    kubelet.set('longhorn-system', 'longhorn-csi-controller-0', 'csi-attacher', `${recent(2)} I1201 10:00:00.000000 1 main.go:99] Attacher started\n`);
  }

  async function pod(namespace: string, name: string, containers: unknown[]): Promise<void> {
    await ensureServiceAccount(cp, namespace, 'default');
    await create(`/api/v1/namespaces/${namespace}/pods`, { apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { nodeName: 'worker-2', containers } });
  }

  const runReport = async (...args: string[]) => {
    const proc = AgentProcess.start(bundle, ['report', `--kubeconfig=${kubeconfig}`, ...args], {});
    const code = await proc.wait();
    return { code, out: proc.log };
  };

  test('JSON: every node as its agent published it, the fleet from those, the cluster checks, 10 requests all granted', async () => {
    const since = Date.now();
    const { code, out } = await runReport('--output=json');
    const report = JSON.parse(out) as ClusterReport;
    const nodes = (await cp.must('GET', '/api/v1/nodes')).items as any[];
    assert.equal(report.nodes.length, nodes.length);
    for (const node of nodes) {
      const row = report.nodes.find((r) => r.name === node.metadata.name);
      const raw = node.metadata.annotations?.[REPORT_KEY];
      if (node.metadata.name in AGENTS) {
        const published = JSON.parse(raw);
        assert.equal(row?.agent, 'ok', node.metadata.name);
        for (const [key, value] of Object.entries(published)) {
          assert.deepEqual((row?.report as Record<string, unknown> | undefined)?.[key], value, `${node.metadata.name}: ${key} is what the Node carries`);
        }
        assert.deepEqual(row?.roles, node.metadata.name.startsWith('cp-') ? ['control-plane'] : ['worker']);
      } else {
        assert.equal(row?.agent, raw === undefined ? 'none' : 'unreadable', node.metadata.name);
      }
    }
    const scored = report.nodes.filter((r) => r.agent === 'ok').map((r) => r.report?.score as number);
    assert.deepEqual(scored, [...scored].sort((a, b) => a - b), 'worst first');
    const failingOn = (rule: string) => nodes.filter((n) => n.metadata.name in AGENTS)
      .filter((n) => JSON.parse(n.metadata.annotations[REPORT_KEY]).rules.some((r: any) => r.rule === rule && r.status === 'fail')).map((n) => n.metadata.name).sort();
    assert.ok(report.fleet.length > 0);
    for (const group of report.fleet) assert.deepEqual([...group.nodes].sort(), failingOn(group.rule), group.rule);
    const status = (rule: string) => report.cluster.findings.find((f) => f.ruleId === rule)?.status;
    assert.equal(status('tekton-rwo-without-affinity-assistant'), 'fail');
    assert.equal(status('csi-provisioner-throttling'), 'fail');
    assert.equal(status('csi-attacher-throttling'), 'pass');
    assert.equal(report.cluster.facts['cluster.csi.external-provisioner.throttled']?.value, 3, 'the three lines, fetched through kube-apiserver');
    assert.equal(code, 0, 'warning rules fail, no critical one (--fail-on critical)');

    const requests = await audit.requests((r) => r.user === REPORTER && r.at >= since);
    const readme = await readFile(path.join(REPO, 'README.md'), 'utf8');
    const documented = Number(/a run sends (\d+) requests/.exec(readme)?.[1]);
    assert.equal(requests.length, documented, `as documented in the README\n${describeRequests(requests)}`);
    assert.equal(report.api.requests, requests.length, 'the report counts what the server saw');
    assert.deepEqual(requests.filter((r) => !['list', 'get'].includes(r.verb)), [], 'reads only');
    assert.deepEqual(requests.filter((r) => r.code >= 400), [], 'the README\'s RBAC grants every request');
    assert.equal(requests.filter((r) => r.path.endsWith('/log')).length, 3);
    for (const r of requests.filter((x) => x.path.endsWith('/log'))) assert.ok(['tailLines', 'limitBytes', 'sinceSeconds'].every((k) => Number(r.query.get(k)) > 0), r.uri);
    assert.equal(kubelet.requests.length, 3, 'each log tail reached the kubelet once');
  });

  test('the table shows each node\'s score, grade and failing rules as its annotation says, in 80 columns', async () => {
    const { out } = await runReport();
    const lines = out.split('\n');
    assert.deepEqual(lines.filter((l) => [...l].length > 80), []);
    const nodes = (await cp.must('GET', '/api/v1/nodes')).items as any[];
    for (const node of nodes) {
      const row = lines.find((l) => l.startsWith(`${node.metadata.name} `));
      assert.ok(row, `a row for ${node.metadata.name}`);
      if (node.metadata.name in AGENTS) {
        const published = JSON.parse(node.metadata.annotations[REPORT_KEY]);
        assert.match(row, new RegExp(`\\s${published.score}\\s+${published.grade}\\s`), row);
        for (const rule of published.rules.filter((r: any) => r.status === 'fail').map((r: any) => r.rule)) assert.ok(row.includes(rule) || row.endsWith('…'), `${rule} in: ${row}`);
      }
    }
    assert.match(lines.find((l) => l.startsWith('worker-2 ')) ?? '', /no agent/);
    assert.match(lines.find((l) => l.startsWith('worker-3 ')) ?? '', /unreadable/);
  });
});
