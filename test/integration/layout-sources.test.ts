// Per host layout (kubeadm, kubespray, k3s, rke2, a plain systemd kubelet): the sources a setting can
// come from, added one layer at a time, and which one wins — the table in DEVELOPERS.md "Where facts
// come from". Each layer is a real file of that layout with one value changed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFile, cp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import kubelet from '../../src/collectors/kubelet/collector.ts';
import controlPlaneLimits from '../../src/collectors/control-plane-limits.ts';
import etcd from '../../src/collectors/etcd/collector.ts';
import { collectFacts } from '../../src/collectors/run.ts';
import type { Collector } from '../../src/collectors/collector.ts';
import { HostRoot } from '../../src/host/host-root.ts';
import { fixtureHost, tempHost } from '../helpers/fixtures.ts';

type Ctx = Parameters<typeof tempHost>[0];

async function copyOf(t: Ctx, fixture: string): Promise<string> {
  const root = await tempHost(t, {});
  await cp(fixtureHost(fixture), root, { recursive: true, verbatimSymlinks: true });
  return root;
}

async function winner(root: string, key: string, collector: Collector = kubelet): Promise<[unknown, string]> {
  const fact = (await collectFacts(new HostRoot(root), { collectors: [collector] })).get(key);
  return [fact?.value, fact?.source === 'default' || fact?.source?.startsWith('/') ? fact.source : fact?.detail?.replace(/^set in /, '') ?? ''];
}

async function writeIn(root: string, hostPath: string, text: string): Promise<void> {
  await mkdir(`${root}${hostPath.replace(/\/[^/]+$/, '')}`, { recursive: true });
  await writeFile(`${root}${hostPath}`, text);
}

async function liveProcess(root: string, pid: number, argv: string[], comm: string): Promise<void> {
  await writeIn(root, `/proc/${pid}/cmdline`, `${argv.join('\0')}\0`);
  await writeIn(root, `/proc/${pid}/comm`, `${comm}\n`);
}

test('kubeadm: version default < config.yaml < /etc/default/kubelet KUBELET_EXTRA_ARGS (unit ExecStart) < the live process', async (t) => {
  const root = await copyOf(t, 'kubeadm-1.30');
  assert.deepEqual(await winner(root, 'kubelet.kubeAPIQPS'), [50, 'default']);
  await appendFile(`${root}/var/lib/kubelet/config.yaml`, 'kubeAPIQPS: 20\n');
  assert.deepEqual(await winner(root, 'kubelet.kubeAPIQPS'), [20, '/var/lib/kubelet/config.yaml']);
  await writeFile(`${root}/etc/default/kubelet`, 'KUBELET_EXTRA_ARGS=--kube-api-qps=30\n');
  assert.deepEqual(await winner(root, 'kubelet.kubeAPIQPS'), [30, '/etc/default/kubelet (KUBELET_EXTRA_ARGS)']);
  await liveProcess(root, 4100, ['/usr/bin/kubelet', '--config=/var/lib/kubelet/config.yaml', '--kube-api-qps=40'], 'kubelet');
  assert.deepEqual(await winner(root, 'kubelet.kubeAPIQPS'), [40, '/proc/4100/cmdline']);
  // The scheduler: its static pod manifest, then the live process.
  const manifest = '/etc/kubernetes/manifests/kube-scheduler.yaml';
  const text = await readFile(`${root}${manifest}`, 'utf8');
  await writeFile(`${root}${manifest}`, text.replace('    - kube-scheduler\n', '    - kube-scheduler\n    - --kube-api-qps=60\n'));
  assert.deepEqual(await winner(root, 'scheduler.kubeAPIQPS', controlPlaneLimits), [60, manifest]);
  await liveProcess(root, 4200, ['kube-scheduler', '--kube-api-qps=70'], 'kube-scheduler');
  assert.deepEqual(await winner(root, 'scheduler.kubeAPIQPS', controlPlaneLimits), [70, '/proc/4200/cmdline']);
});

