import { test } from 'node:test';
import assert from 'node:assert/strict';
import kubelet from '../../src/collectors/kubelet/collector.ts';
import { factsOf, tempHost } from '../helpers/fixtures.ts';
import { fact, factsAt } from '../helpers/host-trees.ts';

test('kubeadm 1.26 without QPS keys: the 1.26 default 5/10, from the systemd unit and dpkg', async () => {
  const facts = await factsOf('kubeadm-1.26', [kubelet]);
  assert.equal(fact(facts, 'kubelet.version').value, '1.26.15');
  assert.equal(fact(facts, 'kubelet.version').source, '/var/lib/dpkg/status');
  assert.deepEqual([fact(facts, 'kubelet.kubeAPIQPS').value, fact(facts, 'kubelet.kubeAPIBurst').value], [5, 10]);
  assert.equal(fact(facts, 'kubelet.kubeAPIQPS').source, 'default');
  assert.deepEqual([fact(facts, 'kubelet.eventRecordQPS').value, fact(facts, 'kubelet.eventBurst').value], [5, 10]);
  assert.equal(fact(facts, 'kubelet.configFile').value, '/var/lib/kubelet/config.yaml');
  assert.equal(fact(facts, 'kubelet.configLayout').value, 'kubeadm');
  assert.equal(fact(facts, 'kubelet.qpsSetIn').value, 'kubeAPIQPS in /var/lib/kubelet/config.yaml (not set yet)');
  assert.match(String(fact(facts, 'kubelet.qpsFix').value), /kubeAPIQPS: 170 and kubeAPIBurst: 220.*kubelet-config/);
});

test('kubeadm 1.30 without QPS keys: the modern default 50/100', async () => {
  const facts = await factsOf('kubeadm-1.30', [kubelet]);
  assert.deepEqual([fact(facts, 'kubelet.kubeAPIQPS').value, fact(facts, 'kubelet.kubeAPIBurst').value], [50, 100]);
  assert.match(fact(facts, 'kubelet.kubeAPIQPS').detail ?? '', /1\.27 and later.*1\.30\.2-1\.1/);
  assert.equal(fact(facts, 'kubelet.serializeImagePulls').value, true);
  assert.equal(fact(facts, 'kubelet.registryPullQPS').value, 5);
});

test('kubespray: KUBELET_ARGS in kubelet.env points at /etc/kubernetes/kubelet-config.yaml, not the decoy', async () => {
  const facts = await factsOf('kubespray', [kubelet]);
  assert.equal(fact(facts, 'kubelet.configLayout').value, 'kubespray');
  assert.equal(fact(facts, 'kubelet.configFile').value, '/etc/kubernetes/kubelet-config.yaml');
  assert.equal(fact(facts, 'kubelet.configFile').source, '/etc/kubernetes/kubelet.env (KUBELET_ARGS)');
  assert.equal(fact(facts, 'kubelet.kubeAPIQPS').value, 50, 'the decoy /var/lib/kubelet/config.yaml says 5');
  assert.equal(fact(facts, 'kubelet.version').source, '/etc/kubernetes/manifests/kube-apiserver.yaml');
  assert.equal(fact(facts, 'kubelet.eventRecordQPS').source, '/etc/kubernetes/kubelet-config.yaml');
  assert.equal(fact(facts, 'kubelet.maxParallelImagePulls').value, 1);
  assert.match(String(fact(facts, 'kubelet.qpsSetIn').value), /kubelet-config\.yaml \(kubespray: kubelet_config_extra_args\)/);
});

