// The Helm chart rendered by the real Helm 4 against the real kubectl 1.35's kustomize output: the
// default values are `kubectl kustomize manifests/`, each `distribution` is its overlay,
// prometheusOperator.enabled the prometheus-operator overlay (alone and with a distribution),
// dashboards.enabled the grafana-dashboard overlay, all minus the Namespace (Helm's
// --create-namespace). A difference on either side fails. Then each value changes exactly its fields,
// a bad value fails the render naming the fix, and another release namespace reaches every place the
// objects name it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CHART_DISTRIBUTIONS } from '../../scripts/sync-chart.ts';
import { parse } from 'yaml';
import { CHART, type Render, helmRenderer, objectDifferences, renderNotes, sortedObjects } from '../helpers/helm.ts';
import { BASE, DISTRIBUTIONS, type K8sObject, PROMETHEUS_OVERLAY, REPO, kustomize } from '../helpers/manifests.ts';
import { requireLayerTool } from '../helpers/real-tools.ts';

const withoutNamespace = (objects: K8sObject[]) => sortedObjects(objects.filter((o) => o.kind !== 'Namespace'));
const DEFAULTS = parse(readFileSync(path.join(CHART, 'values.yaml'), 'utf8'));
/** The uninstall's cleanup (templates/cleanup.yaml, written by hand): a Helm hook and its identity, which no kustomization has. */
const isCleanup = (o: K8sObject) => (o.metadata as { labels?: Record<string, string> }).labels?.['app.kubernetes.io/component'] === 'cleanup';
/** The render as the kustomizations can have it: the cleanup's objects left out. */
const kustomizable = (objects: K8sObject[]) => sortedObjects(objects.filter((o) => !isCleanup(o)));

async function setup(t: import('node:test').TestContext): Promise<{ render: Render; kubectl: string } | undefined> {
  const kubectl = await requireLayerTool(t, 'kubectl');
  if (!kubectl) return undefined;
  const render = await helmRenderer(t);
  return render ? { render, kubectl } : undefined;
}

test('default values: the objects of `kubectl kustomize manifests/` but the Namespace; each distribution: its overlay', async (t) => {
  const ready = await setup(t);
  if (!ready) return;
  assert.deepEqual([...CHART_DISTRIBUTIONS].sort(), [...DISTRIBUTIONS].sort(), 'a value per distribution overlay');
  const rendered = await ready.render();
  const notes = await renderNotes();
  assert.deepEqual(kustomizable(rendered.objects), withoutNamespace(kustomize(ready.kubectl, BASE)));
  for (const distribution of DISTRIBUTIONS) {
    const built = withoutNamespace(kustomize(ready.kubectl, path.join(REPO, 'manifests/overlays', distribution)));
    const chart = kustomizable((await ready.render({ set: [`distribution=${distribution}`] })).objects);
    assert.deepEqual(chart, built, `distribution=${distribution} renders overlays/${distribution}`);
  }
  // NOTES.txt's verify commands are docs/deploy.md's "3. Verify" ones, as written there.
  const deploy = readFileSync(path.join(REPO, 'docs/deploy.md'), 'utf8');
  const verify = /## 3\. Verify\n\n```sh\n([\s\S]*?)```/.exec(deploy)?.[1]?.split('\n').map((l) => l.trim()) ?? [];
  const shown = notes.split('\n').map((l) => l.trim()).filter((l) => /^(kubectl|curl) /.test(l) && !l.startsWith('kubectl label namespace'));
  assert.ok(shown.length >= 5, notes);
  for (const line of shown) assert.ok(verify.includes(line), `NOTES.txt: "${line}" is not in docs/deploy.md "3. Verify"`);
});

test('prometheusOperator.enabled: the prometheus-operator overlay; with distribution=kubeadm: both combined', async (t) => {
  const ready = await setup(t);
  if (!ready) return;
  const operator = await ready.render({ set: ['prometheusOperator.enabled=true'] });
  assert.deepEqual(kustomizable(operator.objects), withoutNamespace(kustomize(ready.kubectl, PROMETHEUS_OVERLAY)));
  // The combination docs/deploy.md shows: a kustomization of the kubeadm overlay and the component.
  const dir = await combined(t, 'overlays/kubeadm', 'components/prometheus-operator');
  const both = await ready.render({ set: ['prometheusOperator.enabled=true,distribution=kubeadm'] });
  assert.deepEqual(kustomizable(both.objects), withoutNamespace(kustomize(ready.kubectl, dir)));
});

/** A kustomization in a temp dir: `resources` one directory of manifests/, `components` one component of it. */
async function combined(t: import('node:test').TestContext, resource: string, component: string): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'nta-chart-combo-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const manifests = path.relative(dir, path.join(REPO, 'manifests'));
  await writeFile(path.join(dir, 'kustomization.yaml'), [
    'apiVersion: kustomize.config.k8s.io/v1beta1', 'kind: Kustomization',
    `resources: [${path.join(manifests, resource)}]`, `components: [${manifests}/${component}]`, '',
  ].join('\n'));
  return dir;
}

