import { test } from 'node:test';
import assert from 'node:assert/strict';
import controlPlaneLimits from '../../src/collectors/control-plane-limits.ts';
import { factsOf, tempHost } from '../helpers/fixtures.ts';
import { factsAt } from '../helpers/host-trees.ts';

test('kubeadm 1.30 manifests without QPS flags: scheduler 50/100, controller-manager 20/30, apiserver 400/200', async () => {
  const facts = await factsOf('kubeadm-1.30', [controlPlaneLimits]);
  assert.deepEqual([facts.value('scheduler.kubeAPIQPS'), facts.value('scheduler.kubeAPIBurst')], [50, 100]);
  assert.deepEqual([facts.value('controllerManager.kubeAPIQPS'), facts.value('controllerManager.kubeAPIBurst')], [20, 30]);
  assert.equal(facts.get('controllerManager.kubeAPIQPS')?.source, 'default');
  assert.deepEqual([facts.value('apiserver.maxRequestsInflight'), facts.value('apiserver.maxMutatingRequestsInflight')], [400, 200]);
  assert.equal(facts.value('apiserver.priorityAndFairness'), true);
  assert.equal(facts.value('scheduler.qpsSetIn'), '/etc/kubernetes/manifests/kube-scheduler.yaml after line 13', 'the command starts there; the flags go after it');
});

test('seed 000 after: --kube-api-qps=150/--kube-api-burst=200 read from both manifests', async () => {
  const facts = await factsOf('seed-000-after', [controlPlaneLimits]);
  for (const prefix of ['scheduler', 'controllerManager']) {
    assert.deepEqual([facts.value(`${prefix}.kubeAPIQPS`), facts.value(`${prefix}.kubeAPIBurst`)], [150, 200]);
    assert.equal(facts.get(`${prefix}.kubeAPIQPS`)?.source, 'flag:--kube-api-qps');
  }
  assert.equal(facts.value('scheduler.qpsSetIn'), '/etc/kubernetes/manifests/kube-scheduler.yaml line 18');
  assert.match(String(facts.value('scheduler.qpsFix')), /kube-scheduler\.yaml line 18 set --kube-api-qps=300/);
});

test('a scheduler with --config: clientConnection of the host file behind the hostPath mount, the flag ignored', async () => {
  const facts = await factsOf('scheduler-config', [controlPlaneLimits]);
  assert.deepEqual([facts.value('scheduler.kubeAPIQPS'), facts.value('scheduler.kubeAPIBurst')], [200, 300]);
  assert.equal(facts.get('scheduler.kubeAPIQPS')?.source, '/srv/kubernetes/scheduler/config.yaml', 'not the decoy at the in-container path');
  assert.match(facts.get('scheduler.kubeAPIQPS')?.detail ?? '', /--kube-api-qps ignored because --config is given/);
  assert.match(String(facts.value('scheduler.qpsFix')), /\/srv\/kubernetes\/scheduler\/config\.yaml line 5 set clientConnection\.qps: 400/);
});

test('k3s server: embedded components read from kube-scheduler-arg / kube-controller-manager-arg', async () => {
  const facts = await factsOf('k3s-config-dir', [controlPlaneLimits]);
  assert.equal(facts.value('scheduler.present'), true);
  assert.equal(facts.value('scheduler.kubeAPIQPS'), 50);
  assert.equal(facts.value('controllerManager.qpsSetIn'), '/etc/rancher/k3s/config.yaml (kube-controller-manager-arg)');
  assert.match(String(facts.value('controllerManager.qpsFix')), /kube-controller-manager-arg entries "kube-api-qps=150"/);
});

test('a worker has no control-plane components', async () => {
  const facts = await factsOf('kubeadm-1.26', [controlPlaneLimits]);
  assert.equal(facts.value('scheduler.present'), false);
  assert.equal(facts.has('scheduler.kubeAPIQPS'), false);
});

