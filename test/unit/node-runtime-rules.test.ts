// The node-runtime rules on fixtures built from upstream files: each passes on one and fails on another.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import containerd from '../../src/collectors/containerd/collector.ts';
import { runScan } from '../../src/scan.ts';
import { fixtureHost, tempHost } from '../helpers/fixtures.ts';
import { fact, factsAt } from '../helpers/host-trees.ts';

const RULES = ['kubelet-registry-pull-limit', 'kubelet-event-qps', 'containerd-concurrent-downloads', 'containerd-lazy-pulling', 'cgroup-driver-mismatch'];

async function statuses(fixture: string): Promise<Record<string, string>> {
  const report = await runScan({ hostRoot: fixtureHost(fixture), only: RULES });
  return Object.fromEntries(report.findings.map((f) => [f.ruleId, f.status]));
}

test('containerd config default with kubeadm: cgroup driver mismatch, 1 download, slow registry limit, no lazy pulling', async () => {
  assert.deepEqual(await statuses('kubeadm-containerd-default'), {
    'cgroup-driver-mismatch': 'fail', 'containerd-concurrent-downloads': 'fail', 'containerd-lazy-pulling': 'fail',
    'kubelet-registry-pull-limit': 'fail', 'kubelet-event-qps': 'fail',
  });
  const report = await runScan({ hostRoot: fixtureHost('kubeadm-containerd-default'), only: ['cgroup-driver-mismatch'] });
  assert.equal(report.findings[0]?.observed, 'kubelet systemd, containerd cgroupfs');
});

test('EKS AL2023 with nodeadm and SOCI: every node-runtime rule passes', async () => {
  assert.deepEqual(await statuses('eks-al2023-nodeadm-dropin'), {
    'cgroup-driver-mismatch': 'pass', 'containerd-concurrent-downloads': 'pass', 'containerd-lazy-pulling': 'pass',
    'kubelet-registry-pull-limit': 'pass', 'kubelet-event-qps': 'pass',
  });
});

test('the defaults pass the Event limit: 5 up to 1.26, 50 from 1.27', async () => {
  assert.equal((await statuses('kubeadm-1.26'))['kubelet-event-qps'], 'pass');
  assert.equal((await statuses('kubeadm-1.30'))['kubelet-event-qps'], 'pass');
});

test('a broken file and no file: unknown with the reason, or containerd\'s defaults', async (t) => {
  const broken = await tempHost(t, { '/etc/containerd/config.toml': 'version = 2\n[plugins\nfoo\n' });
  assert.match(fact(await factsAt(broken, containerd), 'containerd.snapshotter').unknown ?? '', /not valid TOML/);
  const none = await tempHost(t, { '/usr/bin/containerd': 'stand-in' });
  const noConfig = await factsAt(none, containerd);
  assert.equal(fact(noConfig, 'containerd.present').value, true);
  assert.match(fact(noConfig, 'containerd.cgroupDriver').unknown ?? '', /^\/etc\/containerd is not mounted under the host root .*: containerd's settings cannot be read/, 'a tree without the directory is not proof of the defaults');
  const emptyDir = await factsAt(await tempHost(t, { '/usr/bin/containerd': 'stand-in', '/etc/containerd/certs.d/docker.io/hosts.toml': 'server = "https://registry-1.docker.io"\n' }), containerd);
  assert.match(fact(emptyDir, 'containerd.cgroupDriver').unknown ?? '', /no \/etc\/containerd\/config\.toml under the host root.*cannot tell/, 'nor a directory without the file');
  const absent = await factsAt(await tempHost(t, {}), containerd);
  assert.equal(fact(absent, 'containerd.present').value, false);
});