test('containerdConfig.mount=false: components/no-containerd-config on the base, and on the kubespray overlay', async (t) => {
  const ready = await setup(t);
  if (!ready) return;
  for (const resource of ['.', 'overlays/kubespray']) {
    const set = resource === '.' ? ['containerdConfig.mount=false'] : ['containerdConfig.mount=false,distribution=kubespray'];
    const chart = kustomizable((await ready.render({ set })).objects);
    const built = withoutNamespace(kustomize(ready.kubectl, await combined(t, resource, 'components/no-containerd-config')));
    assert.deepEqual(chart, built, `${set.join(' ')} renders ${resource} + no-containerd-config`);
    const ds = chart.find((o) => o.kind === 'DaemonSet') as K8sObject;
    assert.ok(!JSON.stringify(ds.spec.template.spec).includes('/etc/containerd'), 'no /etc/containerd volume or mount left');
  }
});

test('image, pullPolicy, digest, operator labels, resources: each changes exactly its fields', async (t) => {
  const ready = await setup(t);
  if (!ready) return;
  const base = (await ready.render()).objects;
  const agent = 'DaemonSet/node-tuning-advisor.spec.template.spec.containers.0';
  const job = 'Job/node-tuning-advisor-cleanup.spec.template.spec.containers.0';
  const changed = async (set: string[]) => {
    const objects = (await ready.render({ set })).objects;
    return { objects, paths: objectDifferences(base, objects) };
  };
  const ds = (objects: K8sObject[]) => objects.find((o) => o.kind === 'DaemonSet')!.spec.template.spec.containers[0];

  const image = await changed(['image.repository=registry.example.com/platform/node-tuning-advisor', 'image.tag=0.2.0', 'image.pullPolicy=Always']);
  assert.deepEqual(image.paths, [`${agent}.image`, `${agent}.imagePullPolicy`, `${job}.image`, `${job}.imagePullPolicy`], 'the uninstall Job runs the agent\'s image');
  assert.equal(ds(image.objects).image, 'registry.example.com/platform/node-tuning-advisor:0.2.0');
  assert.equal(ds(image.objects).imagePullPolicy, 'Always');

  const digest = await changed(['image.digest=sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef']);
  assert.equal(ds(digest.objects).image, `${DEFAULTS.image.repository}@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef`);
  assert.deepEqual(digest.paths, [`${agent}.image`, `${job}.image`]);

  const resources = await changed(['resources.limits.memory=256Mi']);
  assert.deepEqual(resources.paths, [`${agent}.resources.limits.memory`]);
  assert.deepEqual(ds(resources.objects).resources, { limits: { memory: '256Mi' }, requests: { cpu: '10m', memory: '80Mi' } }, 'maps merge over the defaults, as Helm coalesces');

  const labelled = await ready.render({ set: ['prometheusOperator.enabled=true', 'prometheusOperator.labels.release=kube-prometheus-stack'] });
  const plain = await ready.render({ set: ['prometheusOperator.enabled=true'] });
  assert.deepEqual(objectDifferences(plain.objects, labelled.objects), [
    'PrometheusRule/node-tuning-advisor.metadata.labels.release',
    'ServiceMonitor/node-tuning-advisor.metadata.labels.release',
  ]);
  const off = await ready.render({ set: ['prometheusOperator.labels.release=x'] });
  assert.deepEqual(objectDifferences(base, off.objects), [], 'labels alone do not create the objects');
});

test('a bad distribution or an empty image.repository fails the render, naming the values and the fix', async (t) => {
  const ready = await setup(t);
  if (!ready) return;
  await assert.rejects(ready.render({ set: ['distribution=gke'] }),
    /execution error at \(node-tuning-advisor\/templates\/[a-z-]+\.(yaml|txt):\d+:\d+\): distribution "gke" is not supported: set distribution to one of kubeadm, kubespray, k3s-rke2, eks, microk8s, or leave it empty for the base/);
  await assert.rejects(ready.render({ set: ['distribution=true'] }), /- at '\/distribution': got boolean, want string/, 'values.schema.json');
  await assert.rejects(ready.render({ set: ['image.repository='] }), /image\.repository is required: the node-tuning-advisor image to run \(values\.yaml\)/);
});