test('kubespray: --config /etc/kubernetes/kubelet-config.yaml (not /var/lib/kubelet/config.yaml) < kubelet.env KUBELET_ARGS < the live process', async (t) => {
  const root = await copyOf(t, 'kubespray');
  assert.deepEqual(await winner(root, 'kubelet.kubeAPIQPS'), [50, 'default'], 'the 5 in /var/lib/kubelet/config.yaml is not the file the kubelet reads');
  await appendFile(`${root}/etc/kubernetes/kubelet-config.yaml`, 'kubeAPIQPS: 20\n');
  assert.deepEqual(await winner(root, 'kubelet.kubeAPIQPS'), [20, '/etc/kubernetes/kubelet-config.yaml']);
  const env = await readFile(`${root}/etc/kubernetes/kubelet.env`, 'utf8');
  await writeFile(`${root}/etc/kubernetes/kubelet.env`, env.replace('--node-labels=', '--kube-api-qps=30 --node-labels='));
  assert.deepEqual(await winner(root, 'kubelet.kubeAPIQPS'), [30, '/etc/kubernetes/kubelet.env (KUBELET_ARGS)']);
  await liveProcess(root, 4100, ['/usr/local/bin/kubelet', '--config=/etc/kubernetes/kubelet-config.yaml', '--kube-api-qps=40'], 'kubelet');
  assert.deepEqual(await winner(root, 'kubelet.kubeAPIQPS'), [40, '/proc/4100/cmdline']);
});

test('k3s: config.yaml < config.yaml.d < the unit\'s ExecStart < the running k3s, for the kubelet and the scheduler alike', async (t) => {
  const root = await copyOf(t, 'k3s-unit-only');
  const unit = '/etc/systemd/system/k3s.service';
  const unitText = await readFile(`${root}${unit}`, 'utf8');
  await rm(`${root}${unit}`);
  await writeIn(root, '/etc/rancher/k3s/config.yaml', 'kubelet-arg:\n  - "kube-api-qps=7"\nkube-scheduler-arg:\n  - "kube-api-qps=21"\n');
  assert.deepEqual(await winner(root, 'kubelet.kubeAPIQPS'), [7, '/etc/rancher/k3s/config.yaml (kubelet-arg)']);
  assert.deepEqual(await winner(root, 'scheduler.kubeAPIQPS', controlPlaneLimits), [21, '/etc/rancher/k3s/config.yaml (kube-scheduler-arg)']);
  await writeIn(root, '/etc/rancher/k3s/config.yaml.d/50-site.yaml', 'kubelet-arg+:\n  - "kube-api-qps=8"\n');
  assert.deepEqual(await winner(root, 'kubelet.kubeAPIQPS'), [8, '/etc/rancher/k3s/config.yaml.d/50-site.yaml (kubelet-arg)']);
  await writeFile(`${root}${unit}`, unitText);
  assert.deepEqual(await winner(root, 'kubelet.kubeAPIQPS'), [5, unit]);
  assert.deepEqual(await winner(root, 'scheduler.kubeAPIQPS', controlPlaneLimits), [20, unit]);
  await liveProcess(root, 2211, ['/usr/local/bin/k3s', 'server', '--kubelet-arg=kube-api-qps=6'], 'k3s-server');
  assert.deepEqual(await winner(root, 'kubelet.kubeAPIQPS'), [6, '/proc/2211/cmdline']);
});

test('rke2: config.yaml < a unit drop-in\'s ExecStart; the scheduler from its pod manifest, which rke2 writes from both', async (t) => {
  const root = await copyOf(t, 'rke2-unit-dropin');
  assert.deepEqual(await winner(root, 'kubelet.kubeAPIQPS'), [25, '/etc/systemd/system/rke2-server.service.d/10-kubelet-qps.conf']);
  await rm(`${root}/etc/systemd/system/rke2-server.service.d`, { recursive: true });
  assert.deepEqual(await winner(root, 'kubelet.kubeAPIQPS'), [40, '/etc/rancher/rke2/config.yaml (kubelet-arg)']);
  const server = fixtureHost('rke2-server');
  assert.deepEqual(await winner(server, 'scheduler.kubeAPIQPS', controlPlaneLimits), [100, '/var/lib/rancher/rke2/agent/pod-manifests/kube-scheduler.yaml']);
});

