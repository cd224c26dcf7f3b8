// Issue 37 item 1, as kustomize builds it (the real kubectl 1.35's kustomize): whatever an overlay
// renames (namePrefix, nameSuffix, namespace, together or alone), each admission policy binding still
// names an existing policy and holds the ServiceAccount the DaemonSet runs as. Before, the policies
// spelled the user name out in their CEL, which no rename touched. (test/e2e/admission-renamed.test.ts
// applies such overlays to a real control plane and runs the agent.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { parseAllDocuments } from 'yaml';
import { REPO, type K8sObject } from '../helpers/manifests.ts';
import { requireLayerTool } from '../helpers/real-tools.ts';

const OVERLAYS: Record<string, string[]> = {
  'as shipped': [],
  namePrefix: ['namePrefix: acme-'],
  nameSuffix: ['nameSuffix: -blue'],
  namespace: ['namespace: tuning'],
  'all three': ['namePrefix: acme-', 'nameSuffix: -blue', 'namespace: tuning'],
};

test('every overlay: each binding names an existing policy and holds the DaemonSet\'s ServiceAccount', async (t) => {
  const kubectl = await requireLayerTool(t, 'kubectl');
  if (!kubectl) return;
  const dir = await mkdtemp(path.join(tmpdir(), 'nta-renamed-overlay-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  for (const [name, lines] of Object.entries(OVERLAYS)) {
    // kustomize takes the base by a relative path only.
    await writeFile(path.join(dir, 'kustomization.yaml'), [`resources: [${path.relative(dir, path.join(REPO, 'manifests'))}]`, ...lines, ''].join('\n'));
    const { stdout } = await promisify(execFile)(kubectl, ['kustomize', dir], { maxBuffer: 64 << 20 }) as { stdout: string };
    const objects: K8sObject[] = parseAllDocuments(stdout).map((d) => d.toJS() as K8sObject).filter(Boolean);
    const daemonSet = objects.find((o) => o.kind === 'DaemonSet');
    const account = { namespace: daemonSet?.metadata.namespace, name: daemonSet?.spec.template.spec.serviceAccountName };
    assert.ok(objects.some((o) => o.kind === 'ServiceAccount' && o.metadata.name === account.name && o.metadata.namespace === account.namespace), `${name}: the DaemonSet's ServiceAccount exists`);
    const policies = new Set(objects.filter((o) => o.kind === 'ValidatingAdmissionPolicy').map((o) => o.metadata.name));
    const bindings = objects.filter((o) => o.kind === 'ValidatingAdmissionPolicyBinding');
    assert.equal(bindings.length, 3, `${name}: the Node, Event and heartbeat policies`);
    for (const binding of bindings) {
      assert.ok(policies.has(binding.spec.policyName), `${name}: ${binding.metadata.name} binds policy ${binding.spec.policyName}, which exists`);
      assert.deepEqual({ namespace: binding.spec.paramRef?.namespace, name: binding.spec.paramRef?.name }, account, `${name}: ${binding.metadata.name} holds the DaemonSet's ServiceAccount`);
    }
    for (const policy of objects.filter((o) => o.kind === 'ValidatingAdmissionPolicy')) {
      const held = (policy.spec.matchConditions as { expression: string }[]).map((c) => c.expression).join(' ');
      assert.match(held, /params\.metadata\.namespace \+ ':' \+ params\.metadata\.name/, `${name}: ${policy.metadata.name} matches its parameter, no user name spelled out`);
    }
  }
});