test('another release namespace: every object, subject and the policies\' service account name it; the Events Role stays in default', async (t) => {
  const ready = await setup(t);
  if (!ready) return;
  const namespace = `nta-helm-${process.pid}`;
  const { objects } = await ready.render({ namespace, set: ['prometheusOperator.enabled=true'] });
  const notes = await renderNotes({ namespace, set: ['prometheusOperator.enabled=true'] });
  const namespaces = new Set<string>();
  const texts: string[] = [];
  const walk = (v: unknown, key?: string) => {
    if (typeof v === 'string') { if (key === 'namespace') namespaces.add(v); texts.push(v); } else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) walk(x, Array.isArray(v) ? key : k);
  };
  walk(objects);
  assert.deepEqual([...namespaces].sort(), ['default', namespace].sort());
  // The cleanup's policy names its user; the agent's three hold the ServiceAccount their bindings name (paramRef).
  assert.deepEqual(texts.flatMap((s) => s.match(/system:serviceaccount:[^:']+:[^']+/g) ?? []).sort(), [`system:serviceaccount:${namespace}:node-tuning-advisor-cleanup`]);
  const bindings = objects.filter((o) => o.kind === 'ValidatingAdmissionPolicyBinding' && !isCleanup(o));
  assert.equal(bindings.length, 3);
  for (const b of bindings) assert.deepEqual(b.spec.paramRef, { name: 'node-tuning-advisor', namespace, parameterNotFoundAction: 'Allow' }, b.metadata.name);
  for (const o of objects) {
    for (const s of o.subjects ?? []) assert.equal(s.namespace, namespace, `${o.kind}/${o.metadata.name} subject`);
  }
  assert.deepEqual(objects.filter((o) => o.metadata.namespace === 'default').map((o) => o.kind).sort(), ['Role', 'RoleBinding']);
  assert.match(notes, new RegExp(`kubectl -n ${namespace} rollout status`));
});