test('a plain systemd kubelet: version default < --config file < --config-dir drop-in < a flag in the unit\'s drop-in', async (t) => {
  const root = await tempHost(t, {
    // kubernetes/release's kubelet.service as the kubelet package installs it, plus the operator's drop-in.
    '/usr/lib/systemd/system/kubelet.service': '[Unit]\nDescription=kubelet: The Kubernetes Node Agent\nDocumentation=https://kubernetes.io/docs/\nWants=network-online.target\nAfter=network-online.target\n\n[Service]\nExecStart=/usr/bin/kubelet\nRestart=always\nStartLimitInterval=0\nRestartSec=10\n\n[Install]\nWantedBy=multi-user.target\n',
    '/etc/systemd/system/kubelet.service.d/20-site.conf': '[Service]\nExecStart=\nExecStart=/usr/bin/kubelet --config=/etc/kubernetes/kubelet.yaml --kubeconfig=/etc/kubernetes/kubelet.conf\n',
    '/etc/kubernetes/kubelet.yaml': 'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n',
    '/var/lib/dpkg/status': 'Package: kubelet\nStatus: install ok installed\nVersion: 1.31.1-1.1\n\n',
  });
  assert.deepEqual(await winner(root, 'kubelet.kubeAPIQPS'), [50, 'default']);
  await appendFile(`${root}/etc/kubernetes/kubelet.yaml`, 'kubeAPIQPS: 20\n');
  assert.deepEqual(await winner(root, 'kubelet.kubeAPIQPS'), [20, '/etc/kubernetes/kubelet.yaml']);
  await writeFile(`${root}/etc/systemd/system/kubelet.service.d/20-site.conf`, '[Service]\nExecStart=\nExecStart=/usr/bin/kubelet --config=/etc/kubernetes/kubelet.yaml --config-dir=/etc/kubernetes/kubelet.conf.d\n');
  await writeIn(root, '/etc/kubernetes/kubelet.conf.d/50-qps.conf', 'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nkubeAPIQPS: 25\n');
  assert.deepEqual(await winner(root, 'kubelet.kubeAPIQPS'), [25, '/etc/kubernetes/kubelet.conf.d/50-qps.conf']);
  await writeFile(`${root}/etc/systemd/system/kubelet.service.d/20-site.conf`, '[Service]\nExecStart=\nExecStart=/usr/bin/kubelet --config=/etc/kubernetes/kubelet.yaml --config-dir=/etc/kubernetes/kubelet.conf.d --kube-api-qps=30\n');
  assert.deepEqual(await winner(root, 'kubelet.kubeAPIQPS'), [30, '/etc/systemd/system/kubelet.service.d/20-site.conf']);
});

test('etcd\'s data dir per layout: verified process < … in this order: process, kubeadm/rke2 manifest, etcd unit + EnvironmentFile, k3s data dir', async () => {
  const source = async (fixture: string) => {
    const facts = await collectFacts(new HostRoot(fixtureHost(fixture)), { collectors: [etcd] });
    return [facts.value('etcd.setup'), facts.value('etcd.dataDir'), facts.get('etcd.dataDir')?.source];
  };
  assert.deepEqual(await source('etcd-kubeadm-nvme'), ['process', '/mnt/fast/etcd', '/proc/2817/cmdline (--data-dir)']);
  assert.deepEqual(await source('etcd-lvm-chain'), ['kubeadm', '/var/lib/etcd', '/etc/kubernetes/manifests/etcd.yaml']);
  assert.deepEqual(await source('etcd-kubespray-ssd'), ['kubespray', '/data/etcd', '/etc/etcd.env (ETCD_DATA_DIR)']);
  assert.deepEqual(await source('etcd-systemd-envfile'), ['systemd', '/data/etcd', '/etc/etcd.env (ETCD_DATA_DIR)']);
  assert.deepEqual(await source('etcd-k3s-embedded'), ['k3s', '/var/lib/rancher/k3s/server/db/etcd', '/var/lib/rancher/k3s/server/db/etcd']);
});