test('a live kube-scheduler process wins over its manifest; its --config is read through /proc/<pid>/root', async (t) => {
  const host = await tempHost(t, {
    '/proc/300/cmdline': 'kube-scheduler\0--config\0/etc/sched/config.yaml\0',
    '/proc/300/comm': 'kube-scheduler\n',
    '/proc/300/root': '->../..',
    '/etc/sched/config.yaml': 'clientConnection:\n  qps: 0\n  burst: 250\n',
    '/etc/kubernetes/manifests/kube-scheduler.yaml': 'spec:\n  containers:\n  - name: kube-scheduler\n    command: [kube-scheduler, --kube-api-qps=5]\n',
  });
  const facts = await factsAt(host, controlPlaneLimits);
  assert.equal(facts.value('scheduler.kubeAPIQPS'), 50, 'qps 0 in the file is defaulted by the scheduler');
  assert.equal(facts.value('scheduler.kubeAPIBurst'), 250);
  assert.equal(facts.get('scheduler.kubeAPIBurst')?.source, '/proc/300/root/etc/sched/config.yaml');
});

test('a malformed manifest or a bad flag value is unknown with the file named', async (t) => {
  const host = await tempHost(t, {
    '/etc/kubernetes/manifests/kube-scheduler.yaml': 'spec: [\n',
    '/etc/kubernetes/manifests/kube-controller-manager.yaml': 'spec:\n  containers:\n  - command: [kube-controller-manager, --kube-api-qps=lots]\n',
  });
  const facts = await factsAt(host, controlPlaneLimits);
  assert.match(facts.get('scheduler.kubeAPIQPS')?.unknown ?? '', /kube-scheduler\.yaml is not valid YAML/);
  assert.match(facts.get('controllerManager.kubeAPIQPS')?.unknown ?? '', /--kube-api-qps=lots .* not a number/);
  assert.equal(facts.value('controllerManager.kubeAPIBurst'), 30);
});

test('rke2: values read from its pod-manifests, the fix goes to kube-scheduler-arg (rke2 rewrites the manifests)', async () => {
  const facts = await factsOf('rke2-server', [controlPlaneLimits]);
  assert.deepEqual([facts.value('scheduler.kubeAPIQPS'), facts.value('scheduler.kubeAPIBurst')], [100, 150]);
  assert.equal(facts.get('scheduler.kubeAPIQPS')?.detail, 'set in /var/lib/rancher/rke2/agent/pod-manifests/kube-scheduler.yaml');
  assert.equal(facts.value('scheduler.qpsSetIn'), '/etc/rancher/rke2/config.yaml line 5 (kube-scheduler-arg)');
  assert.match(String(facts.value('scheduler.qpsFix')), /set kube-scheduler-arg entries "kube-api-qps=200".*restart rke2-server/);
  assert.equal(facts.value('controllerManager.kubeAPIQPS'), 20);
});

test("a live scheduler whose /proc/<pid>/root is unreadable falls back to the manifest's hostPath", async (t) => {
  const host = await tempHost(t, {
    '/proc/300/cmdline': 'kube-scheduler\0--config=/etc/kubernetes/sched/config.yaml\0',
    '/proc/300/comm': 'kube-scheduler\n',
    '/srv/sched/config.yaml': 'clientConnection:\n  qps: 120\n  burst: 240\n',
    '/etc/kubernetes/manifests/kube-scheduler.yaml':
      'spec:\n  containers:\n  - name: kube-scheduler\n    command: [kube-scheduler, --config=/etc/kubernetes/sched/config.yaml]\n' +
      '    volumeMounts: [{name: cfg, mountPath: /etc/kubernetes/sched}]\n  volumes: [{name: cfg, hostPath: {path: /srv/sched}}]\n',
  });
  const facts = await factsAt(host, controlPlaneLimits);
  assert.deepEqual([facts.value('scheduler.kubeAPIQPS'), facts.value('scheduler.kubeAPIBurst')], [120, 240]);
  assert.equal(facts.get('scheduler.kubeAPIQPS')?.source, '/srv/sched/config.yaml');
});