test('the uninstall cleanup: a pre-delete hook Job with the chart\'s image in the release namespace, its own identity; cleanupOnUninstall=false leaves it out', async (t) => {
  const ready = await setup(t);
  if (!ready) return;
  const namespace = `nta-cleanup-${process.pid}`;
  const { objects } = await ready.render({ namespace, set: ['image.repository=registry.example.com/nta,image.tag=0.9.0,imagePullSecrets[0].name=regcred'] });
  const cleanup = objects.filter(isCleanup);
  assert.deepEqual(cleanup.map((o) => o.kind).sort(), ['ClusterRole', 'ClusterRoleBinding', 'Job', 'Role', 'RoleBinding', 'ServiceAccount',
    'ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding']);
  const job = cleanup.find((o) => o.kind === 'Job') as K8sObject;
  assert.deepEqual((job.metadata as { annotations?: unknown }).annotations, { 'helm.sh/hook': 'pre-delete', 'helm.sh/hook-delete-policy': 'before-hook-creation,hook-succeeded' });
  const pod = job.spec.template.spec;
  assert.equal(pod.serviceAccountName, 'node-tuning-advisor-cleanup');
  assert.deepEqual(pod.imagePullSecrets, [{ name: 'regcred' }]);
  assert.equal(pod.containers[0].image, 'registry.example.com/nta:0.9.0', 'the image of the agent');
  assert.equal(pod.containers[0].image, (objects.find((o) => o.kind === 'DaemonSet') as K8sObject).spec.template.spec.containers[0].image);
  assert.deepEqual(pod.containers[0].args, ['cleanup', `--agent-namespace=${namespace}`, '--revoke-agent-access']);
  assert.ok(cleanup.filter((o) => o.kind !== 'ClusterRole' && o.kind !== 'ClusterRoleBinding' && !o.kind.startsWith('Validating')).every((o) => o.metadata.namespace === namespace));
  const clusterRole = cleanup.find((o) => o.kind === 'ClusterRole') as K8sObject;
  assert.deepEqual(clusterRole.rules.map((r: any) => `${r.resources}:${r.verbs}:${r.resourceNames ?? '*'}`), ['nodes:list,patch:*', 'clusterrolebindings:delete:node-tuning-advisor']);
  const off = (await ready.render({ namespace, set: ['cleanupOnUninstall=false'] })).objects;
  assert.deepEqual(off.filter(isCleanup), []);
  await assert.rejects(ready.render({ namespace: 'kube-node-lease' }), /the release namespace kube-node-lease holds the kubelets' node Leases/);
});

/** The `helm install` commands of a doc's ```sh blocks (continuation lines joined, comments dropped), as words. */
function helmInstalls(doc: string): string[][] {
  const text = readFileSync(path.join(REPO, doc), 'utf8');
  const blocks = [...text.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1] as string);
  return blocks.flatMap((b) => b.replaceAll('\\\n', ' ').split('\n'))
    .map((line) => line.replace(/(^|\s+)#.*$/, '').trim()).filter((line) => line.startsWith('helm install '))
    .map((line) => line.split(/\s+/));
}

test('the documented `helm install` commands (README, docs/deploy.md) render with the values they set', async (t) => {
  const ready = await setup(t);
  if (!ready) return;
  const commands = [...helmInstalls('README.md'), ...helmInstalls('docs/deploy.md'), ...helmInstalls('charts/node-tuning-advisor/README.md')];
  assert.ok(commands.length >= 2, 'README and docs/deploy.md show the install');
  for (const words of commands) {
    const [, , name, chart, ...flags] = words;
    assert.ok(chart === 'charts/node-tuning-advisor' || chart === '<chart>', words.join(' '));
    const set: string[] = [];
    let namespace = 'default';
    for (let i = 0; i < flags.length; i++) {
      const flag = flags[i];
      if (flag === '--create-namespace') continue;
      const value = flags[++i] ?? '';
      if (flag === '-n' || flag === '--namespace') namespace = value;
      else if (flag === '--set') set.push(value);
      else assert.fail(`${words.join(' ')}: the test does not know ${flag}`);
    }
    const objects: K8sObject[] = (await ready.render({ name, namespace, set })).objects;
    const ds = objects.find((o) => o.kind === 'DaemonSet') as K8sObject;
    assert.equal(ds.metadata.namespace, namespace);
    assert.equal(ds.spec.template.spec.containers[0].image, `${DEFAULTS.image.repository}:0.1.0`, words.join(' '));
    assert.ok(ds.spec.template.spec.volumes.some((v: { name: string }) => v.name === 'host-etc-kubernetes-manifests'), 'distribution=kubeadm');
  }
});

test('dashboards.enabled: the grafana-dashboard overlay (the dashboard JSON in a ConfigMap labelled grafana_dashboard), in the namespace asked for', async (t) => {
  const ready = await setup(t);
  if (!ready) return;
  const on = await ready.render({ set: ['dashboards.enabled=true'] });
  assert.deepEqual(kustomizable(on.objects), withoutNamespace(kustomize(ready.kubectl, path.join(REPO, 'manifests/overlays/grafana-dashboard'))));
  const dashboard = on.objects.find((o) => o.metadata.name === 'node-tuning-advisor-dashboard') as K8sObject;
  assert.equal(dashboard.metadata.labels?.grafana_dashboard, '1');
  assert.deepEqual(JSON.parse(dashboard.data['node-tuning-advisor.json']), JSON.parse(readFileSync(path.join(REPO, 'manifests/dashboard/node-tuning-advisor.json'), 'utf8')));
  const elsewhere = await ready.render({ namespace: 'ops', set: ['dashboards.enabled=true,dashboards.namespace=monitoring'] });
  const moved = elsewhere.objects.filter((o) => o.metadata.namespace === 'monitoring').map((o) => `${o.kind}/${o.metadata.name}`);
  assert.deepEqual(moved, ['ConfigMap/node-tuning-advisor-dashboard'], 'only the dashboard goes to Grafana\'s namespace');
  assert.ok(!(await ready.render()).objects.some((o) => o.metadata.name === 'node-tuning-advisor-dashboard'), 'off by default');
});

test('prometheusOperator.runbookBaseUrl: every alert\'s runbook_url is absolute, under the base asked for, naming a runbook that exists', async (t) => {
  const ready = await setup(t);
  if (!ready) return;
  const alerts = async (set: string[]) => ((await ready.render({ set: ['prometheusOperator.enabled=true', ...set] })).objects
    .find((o) => o.kind === 'PrometheusRule') as K8sObject).spec.groups.flatMap((g: { rules: { alert?: string; annotations?: { runbook_url?: string } }[] }) => g.rules.filter((r) => r.alert));
  const pkg = JSON.parse(readFileSync(path.join(REPO, 'package.json'), 'utf8'));
  for (const rule of await alerts([])) {
    assert.equal(rule.annotations?.runbook_url, `${DEFAULTS.prometheusOperator.runbookBaseUrl}/${rule.alert}.md`);
    assert.ok(existsSync(path.join(REPO, 'docs/runbooks', `${rule.alert}.md`)), `${rule.alert}'s runbook`);
  }
  assert.match(DEFAULTS.prometheusOperator.runbookBaseUrl, new RegExp(`^https://\\S+/blob/v${pkg.version.replaceAll('.', '\\.')}/docs/runbooks$`), 'the runbooks of this release');
  const mine = await alerts(['prometheusOperator.runbookBaseUrl=https://wiki.example.com/runbooks']);
  assert.deepEqual(mine.map((r: { annotations: { runbook_url: string } }) => r.annotations.runbook_url), mine.map((r: { alert: string }) => `https://wiki.example.com/runbooks/${r.alert}.md`));
  await assert.rejects(ready.render({ set: ['prometheusOperator.runbookBaseUrl=https://wiki.example.com/runbooks/'] }), /- at '\/prometheusOperator\/runbookBaseUrl': '[^']+' does not match pattern/, 'no trailing slash');
});
