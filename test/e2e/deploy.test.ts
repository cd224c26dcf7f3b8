// Issue 24: every documented `kubectl apply -k` works first time on a bare v1.36 control plane (no
// Prometheus Operator CRDs), with the real kubectl 1.35: the base, each distribution overlay, the probe,
// image and grafana-dashboard overlays; each is GitOps-clean (a second `kubectl apply -k` reports every
// object unchanged and `kubectl diff -k` finds nothing: a field the server drops or defaults would show
// as drift in Argo CD or Flux forever), and a second server-side apply writes nothing;
// `kubectl delete -k` resolves every object of each; the prometheus-operator
// overlay applies once the CRDs are served; and the agent, as the kubeadm overlay deploys it (its
// DaemonSet's args, env and rules as the server holds them, a pod-bound token), publishes on its Node.
// A real `kubectl delete -k manifests/` removes it all (with kube-controller-manager to finish the
// namespace) and a fresh `kubectl apply -k manifests/` installs it again.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { SILENCE_ANNOTATION } from '../../src/agent/silence.ts';
import { parseAnnotations } from '../../src/wire/annotations.ts';
import { CRITICAL_FAILING_LABEL, GRADE_LABEL } from '../../src/wire/node-labels.ts';
import { realServerTier } from '../helpers/control-plane.ts';
import { createReadyNode } from '../helpers/kube-objects.ts';
import { BASE, DISTRIBUTIONS, KUSTOMIZATIONS, PROMETHEUS_OVERLAY, REPO } from '../helpers/manifests.ts';
import { AGENT_NAMESPACE, CRD_DIR, type DeploySuite, agentIdentity, agentOnceAsDeployed, installCrds, ownAnnotations, startDeploySuite } from '../helpers/shipped.ts';

const NODE = 'deploy-kubeadm-1';
const HOST = path.join(REPO, 'test/fixtures/hosts/kubeadm-1.30');
const SEED_HOST = path.join(REPO, 'test/fixtures/hosts/seed-000-before');
const NO_CONTAINERD = path.join(REPO, 'manifests/components/no-containerd-config');

/** A kustomization in `dir` of the overlay `resource` with the component on top, as an operator writes one. */
async function withComponent(dir: string, resource: string, component: string): Promise<string> {
  await mkdir(dir, { recursive: true });
  const rel = (to: string) => path.relative(dir, to);
  await writeFile(path.join(dir, 'kustomization.yaml'), `apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - ${rel(resource)}\ncomponents:\n  - ${rel(component)}\n`);
  return dir;
}

