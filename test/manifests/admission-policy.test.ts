// The ValidatingAdmissionPolicy's CEL, evaluated with a CEL implementation (@marcbachmann/cel-js)
// on sample admission requests the way kube-apiserver does: match conditions, then variables,
// then every validation must be true.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { evaluate } from '@marcbachmann/cel-js';
import { parseAllDocuments } from 'yaml';
import { REPO } from '../helpers/manifests.ts';

const SA = 'system:serviceaccount:node-tuning-advisor:node-tuning-advisor';
const docs = parseAllDocuments(await readFile(path.join(REPO, 'manifests/base/admission-policy.yaml'), 'utf8')).map((d) => d.toJS());
const policy = docs.find((d) => d.kind === 'ValidatingAdmissionPolicy');
const binding = docs.find((d) => d.kind === 'ValidatingAdmissionPolicyBinding');

type Obj = { metadata: Record<string, unknown>; spec?: unknown; status?: unknown };
interface Request { username?: string; nodeClaim?: string[] | undefined; operation?: string; subResource?: string }

/** 'allowed', 'not matched', or the message of the first failing validation. */
function admit(oldObject: Obj, object: Obj, req: Request = {}): string {
  const request = {
    operation: req.operation ?? 'UPDATE', subResource: req.subResource ?? '',
    userInfo: { username: req.username ?? SA, ...(req.nodeClaim ? { extra: { 'authentication.kubernetes.io/node-name': req.nodeClaim } } : {}) },
  };
  const ctx: Record<string, unknown> = { request, object, oldObject };
  for (const m of policy.spec.matchConditions) if (evaluate(m.expression, ctx) !== true) return 'not matched';
  const variables: Record<string, unknown> = {};
  ctx.variables = variables;
  for (const v of policy.spec.variables) variables[v.name] = evaluate(v.expression, ctx);
  for (const v of policy.spec.validations) {
    if (evaluate(v.expression, ctx) !== true) return v.message ?? String(evaluate(v.messageExpression, ctx));
  }
  return 'allowed';
}

const node = (name: string, annotations: Record<string, string> = {}, labels: Record<string, string> = { 'kubernetes.io/hostname': name }): Obj => ({
  metadata: { name, labels, annotations: { 'kubeadm.alpha.kubernetes.io/cri-socket': 'unix:///run/containerd/containerd.sock', ...annotations } },
  spec: { podCIDR: '10.244.1.0/24' },
  status: { nodeInfo: { kubeletVersion: 'v1.31.2' } },
});
const own = { nodeClaim: ['worker-1'] };
const P = 'node-tuning-advisor.io/';

test('the binding denies and names the policy', () => {
  assert.equal(binding.spec.policyName, policy.metadata.name);
  assert.deepEqual(binding.spec.validationActions, ['Deny']);
});

test('own node, own prefix: adding, changing and removing our annotations is allowed', () => {
  const before = node('worker-1', { [`${P}summary`]: 'score 80 B' });
  assert.equal(admit(before, node('worker-1', { [`${P}summary`]: 'score 95 A', [`${P}kernel-tick-rate`]: 'fail' }), own), 'allowed');
  assert.equal(admit(before, node('worker-1'), own), 'allowed');
  const bare = { ...node('worker-1'), metadata: { name: 'worker-1' } };
  assert.equal(admit(bare, { metadata: { name: 'worker-1', annotations: { [`${P}summary`]: 'x' } }, spec: bare.spec, status: bare.status }, own), 'allowed');
});

test('another node is denied, and so is a token without the node-name claim', () => {
  assert.match(admit(node('worker-2'), node('worker-2', { [`${P}summary`]: 'x' }), own), /only its own Node \(worker-1\), not worker-2/);
  assert.match(admit(node('worker-1'), node('worker-1', { [`${P}summary`]: 'x' }), { nodeClaim: undefined }), /no node-name claim/);
  assert.match(admit(node('worker-1'), node('worker-1', { [`${P}summary`]: 'x' }), { nodeClaim: [] }), /no node-name claim/);
});

test('a label, another prefix, a foreign annotation removed, spec, status: denied', () => {
  const before = node('worker-1');
  assert.match(admit(before, node('worker-1', {}, { 'kubernetes.io/hostname': 'worker-1', 'node-role.kubernetes.io/control-plane': '' }), own), /labels/);
  assert.match(admit(before, node('worker-1', {}, {}), own), /labels/);
  assert.match(admit(before, node('worker-1', { 'node-tuning-advisor.io.evil.com/x': '1' }), own), /only annotations under/);
  assert.match(admit(before, node('worker-1', { 'example.com/note': '1' }), own), /only annotations under/);
  const removed = node('worker-1');
  removed.metadata.annotations = {};
  assert.match(admit(before, removed, own), /only annotations under/);
  assert.match(admit(before, { ...node('worker-1'), spec: { podCIDR: '10.244.1.0/24', unschedulable: true } }, own), /spec or status/);
  assert.match(admit(before, { ...node('worker-1'), spec: { podCIDR: '10.244.1.0/24', taints: [{ key: 'k', effect: 'NoSchedule' }] } }, own), /spec or status/);
  assert.match(admit(before, { ...node('worker-1'), metadata: { ...node('worker-1').metadata, finalizers: ['x'] } }, own), /finalizers/);
  assert.match(admit(before, node('worker-1'), { ...own, subResource: 'status' }), /only updates Node metadata/);
});

test('other users are not matched: the policy constrains the advisor only', () => {
  assert.equal(admit(node('worker-2'), node('worker-2', {}, {}), { username: 'system:node:worker-2' }), 'not matched');
});
