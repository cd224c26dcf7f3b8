// The host side of attach mode (what `scan` can see without a cluster), and the API facts' absence there.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { collectFacts } from '../../src/collectors/run.ts';
import { HostRoot } from '../../src/host/host-root.ts';
import volumesHost from '../../src/collectors/volumes-host.ts';
import workloadApi from '../../src/collectors/workload-api.ts';
import { runScan } from '../../src/scan.ts';
import { WorkloadState } from '../../src/workload/state.ts';
import { fixtureHost, tempHost } from '../helpers/fixtures.ts';

/** A HostRoot that records every path asked for. */
class RecordingHost extends HostRoot {
  readonly asked: string[] = [];
  override readText(p: string, o?: Parameters<HostRoot['readText']>[1]) { this.asked.push(p); return super.readText(p, o); }
  override readValue(p: string) { this.asked.push(p); return super.readValue(p); }
  override listDir(p: string) { this.asked.push(p); return super.listDir(p); }
  override exists(p: string) { this.asked.push(p); return super.exists(p); }
  override readLink(p: string) { this.asked.push(p); return super.readLink(p); }
}

test('plugins_registry sockets, iscsid/multipathd and kubelet-root mounts by plugin; pods/ never read', async () => {
  const host = new RecordingHost(fixtureHost('worker-longhorn-iscsi'));
  const facts = await collectFacts(host, { collectors: [volumesHost] });
  assert.deepEqual(facts.value('volumes.registeredPlugins'), ['driver.longhorn.io', 'nfs.csi.k8s.io']);
  assert.equal(facts.get('volumes.registeredPlugins')?.source, '/var/lib/kubelet/plugins_registry');
  assert.deepEqual(facts.value('volumes.attachDaemons'), ['iscsid', 'multipathd']);
  assert.deepEqual(facts.value('volumes.kubeletMounts'), { csi: 2, nfs: 1, iscsi: 2, fc: 0, rbd: 0, 'aws-ebs': 0, 'gce-pd': 0, 'azure-disk': 0, cinder: 0, 'vsphere-volume': 0 });
  assert.deepEqual(facts.value('volumes.mountedCsiDrivers'), ['driver.longhorn.io']);
  assert.equal(facts.value('volumes.kubeletRootDir'), '/var/lib/kubelet');
  assert.deepEqual(host.asked.filter((p) => p.startsWith('/var/lib/kubelet/pods')), []);
});

test('--root-dir on the kubelet moves every path; a missing registry is "none", an unreadable /proc unknown', async (t) => {
  const root = await tempHost(t, {
    'proc/77/cmdline': '/usr/bin/kubelet\0--root-dir=/data/kubelet/\0',
    'proc/77/comm': 'kubelet\n',
    'proc/1/mountinfo': '1 0 8:1 / / rw - ext4 /dev/sda1 rw\n2 1 0:50 / /data/kubelet/pods/u/volumes/kubernetes.io~nfs/share rw - nfs 10.0.0.2:/x rw\n',
  });
  const facts = await collectFacts(new HostRoot(root), { collectors: [volumesHost] });
  assert.equal(facts.value('volumes.kubeletRootDir'), '/data/kubelet');
  assert.equal(facts.get('volumes.kubeletRootDir')?.source, '/proc/77/cmdline');
  assert.equal(facts.value('volumes.registeredPlugins'), null);
  assert.deepEqual(facts.value('volumes.kubeletMounts'), { csi: 0, nfs: 1, iscsi: 0, fc: 0, rbd: 0, 'aws-ebs': 0, 'gce-pd': 0, 'azure-disk': 0, cinder: 0, 'vsphere-volume': 0 });
  assert.deepEqual(facts.value('volumes.attachDaemons'), [], '/proc is visible and runs no iscsid or multipathd');

  const bare = await tempHost(t, { 'etc/hostname': 'x\n' });
  const none = await collectFacts(new HostRoot(bare), { collectors: [volumesHost] });
  assert.match(none.get('volumes.attachDaemons')?.unknown ?? '', /hostPID/);
  assert.match(none.get('volumes.kubeletMounts')?.unknown ?? '', /mountinfo/);
});

test('scan without a cluster: workload rules do not apply and the API facts say why', async () => {
  const report = await runScan({ hostRoot: fixtureHost('worker-longhorn-iscsi'), only: ['volume-attach', 'pod-startup-slo'], collectors: [volumesHost, workloadApi] });
  assert.deepEqual(report.findings.map((f) => [f.ruleId, f.status]).sort(), [['pod-startup-slo', 'not-applicable'], ['volume-attach', 'not-applicable']]);
  assert.equal(report.facts['workload.apiView']?.value, false);
  assert.match(report.facts['volumes.attachP90Ms']?.unknown ?? '', /needs the Kubernetes API/);
  const evidence = report.findings.find((f) => f.ruleId === 'volume-attach')?.evidence.map((e) => e.fact) ?? [];
  assert.ok(evidence.includes('volumes.attachDaemons') && evidence.includes('volumes.registeredPlugins'), 'host signs shown as evidence');
});

test('in the agent (not mounted there) a missing plugins_registry is unknown, pointing at CSINode, not "none"', async (t) => {
  const root = await tempHost(t, { 'proc/1/mountinfo': '1 0 8:1 / / rw - ext4 /dev/sda1 rw\n' });
  const facts = await collectFacts(new HostRoot(root), { collectors: [volumesHost], cluster: new WorkloadState({ nodeName: 'n' }).snapshot() });
  assert.match(facts.get('volumes.registeredPlugins')?.unknown ?? '', /not mounted into the agent; this node's CSINode \(volumes\.nodeDrivers\)/);
});

test('in-tree attach plugins (aws-ebs, cinder, vsphere-volume, gce-pd, azure-disk) are counted among kubelet mounts', async () => {
  const facts = await collectFacts(new HostRoot(fixtureHost('worker-intree-attach')), { collectors: [volumesHost] });
  const mounts = facts.value('volumes.kubeletMounts') as Record<string, number>;
  assert.deepEqual(
    { 'aws-ebs': mounts['aws-ebs'], cinder: mounts.cinder, 'vsphere-volume': mounts['vsphere-volume'], 'gce-pd': mounts['gce-pd'], 'azure-disk': mounts['azure-disk'], csi: mounts.csi },
    { 'aws-ebs': 2, cinder: 2, 'vsphere-volume': 2, 'gce-pd': 0, 'azure-disk': 0, csi: 0 },
  );
});