test('k3s: the kubelet.conf.d drop-ins and kubelet-arg from config.yaml, defaults from the --config-dir version floor', async () => {
  const facts = await factsOf('k3s-config-dir', [kubelet]);
  assert.equal(fact(facts, 'kubelet.configLayout').value, 'k3s');
  assert.deepEqual(fact(facts, 'kubelet.configDropIns').value, ['/var/lib/rancher/k3s/agent/etc/kubelet.conf.d/00-k3s-defaults.conf']);
  assert.equal(fact(facts, 'kubelet.serializeImagePulls').value, false);
  assert.equal(fact(facts, 'kubelet.serializeImagePulls').source, '/var/lib/rancher/k3s/agent/etc/kubelet.conf.d/00-k3s-defaults.conf');
  assert.equal(fact(facts, 'kubelet.maxPods').value, 150);
  assert.equal(fact(facts, 'kubelet.maxPods').detail, 'set in /etc/rancher/k3s/config.yaml (kubelet-arg)');
  assert.equal(fact(facts, 'kubelet.kubeAPIQPS').value, 50);
  assert.ok(fact(facts, 'kubelet.version').unknown, 'no exact version on a snapshot');
  assert.match(String(fact(facts, 'kubelet.qpsSetIn').value), /kubelet\.conf\.d\/50-kube-api-qps\.conf/);
  assert.match(String(fact(facts, 'kubelet.qpsFix').value), /kubeAPIQPS: 230.*systemctl restart k3s/);
});

test('--config with a space: the file the kubelet was given wins over /var/lib/kubelet/config.yaml', async () => {
  const facts = await factsOf('kubelet-config-space', [kubelet]);
  assert.equal(fact(facts, 'kubelet.configFile').value, '/etc/kubernetes/kubelet-config.yaml');
  assert.deepEqual([fact(facts, 'kubelet.kubeAPIQPS').value, fact(facts, 'kubelet.kubeAPIBurst').value], [100, 200]);
  assert.equal(fact(facts, 'kubelet.kubeAPIQPS').source, '/etc/kubernetes/kubelet-config.yaml');
  assert.match(fact(facts, 'kubelet.eventRecordQPS').unknown ?? '', /version.*unknown/, 'not set and no version: unknown, not a guess');
});

test('a relative --config resolves against the process working directory', async () => {
  const facts = await factsOf('kubelet-relative-config', [kubelet]);
  assert.equal(fact(facts, 'kubelet.configFile').value, '/etc/kubernetes/kubelet/kubelet_conf.json');
  assert.deepEqual([fact(facts, 'kubelet.kubeAPIQPS').value, fact(facts, 'kubelet.kubeAPIBurst').value], [30, 60]);
  assert.equal(fact(facts, 'kubelet.eventRecordQPS').value, 0);
  assert.match(fact(facts, 'kubelet.eventRecordQPS').detail ?? '', /ambiguous/);
  assert.deepEqual([fact(facts, 'kubelet.suggestedQPS').value, fact(facts, 'kubelet.suggestedBurst').value], [300, 400], 'scaled to maxPods 200');
});

test('--kube-api-qps=0 is client-go 5/10, traced to /etc/default/kubelet', async () => {
  const facts = await factsOf('kubelet-qps-zero', [kubelet]);
  assert.deepEqual([fact(facts, 'kubelet.kubeAPIQPS').value, fact(facts, 'kubelet.kubeAPIBurst').value], [5, 10]);
  assert.equal(fact(facts, 'kubelet.kubeAPIQPS').source, 'flag:--kube-api-qps');
  assert.match(fact(facts, 'kubelet.kubeAPIQPS').detail ?? '', /\/etc\/default\/kubelet \(KUBELET_EXTRA_ARGS\).*client-go/);
  assert.equal(fact(facts, 'kubelet.qpsSetIn').value, '--kube-api-qps in /etc/default/kubelet line 1, variable KUBELET_EXTRA_ARGS');
});

test('seed 000 after: --kube-api-qps=150 in kubeadm-flags.env beats the 1.20 default', async () => {
  const facts = await factsOf('seed-000-after', [kubelet]);
  assert.deepEqual([fact(facts, 'kubelet.kubeAPIQPS').value, fact(facts, 'kubelet.kubeAPIBurst').value], [150, 200]);
  assert.equal(fact(facts, 'kubelet.qpsSetIn').value, '--kube-api-qps in /var/lib/kubelet/kubeadm-flags.env line 1, variable KUBELET_KUBEADM_ARGS');
});