describe('kubectl apply -k / delete -k of every kustomization on a bare control plane', realServerTier(), () => {
  let suite: DeploySuite;
  // The suite's control plane and temp dir, for the tests below.
  let cp: DeploySuite['cp'];
  let tmp: string;

  before(async () => {
    suite = await startDeploySuite('nta-deploy-', { controllerManager: true });
    ({ cp, tmp } = suite);
  });
  after(async () => { await suite?.stop(); });

  const applyK = (dir: string) => cp.kubectl(['apply', '-k', dir]);

  /** A second `kubectl apply -k` right after the first: every object unchanged; `kubectl diff -k`: exit 0, no output. */
  async function assertInSync(name: string, dir: string): Promise<void> {
    const again = await applyK(dir);
    assert.equal(again.code, 0, `${name}: second kubectl apply -k\n${again.stderr}`);
    const lines = again.stdout.trim().split('\n');
    assert.deepEqual(lines.filter((l) => !l.endsWith(' unchanged')), [], `${name}: a second apply changed objects (the server drops or defaults a field the manifest writes)`);
    const diff = await cp.kubectl(['diff', '-k', dir]);
    assert.equal(diff.code, 0, `${name}: kubectl diff -k\n${diff.stdout}${diff.stderr}`);
    assert.equal(diff.stdout, '');
  }

  test('each kustomization but prometheus-operator: apply -k exits 0 and is in sync at once, delete -k (server dry run) exits 0; each again with no-containerd-config on top', async (t) => {
    const plain = Object.entries(KUSTOMIZATIONS).filter(([, dir]) => dir !== PROMETHEUS_OVERLAY);
    assert.ok(DISTRIBUTIONS.every((d) => KUSTOMIZATIONS[`overlays/${d}`]), 'an overlay per distribution family');
    for (const [name, dir] of plain) {
      const applied = await applyK(dir);
      assert.equal(applied.code, 0, `${name}: kubectl apply -k\n${applied.stderr}`);
      assert.match(applied.stdout, /daemonset\.apps\/node-tuning-advisor (created|configured|unchanged)/, name);
      await assertInSync(name, dir);
      t.diagnostic(`${name}: ${applied.stdout.trim().split('\n').length} objects applied`);
    }
    // Server-side apply (docs/deploy.md "GitOps"): a second one writes nothing.
    const versions = async () => (await cp.kubectl(['get', '-k', BASE, '-o', 'jsonpath={range .items[*]}{.kind}/{.metadata.name}={.metadata.resourceVersion} {end}'])).stdout;
    const serverSide = ['apply', '--server-side', '--force-conflicts', '-k', BASE];
    assert.equal((await cp.kubectl(serverSide)).code, 0);
    const before = await versions();
    const again = await cp.kubectl(serverSide);
    assert.equal(again.code, 0, again.stderr);
    assert.equal(await versions(), before, 'a second server-side apply changed no object');
    // A server-side dry run changes nothing, and every object of each kustomization exists now: all at once.
    await Promise.all(plain.map(async ([name, dir]) => {
      const deleted = await cp.kubectl(['delete', '-k', dir, '--dry-run=server']);
      assert.equal(deleted.code, 0, `${name}: kubectl delete -k --dry-run=server\n${deleted.stderr}`);
    }));
    // The image overlay's registry reached the server.
    await applyK(KUSTOMIZATIONS['overlays/image'] as string);
    const ds = await cp.must('GET', `/apis/apps/v1/namespaces/${AGENT_NAMESPACE}/daemonsets/node-tuning-advisor`);
    assert.equal(ds.spec.template.spec.containers[0].image, 'registry.example.com/platform/node-tuning-advisor:0.1.0');
    // components/no-containerd-config on top of each: applies over what is there, and every DaemonSet
    // it applied (the probe overlay has two) then mounts no /etc/containerd on the server.
    for (const [name, dir] of plain) {
      const applied = await applyK(await withComponent(path.join(tmp, 'no-containerd', name), dir, NO_CONTAINERD));
      assert.equal(applied.code, 0, `${name} + no-containerd-config: kubectl apply -k\n${applied.stderr}`);
      const daemonSets = [...applied.stdout.matchAll(/daemonset\.apps\/(\S+) (?:created|configured|unchanged)/g)].map((m) => m[1] as string);
      assert.ok(daemonSets.length > 0, applied.stdout);
      for (const ds of daemonSets) {
        const pod = (await cp.must('GET', `/apis/apps/v1/namespaces/${AGENT_NAMESPACE}/daemonsets/${ds}`)).spec.template.spec;
        const paths = [...pod.volumes.map((v: { hostPath?: { path: string } }) => v.hostPath?.path), ...pod.containers[0].volumeMounts.map((m: { mountPath: string }) => m.mountPath)];
        assert.ok(paths.includes('/usr') && paths.includes('/host/usr'), `${name}: ${ds} keeps its other mounts`);
        assert.ok(!paths.some((p) => p?.endsWith('/etc/containerd')), `${name} + no-containerd-config: ${ds} still mounts /etc/containerd: ${paths}`);
      }
    }
  });

  test('prometheus-operator overlay: refused while the CRDs are missing (naming the kind), applied once they are served', async () => {
    const refused = await applyK(PROMETHEUS_OVERLAY);
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /no matches for kind "(ServiceMonitor|PrometheusRule)"/);
    await installCrds(cp, [path.join(CRD_DIR, 'monitoring.coreos.com_prometheusrules.yaml'), path.join(CRD_DIR, 'servicemonitors-minimal.yaml')]);
    const applied = await applyK(PROMETHEUS_OVERLAY);
    assert.equal(applied.code, 0, applied.stderr);
    assert.match(applied.stdout, /servicemonitor\.monitoring\.coreos\.com\/node-tuning-advisor created/);
    assert.match(applied.stdout, /prometheusrule\.monitoring\.coreos\.com\/node-tuning-advisor created/);
    await assertInSync('overlays/prometheus-operator', PROMETHEUS_OVERLAY);
  });

  // Two nodes, each with its agent as the kubeadm overlay deploys it (their own rule dirs; the
  // overrides ConfigMap is read when an agent starts): side by side, each waits on the agent's 1 request/s.
  test('the agent as the kubeadm overlay deploys it, on two nodes at once', { concurrency: true }, async (t) => {
    assert.equal((await applyK(KUSTOMIZATIONS['overlays/kubeadm'] as string)).code, 0);
    await Promise.all([
      t.test('it publishes on its Node', async () => {
        await createReadyNode(cp, NODE, { kubeletVersion: 'v1.30.2' });
        await agentOnceAsDeployed(suite, await agentIdentity(cp, NODE, tmp), { hostRoot: HOST, rulesDir: path.join(tmp, 'rules') });
        const published = await ownAnnotations(cp, NODE);
        assert.match(published['node-tuning-advisor.io/summary'] ?? '', /^\d+\/100 [A-F]\b/, JSON.stringify(published));
        // Its labels, as an operator reads them: the grade of the summary, the failing critical rules of the report.
        const shown = await cp.kubectl(['get', 'node', NODE, '-L', GRADE_LABEL, '-L', CRITICAL_FAILING_LABEL, '--no-headers']);
        assert.equal(shown.code, 0, shown.stderr);
        const report = parseAnnotations(published);
        assert.equal(report.state, 'ok');
        const critical = report.state === 'ok' ? report.report.rules.filter((r) => r.status === 'fail' && r.severity === 'critical').length : -1;
        const grade = /^\d+\/100 ([A-F])\b/.exec(published['node-tuning-advisor.io/summary'] ?? '')?.[1];
        assert.match(shown.stdout, new RegExp(`\\s${grade}\\s+${critical}\\s*$`), `${shown.stdout} (grade ${grade}, ${critical} critical failing): ${JSON.stringify(published)}`);
      }),
      t.test('per-node silencing: the operator\'s Node annotation and the overrides ConfigMap take rules out on the next scan; the agent cannot lift a silence', async () => {
        const node = 'deploy-silenced-1';
        await createReadyNode(cp, node, { kubeletVersion: 'v1.20.2' });
        const identity = await agentIdentity(cp, node, tmp);
        const once = async () => {
          const agent = await agentOnceAsDeployed(suite, identity, { hostRoot: SEED_HOST, rulesDir: path.join(tmp, `rules-${Date.now()}`) });
          const report = parseAnnotations(await ownAnnotations(cp, node));
          assert.equal(report.state, 'ok');
          return { log: agent.log, rules: report.state === 'ok' ? report.report.rules.map((r) => r.rule) : [], failing: report.state === 'ok' ? report.report.rules.filter((r) => r.status === 'fail').map((r) => r.rule) : [] };
        };
        const before = await once();
        assert.ok(before.failing.length >= 3, `the fixture fails several rules: ${before.failing}`);
        const [silenced, overridden, kept] = before.failing as [string, string, string];
        const annotated = await cp.kubectl(['annotate', 'node', node, `${SILENCE_ANNOTATION}=${silenced}, no-such-rule`]);
        assert.equal(annotated.code, 0, annotated.stderr);
        const overrides = `apiVersion: node-tuning-advisor.io/v1\nkind: RuleOverrides\noverrides:\n  - id: ${overridden}\n    disabled: true\n`;
        await writeFile(path.join(tmp, 'site.yaml'), overrides);
        const created = await cp.kubectl(['-n', AGENT_NAMESPACE, 'create', 'configmap', 'node-tuning-advisor-overrides', `--from-file=${path.join(tmp, 'site.yaml')}`]);
        assert.equal(created.code, 0, created.stderr);
        const after = await once();
        assert.ok(!after.rules.includes(silenced) && !after.rules.includes(overridden), `${silenced}, ${overridden} gone: ${after.rules}`);
        assert.ok(after.failing.includes(kept), `${kept} still reported`);
        assert.match(after.log, new RegExp(`not evaluating ${silenced}, no-such-rule on this Node; no such rule: no-such-rule`));
        // The silence is the operator's: the agent's own token may not touch it.
        const lift = await cp.request('PATCH', `/api/v1/nodes/${node}`, { metadata: { annotations: { [SILENCE_ANNOTATION]: null } } }, { token: identity.token, contentType: 'application/merge-patch+json' });
        assert.equal(lift.status, 422, JSON.stringify(lift.body));
        assert.match(lift.body.message, /may change only annotations under node-tuning-advisor\.io\//);
        assert.equal((await cp.kubectl(['-n', AGENT_NAMESPACE, 'delete', 'configmap', 'node-tuning-advisor-overrides'])).code, 0);
      }),
    ]);
  });

  test('delete -k manifests/ removes everything (namespace included); apply -k manifests/ installs it again', async () => {
    // kubectl waits until the namespace is gone; its pods (the DaemonSet's on the node, the test's
    // agent pod) go when their kubelet confirms, which the test does, as a kubelet would.
    let deleting = true;
    const kubelet = (async () => {
      while (deleting) {
        await cp.request('DELETE', `/api/v1/namespaces/${AGENT_NAMESPACE}/pods?gracePeriodSeconds=0`);
        await new Promise((r) => setTimeout(r, 500));
      }
    })();
    const deleted = await cp.kubectl(['delete', '-k', BASE, '--timeout=60s']);
    deleting = false;
    await kubelet;
    assert.equal(deleted.code, 0, deleted.stderr);
    assert.equal((await cp.request('GET', `/api/v1/namespaces/${AGENT_NAMESPACE}`)).status, 404);
    assert.equal((await cp.request('GET', '/apis/rbac.authorization.k8s.io/v1/clusterroles/node-tuning-advisor')).status, 404);
    const again = await applyK(BASE);
    assert.equal(again.code, 0, again.stderr);
  });
});
