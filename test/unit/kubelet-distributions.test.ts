// The kubelet's settings on distribution layouts built from their upstream files (Bottlerocket,
// EKS AMIs): what a file's 0 means, and where the version that decides defaults comes from.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import kubelet from '../../src/collectors/kubelet/collector.ts';
import { factsOf, fixtureHost } from '../helpers/fixtures.ts';
import { fact, factsAt } from '../helpers/host-trees.ts';

test('Bottlerocket 1.28 with kube-api-burst=0: the file\'s 0 is the 1.28 default 100, not client-go\'s 10', async () => {
  const facts = await factsOf('bottlerocket-1.28-burst-zero', [kubelet]);
  assert.equal(fact(facts, 'kubelet.configFile').value, '/etc/kubernetes/kubelet/config');
  assert.equal(fact(facts, 'kubelet.version').value, '1.28');
  assert.equal(fact(facts, 'kubelet.version').source, '/etc/os-release');
  const burst = fact(facts, 'kubelet.kubeAPIBurst');
  assert.equal(burst.value, 100);
  assert.equal(burst.source, '/etc/kubernetes/kubelet/config');
  assert.match(burst.detail ?? '', /0 in \/etc\/kubernetes\/kubelet\/config.*config decoder/);
  assert.equal(fact(facts, 'kubelet.kubeAPIQPS').value, 50);
  assert.equal(fact(facts, 'kubelet.kubeAPIQPS').source, 'default');
  assert.equal(fact(facts, 'kubelet.serializeImagePulls').value, false);
});

test('the same Bottlerocket tree without /etc/os-release: kubeAPIBurst 0 is unknown with why, never client-go\'s 10', async (t) => {
  const root = await mkdtemp(path.join(os.tmpdir(), 'nta-br-'));
  t.after(() => rm(root, { recursive: true, force: true }));
  await cp(fixtureHost('bottlerocket-1.28-burst-zero'), root, { recursive: true });
  await rm(path.join(root, 'etc/os-release'));
  const facts = await factsAt(root, kubelet);
  const burst = fact(facts, 'kubelet.kubeAPIBurst');
  assert.equal(burst.value, null);
  assert.match(burst.unknown ?? '', /kubeAPIBurst: 0 in \/etc\/kubernetes\/kubelet\/config.*version.*unknown/);
});