test('drop-ins apply in name order over the config file, and flags over both', async (t) => {
  const host = await tempHost(t, {
    '/proc/7/cmdline': '/usr/bin/kubelet\0--config=/etc/k/config.yaml\0--config-dir=/etc/k/conf.d\0--kube-api-burst=300\0',
    '/proc/7/comm': 'kubelet\n',
    '/etc/k/config.yaml': 'kubeAPIQPS: 10\nkubeAPIBurst: 20\nmaxParallelImagePulls: 3\n',
    '/etc/k/conf.d/20-b.conf': 'kubeAPIQPS: 40\n',
    '/etc/k/conf.d/10-a.conf': 'kubeAPIQPS: 30\n',
    '/etc/k/conf.d/30-ignored.yaml': 'kubeAPIQPS: 99\n',
  });
  const facts = await factsAt(host, kubelet);
  assert.equal(fact(facts, 'kubelet.kubeAPIQPS').value, 40);
  assert.equal(fact(facts, 'kubelet.kubeAPIQPS').source, '/etc/k/conf.d/20-b.conf');
  assert.equal(fact(facts, 'kubelet.kubeAPIBurst').value, 300);
  assert.equal(fact(facts, 'kubelet.serializeImagePulls').value, false, 'maxParallelImagePulls ≥ 2 turns the serialize default off');
  assert.equal(fact(facts, 'kubelet.version').unknown !== undefined, true);
});

test('a malformed config file makes the values unknown with the file named, never a default', async (t) => {
  const host = await tempHost(t, {
    '/proc/7/cmdline': '/usr/bin/kubelet\0--config=/var/lib/kubelet/config.yaml\0',
    '/proc/7/comm': 'kubelet\n',
    '/var/lib/kubelet/config.yaml': 'kubeAPIQPS: [unclosed\n',
  });
  const facts = await factsAt(host, kubelet);
  assert.match(fact(facts, 'kubelet.kubeAPIQPS').unknown ?? '', /\/var\/lib\/kubelet\/config\.yaml is not valid YAML/);
});

test('a --config that does not exist, and a non-numeric flag, are unknown with the fix', async (t) => {
  const host = await tempHost(t, {
    '/proc/7/cmdline': '/usr/bin/kubelet\0--config\0/etc/none.yaml\0',
    '/proc/7/comm': 'kubelet\n',
    '/proc/8/cmdline': 'bash\0',
  });
  const facts = await factsAt(host, kubelet);
  assert.match(fact(facts, 'kubelet.kubeAPIQPS').unknown ?? '', /names \/etc\/none\.yaml, which does not exist/);
  const bad = await tempHost(t, { '/proc/7/cmdline': 'kubelet\0--kube-api-qps=fast\0', '/proc/7/comm': 'kubelet\n' });
  assert.match(fact(await factsAt(bad, kubelet), 'kubelet.kubeAPIQPS').unknown ?? '', /--kube-api-qps=fast .* not a valid value/);
});

test('a host without any kubelet says so', async (t) => {
  const facts = await factsAt(await tempHost(t, { '/etc/hostname': 'x\n' }), kubelet);
  assert.equal(fact(facts, 'kubelet.present').value, false);
});

test('rke2: a live kubelet with rke2 drop-ins; the lasting fix is kubelet-arg in /etc/rancher/rke2/config.yaml', async () => {
  const facts = await factsOf('rke2-server', [kubelet]);
  assert.equal(fact(facts, 'kubelet.configLayout').value, 'rke2');
  assert.deepEqual(fact(facts, 'kubelet.configDropIns').value, ['/var/lib/rancher/rke2/agent/etc/kubelet.conf.d/00-rke2-defaults.conf']);
  assert.equal(fact(facts, 'kubelet.kubeAPIQPS').value, 50);
  assert.equal(fact(facts, 'kubelet.qpsSetIn').value, 'kubelet-arg in /etc/rancher/rke2/config.yaml');
  assert.match(String(fact(facts, 'kubelet.qpsFix').value), /systemctl restart rke2-server/);
});
