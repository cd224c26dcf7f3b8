// Every object of the base and of the probe overlay validates against the Kubernetes OpenAPI
// schemas (kubernetes-models; the Prometheus Operator's for ServiceMonitor and PrometheusRule).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { requireLayerTool } from '../helpers/real-tools.ts';
import path from 'node:path';
import { BASE, KUSTOMIZATIONS, OPERATOR_KINDS, REPO, kustomize, type K8sObject } from '../helpers/manifests.ts';

async function modelOf(obj: K8sObject): Promise<new (data: unknown) => { validate(): void }> {
  const [group, version] = obj.apiVersion.includes('/') ? obj.apiVersion.split('/') : [undefined, obj.apiVersion];
  const module = group === 'monitoring.coreos.com'
    ? `@kubernetes-models/prometheus-operator/${group}/${version}`
    : `kubernetes-models/${group ? `${group}/` : ''}${version}`;
  const Model = (await import(module) as Record<string, unknown>)[obj.kind];
  assert.ok(typeof Model === 'function', `no schema for ${obj.apiVersion} ${obj.kind}`);
  return Model as new (data: unknown) => { validate(): void };
}

for (const [name, dir] of Object.entries(KUSTOMIZATIONS)) {
  test(`kubectl kustomize ${name}: every object validates against its OpenAPI schema; CRD kinds only in the prometheus-operator overlay`, async (t) => {
    const kubectl = await requireLayerTool(t, 'kubectl');
    if (!kubectl) return;
    const objects = kustomize(kubectl, dir);
    const kinds = new Set(objects.map((o) => o.kind));
    for (const kind of ['Namespace', 'ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'ValidatingAdmissionPolicy',
      'ValidatingAdmissionPolicyBinding', 'ConfigMap', 'DaemonSet', 'Service']) {
      assert.ok(kinds.has(kind), `${name} has a ${kind}`);
    }
    const operator = OPERATOR_KINDS.filter((k) => kinds.has(k));
    assert.deepEqual(operator, name === 'overlays/prometheus-operator' ? OPERATOR_KINDS : [], `${name}: Prometheus Operator kinds`);
    for (const obj of objects) {
      const Model = await modelOf(obj);
      assert.doesNotThrow(() => new Model(obj).validate(), `${obj.kind}/${obj.metadata.name}`);
    }
  });
}

test('the validator does reject a broken DaemonSet (wrong type, missing selector)', async (t) => {
  const kubectl = await requireLayerTool(t, 'kubectl');
  if (!kubectl) return;
  const ds = kustomize(kubectl, BASE).find((o) => o.kind === 'DaemonSet') as K8sObject;
  const Model = await modelOf(ds);
  const wrongType = structuredClone(ds);
  wrongType.spec.template.spec.containers[0].securityContext.privileged = 'no';
  assert.throws(() => new Model(wrongType).validate());
  const missing = structuredClone(ds);
  delete missing.spec.selector;
  assert.throws(() => new Model(missing).validate());
});

test('the measure ClusterRole (manifests/measure) validates and is not part of the agent\'s kustomization', async (t) => {
  const kubectl = await requireLayerTool(t, 'kubectl');
  if (!kubectl) return;
  const objects = kustomize(kubectl, path.join(REPO, 'manifests/measure'));
  assert.deepEqual(objects.map((o) => `${o.kind}/${o.metadata.name}`), ['ClusterRole/node-tuning-advisor-measure']);
  const Model = await modelOf(objects[0] as K8sObject);
  assert.doesNotThrow(() => new Model(objects[0]).validate());
  assert.ok(!kustomize(kubectl, BASE).some((o) => o.metadata.name === 'node-tuning-advisor-measure'), 'the agent does not get it');
});
