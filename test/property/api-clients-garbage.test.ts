// Garbage in any file the kubelet, control-plane-limits and throttling collectors read must come out
// as facts (decided or unknown with a reason), never as an exception.
import { test } from 'node:test';
import fc from 'fast-check';
import kubelet from '../../src/collectors/kubelet/collector.ts';
import controlPlaneLimits from '../../src/collectors/control-plane-limits.ts';
import { createThrottlingCollector } from '../../src/collectors/throttling.ts';
import { assertCollectorsSurviveGarbage } from '../helpers/garbage-hosts.ts';

const FILES = [
  '/proc/100/cmdline', '/proc/100/comm', '/proc/200/cmdline', '/proc/200/comm', '/var/lib/kubelet/config.yaml',
  '/var/lib/kubelet/kubeadm-flags.env', '/etc/default/kubelet', '/etc/kubernetes/kubelet.env', '/etc/kubernetes/kubelet-config.yaml',
  '/usr/lib/systemd/system/kubelet.service', '/usr/lib/systemd/system/kubelet.service.d/10-kubeadm.conf',
  '/etc/kubernetes/manifests/kube-scheduler.yaml', '/etc/kubernetes/manifests/kube-controller-manager.yaml',
  '/etc/kubernetes/manifests/kube-apiserver.yaml', '/etc/kubernetes/scheduler.yaml', '/etc/rancher/k3s/config.yaml',
  '/var/lib/rancher/k3s/agent/etc/kubelet.conf.d/00-k3s-defaults.conf', '/var/lib/dpkg/status',
  '/var/log/pods/kube-system_kube-scheduler-a_1/kube-scheduler/0.log', '/var/log/syslog',
];

const tricky = fc.constantFrom(
  '', '\0', 'kubelet\0--config\0', 'kubelet\0--config=/var/lib/kubelet/config.yaml\0--kube-api-qps\0', 'k3s\0server\0--kubelet-arg\0',
  'kube-scheduler\0--config=/etc/kubernetes/scheduler.yaml\0', 'kubeAPIQPS: [\n', 'kubeAPIQPS: "50"\nkubeAPIBurst: -1\n', '*!', '&a [*a]',
  '[Service]\nExecStart=/usr/bin/kubelet $KUBELET_KUBEADM_ARGS ${X\nEnvironmentFile=-/var/lib/kubelet/kubeadm-flags.env\n',
  'KUBELET_KUBEADM_ARGS="--kube-api-qps=abc --config\n', 'spec:\n  containers: 3\n', 'spec:\n  containers:\n  - command: [kube-scheduler, --config=/x]\n    volumeMounts: [{name: v, mountPath: /}]\n  volumes: [{name: v, hostPath: {path: "../../.."}}]\n',
  'kubelet-arg: {a: 1}\n', 'clientConnection: 7\n', 'Package: kubelet\nStatus: install ok installed\nVersion: 1.x\n',
  '2026-11-30T13:20:00Z stderr F Waited for 99999999999999999999h due to client-side throttling', 'Waited before sending request delay="1e309s"',
  '{"log":"Throttling request took 1.5s, request: GET","time":"not a time"}',
);
test('the api-client collectors never throw on garbage host files', async () => {
  const collectors = [kubelet, controlPlaneLimits, createThrottlingCollector({ clock: () => Date.UTC(2026, 10, 30, 14) })];
  await assertCollectorsSurviveGarbage({ collectors, files: FILES, tricky, maxKeys: 10, numRuns: 150 });
});
