// The kubelet's settings on distribution layouts built from their upstream files (Bottlerocket,
// EKS AMIs): what a file's 0 means, and where the version that decides defaults comes from.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import kubelet from '../../src/collectors/kubelet/collector.ts';
import controlPlane from '../../src/collectors/control-plane-limits.ts';
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

test('MicroK8s: kubelite runs kubelet, scheduler and controller-manager; their flags are read from its args files', async () => {
  const facts = await factsOf('microk8s-kubelite', [kubelet, controlPlane]);
  const args = '/var/snap/microk8s/9044/args';
  assert.equal(fact(facts, 'kubelet.present').value, true);
  assert.equal(fact(facts, 'kubelet.configLayout').value, 'microk8s');
  assert.equal(fact(facts, 'kubelet.commandSource').value, `${args}/kubelet`);
  assert.equal(fact(facts, 'kubelet.version').value, '1.32.3');
  assert.equal(fact(facts, 'kubelet.version').source, '/snap/microk8s/9044/meta/snap.yaml');
  assert.deepEqual([fact(facts, 'kubelet.kubeAPIQPS').value, fact(facts, 'kubelet.kubeAPIBurst').value], [30, 60]);
  assert.equal(fact(facts, 'kubelet.kubeAPIQPS').detail, `set in ${args}/kubelet`);
  assert.equal(fact(facts, 'kubelet.eventRecordQPS').value, 50, 'the 1.32 default');
  assert.match(String(fact(facts, 'kubelet.qpsSetIn').value), /--kube-api-qps in \/var\/snap\/microk8s\/9044\/args\/kubelet line 17/);
  assert.match(String(fact(facts, 'kubelet.qpsFix').value), /snap restart microk8s\.daemon-kubelite/);
  assert.equal(fact(facts, 'scheduler.present').value, true);
  assert.equal(fact(facts, 'scheduler.kubeAPIQPS').value, 50);
  assert.match(fact(facts, 'scheduler.kubeAPIQPS').detail ?? '', /kube-scheduler\b.*args\/kube-scheduler/);
  assert.equal(fact(facts, 'controllerManager.present').value, true);
  assert.equal(fact(facts, 'controllerManager.kubeAPIQPS').value, 20);
  assert.match(String(fact(facts, 'controllerManager.qpsFix').value), /args\/kube-controller-manager.*snap restart microk8s\.daemon-kubelite/);
  assert.equal(fact(facts, 'apiserver.present').value, true);
  assert.equal(fact(facts, 'apiserver.maxRequestsInflight').value, 400);
});

test('a MicroK8s snapshot without processes: the args files under /var/snap/microk8s/current', async (t) => {
  const root = await mkdtemp(path.join(os.tmpdir(), 'nta-mk8s-'));
  t.after(() => rm(root, { recursive: true, force: true }));
  await cp(fixtureHost('microk8s-kubelite'), root, { recursive: true, verbatimSymlinks: true });
  await rm(path.join(root, 'proc'), { recursive: true });
  const facts = await factsAt(root, kubelet, controlPlane);
  assert.equal(fact(facts, 'kubelet.commandSource').value, '/var/snap/microk8s/current/args/kubelet');
  assert.equal(fact(facts, 'kubelet.kubeAPIQPS').value, 30);
  assert.equal(fact(facts, 'kubelet.version').value, '1.32.3', 'snap.yaml of the current revision');
  assert.equal(fact(facts, 'scheduler.present').value, true);
});

test('EKS AL2: --kubelet-extra-args in bootstrap.sh\'s 30-kubelet-extra-args.conf beat kubelet-config.json', async () => {
  const facts = await factsOf('eks-al2-extra-args', [kubelet]);
  const dropIn = '/etc/systemd/system/kubelet.service.d/30-kubelet-extra-args.conf';
  assert.equal(fact(facts, 'kubelet.configFile').value, '/etc/kubernetes/kubelet/kubelet-config.json');
  assert.deepEqual([fact(facts, 'kubelet.kubeAPIQPS').value, fact(facts, 'kubelet.kubeAPIBurst').value], [40, 80], 'not the JSON\'s 10/20');
  assert.equal(fact(facts, 'kubelet.kubeAPIQPS').detail, `set in ${dropIn} (KUBELET_EXTRA_ARGS)`);
  assert.equal(fact(facts, 'kubelet.maxPods').value, 58);
  assert.equal(fact(facts, 'kubelet.serializeImagePulls').value, false);
  assert.match(fact(facts, 'kubelet.eventRecordQPS').unknown ?? '', /version.*unknown/, 'no version on disk: unset fields are unknown, never a default');
  assert.match(String(fact(facts, 'kubelet.qpsSetIn').value), /--kube-api-qps in \/etc\/systemd\/system\/kubelet\.service\.d\/30-kubelet-extra-args\.conf line 2, variable KUBELET_EXTRA_ARGS/);
});

test('EKS AL2023: nodeadm\'s --config-dir drop-in sets the limits; --config-dir bounds the version for the rest', async () => {
  const facts = await factsOf('eks-al2023-nodeadm-dropin', [kubelet]);
  const dropIn = '/etc/kubernetes/kubelet/config.json.d/00-nodeadm.conf';
  assert.equal(fact(facts, 'kubelet.configFile').source, '/etc/eks/kubelet/environment (NODEADM_KUBELET_ARGS)');
  assert.deepEqual(fact(facts, 'kubelet.configDropIns').value, [dropIn]);
  assert.deepEqual([fact(facts, 'kubelet.kubeAPIQPS').value, fact(facts, 'kubelet.kubeAPIBurst').value], [100, 200]);
  assert.equal(fact(facts, 'kubelet.kubeAPIQPS').source, dropIn);
  assert.deepEqual([fact(facts, 'kubelet.registryPullQPS').value, fact(facts, 'kubelet.registryBurst').value], [20, 40]);
  assert.equal(fact(facts, 'kubelet.maxParallelImagePulls').value, 4);
  assert.equal(fact(facts, 'kubelet.eventRecordQPS').value, 50, 'the ≥ 1.28 default: --config-dir is its lower bound');
  assert.match(fact(facts, 'kubelet.eventRecordQPS').detail ?? '', /--config-dir, which only kubelets from 1\.28 accept/);
});
