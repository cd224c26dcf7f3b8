// k3s and rke2 flags kept in the systemd unit (k3s's install script writes them into ExecStart):
// a source for every embedded component, whether or not the process runs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cp, mkdir, writeFile } from 'node:fs/promises';
import kubelet from '../../src/collectors/kubelet/collector.ts';
import controlPlaneLimits from '../../src/collectors/control-plane-limits.ts';
import etcdPriority from '../../src/collectors/etcd/priority.ts';
import { collectFacts } from '../../src/collectors/run.ts';
import { HostRoot } from '../../src/host/host-root.ts';
import { factsOf, fixtureHost, tempHost } from '../helpers/fixtures.ts';

const UNIT = '/etc/systemd/system/k3s.service';

test('k3s with its flags only in the unit k3s\'s install script wrote: every component reads them, the unit is named as the source', async () => {
  const facts = await factsOf('k3s-unit-only', [kubelet, controlPlaneLimits]);
  assert.equal(facts.value('kubelet.commandSource'), UNIT);
  assert.deepEqual([facts.value('kubelet.kubeAPIQPS'), facts.value('kubelet.kubeAPIBurst'), facts.get('kubelet.kubeAPIQPS')?.detail], [5, 10, `set in ${UNIT}`]);
  assert.equal(facts.value('kubelet.qpsSetIn'), `--kubelet-arg=kube-api-qps on ExecStart in ${UNIT} line 31`);
  assert.match(String(facts.value('kubelet.qpsFix')), /change ExecStart's --kubelet-arg=kube-api-qps .* then systemctl daemon-reload and systemctl restart k3s/);
  assert.deepEqual([facts.value('scheduler.kubeAPIQPS'), facts.value('scheduler.qpsSetIn')], [20, `${UNIT} line 33 (ExecStart kube-scheduler-arg)`]);
  assert.deepEqual([facts.value('controllerManager.kubeAPIQPS'), facts.value('controllerManager.qpsSetIn')], [15, `${UNIT} line 34 (ExecStart kube-controller-manager-arg)`]);
  for (const key of ['kubelet.commandSource', 'scheduler.qpsSetIn']) assert.doesNotMatch(String(facts.value(key)), /config\.yaml/, key);
});

test('rke2: a drop-in\'s ExecStart flags win over config.yaml, as rke2 puts the command line after the config file', async () => {
  const facts = await factsOf('rke2-unit-dropin', [kubelet]);
  assert.deepEqual([facts.value('kubelet.kubeAPIQPS'), facts.value('kubelet.kubeAPIBurst')], [25, 50]);
  assert.equal(facts.get('kubelet.kubeAPIQPS')?.detail, 'set in /etc/systemd/system/rke2-server.service.d/10-kubelet-qps.conf');
});

test('a running k3s process: its arguments are attributed to the unit line that holds them', async (t) => {
  const root = await tempHost(t, {});
  await cp(fixtureHost('k3s-unit-only'), root, { recursive: true });
  await mkdir(`${root}/proc/2211`, { recursive: true });
  await writeFile(`${root}/proc/2211/cmdline`, ['/usr/local/bin/k3s', 'server', '--kubelet-arg=kube-api-qps=5', '--kubelet-arg=kube-api-burst=10', '--etcd-expose-metrics', ''].join('\0'));
  await writeFile(`${root}/proc/2211/comm`, 'k3s-server\n');
  const facts = await collectFacts(new HostRoot(root), { collectors: [kubelet] });
  assert.equal(facts.value('kubelet.commandSource'), '/proc/2211/cmdline');
  assert.equal(facts.get('kubelet.kubeAPIQPS')?.detail, `set in ${UNIT}`);
});

test('k3s embedded etcd: --etcd-expose-metrics on the unit\'s ExecStart exposes its metrics, as in config.yaml', async () => {
  const { default: etcd } = await import('../../src/collectors/etcd/collector.ts');
  const facts = await factsOf('k3s-unit-only', [etcd]);
  assert.deepEqual([facts.value('etcd.setup'), facts.value('etcd.dataDir')], ['k3s', '/var/lib/rancher/k3s/server/db/etcd']);
  assert.deepEqual([facts.value('etcd.metricsUrl'), facts.get('etcd.metricsUrl')?.source], ['http://127.0.0.1:2381', `${UNIT} (etcd-expose-metrics)`]);
});

test('whether Events have their own etcd is read from the same k3s/rke2 command line as every other component (it was unknown without a config.yaml)', async () => {
  for (const [host, source] of [
    ['k3s-unit-only', `${UNIT} (kube-apiserver-arg)`],
    ['rke2-server', '/proc/980/cmdline (kube-apiserver-arg)'],
    ['rke2-unit-dropin', '/usr/local/lib/systemd/system/rke2-server.service (kube-apiserver-arg)'],
  ] as const) {
    const facts = await factsOf(host, [etcdPriority]);
    assert.deepEqual([facts.value('etcd.eventsSplit'), facts.get('etcd.eventsSplit')?.source], [false, source], host);
  }
});
