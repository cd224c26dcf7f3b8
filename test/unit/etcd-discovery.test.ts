import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import etcd from '../../src/collectors/etcd/collector.ts';
import etcdPriority, { niceFromStat, parseIonice, splitsEvents } from '../../src/collectors/etcd/priority.ts';
import { mapToHost, parseEtcdManifest, parseFlags, pickMetricsUrl } from '../../src/collectors/etcd/discovery.ts';
import { parseEnvironmentFile } from '../../src/host/systemd-unit.ts';
import { parseEnviron } from '../../src/host/processes.ts';
import { readFile } from 'node:fs/promises';
import { factsOf, tempHost } from '../helpers/fixtures.ts';
import { collectFacts } from '../../src/collectors/run.ts';
import { HostRoot } from '../../src/host/host-root.ts';

test('kubespray, seed 001 "before": ETCD_DATA_DIR on the HDD root partition', async () => {
  const facts = await factsOf('etcd-kubespray-hdd', [etcd]);
  assert.equal(facts.value('etcd.present'), true);
  assert.equal(facts.value('etcd.setup'), 'kubespray');
  assert.deepEqual([facts.value('etcd.dataDir'), facts.get('etcd.dataDir')?.source], ['/var/lib/etcd', '/etc/etcd.env (ETCD_DATA_DIR)']);
  assert.equal(facts.value('etcd.device.name'), 'sda2');
  assert.equal(facts.value('etcd.device.kind'), 'partition');
  assert.deepEqual(facts.value('etcd.device.disks'), ['sda']);
  assert.equal(facts.value('etcd.device.rotational'), true);
  assert.equal(facts.value('etcd.device.transport'), 'sata');
  assert.equal(facts.value('etcd.device.model'), 'ST2000NM0055-1V4');
  assert.equal(facts.value('etcd.device.scheduler'), 'mq-deadline');
  // Only an https client URL: reported, and the metrics facts say why they were not read.
  assert.equal(facts.value('etcd.metricsUrl'), 'https://10.20.0.11:2379');
});

test('kubespray, seed 001 "after": data dir on an SSD mounted at /data, metrics on loopback', async () => {
  const facts = await factsOf('etcd-kubespray-ssd', [etcd]);
  assert.equal(facts.value('etcd.dataDir'), '/data/etcd');
  assert.equal(facts.value('etcd.device.mountPoint'), '/data');
  assert.equal(facts.value('etcd.device.fsType'), 'xfs');
  assert.ok((facts.value('etcd.device.mountOptions') as string[]).includes('noatime'));
  assert.deepEqual([facts.value('etcd.device.name'), facts.value('etcd.device.rotational')], ['sdb1', false]);
  assert.equal(facts.value('etcd.device.model'), 'Samsung SSD 870 EVO 1TB');
  assert.equal(facts.value('etcd.metricsUrl'), 'http://127.0.0.1:2381');
  assert.match(facts.get('etcd.walFsync.p99Ms')?.unknown ?? '', /not this machine/);
});

test('kubeadm static pod on NVMe: live process, container path mapped through the hostPath volume', async () => {
  const facts = await factsOf('etcd-kubeadm-nvme', [etcd]);
  assert.equal(facts.value('etcd.pid'), 2817);
  assert.equal(facts.get('etcd.dataDir')?.source, '/proc/2817/cmdline (--data-dir)');
  assert.equal(facts.value('etcd.dataDir'), '/mnt/fast/etcd');
  assert.match(facts.get('etcd.dataDir')?.detail ?? '', /hostPath \/mnt\/fast\/etcd mounted at \/var\/lib\/etcd/);
  // The device comes from etcd's own mount table (its /var/lib/etcd bind mount).
  assert.match(facts.get('etcd.device.majorMinor')?.source ?? '', /^\/proc\/2817\/mountinfo/);
  assert.deepEqual([facts.value('etcd.device.name'), facts.value('etcd.device.transport')], ['nvme0n1p1', 'nvme']);
  assert.equal(facts.value('etcd.device.model'), 'Dell Ent NVMe CM6 RI 1.92TB');
  assert.equal(facts.value('etcd.device.scheduler'), 'none');
  assert.equal(facts.value('etcd.device.rotational'), false);
  assert.equal(facts.value('etcd.metricsUrl'), 'http://127.0.0.1:2381');
});

test('k3s embedded etcd on a virtio disk: rotational=1 reported with the caveat', async () => {
  const facts = await factsOf('etcd-k3s-embedded', [etcd]);
  assert.equal(facts.value('etcd.setup'), 'k3s');
  assert.equal(facts.value('etcd.dataDir'), '/var/lib/rancher/k3s/server/db/etcd');
  assert.equal(facts.value('etcd.metricsUrl'), 'http://127.0.0.1:2381');
  assert.deepEqual([facts.value('etcd.device.name'), facts.value('etcd.device.transport')], ['vda1', 'virtio']);
  assert.equal(facts.value('etcd.device.rotational'), true);
  assert.match(facts.get('etcd.device.rotational')?.detail ?? '', /measured fsync latency decides/);
});

test('LVM over dm-crypt and an HDD partition: slaves walked down to both disks, rotational if any is', async () => {
  const facts = await factsOf('etcd-lvm-chain', [etcd]);
  assert.equal(facts.value('etcd.setup'), 'kubeadm');
  assert.equal(facts.value('etcd.device.name'), 'dm-2');
  assert.equal(facts.value('etcd.device.kind'), 'device-mapper');
  assert.match(facts.get('etcd.device.name')?.detail ?? '', /dm-2 → dm-0 → sdb1 → sdb → sda3 → sda \(vg0-etcd\)/);
  assert.deepEqual(facts.value('etcd.device.disks'), ['sdb', 'sda']);
  assert.equal(facts.value('etcd.device.rotational'), true);
});

test('no etcd: present=false and every other etcd fact null, so rules are not-applicable', async (t) => {
  const root = await tempHost(t, { 'proc/1/cmdline': '/sbin/init\0', 'etc/hostname': 'worker-1\n' });
  const facts = await collectFacts(new HostRoot(root), { collectors: [etcd, etcdPriority] });
  assert.equal(facts.value('etcd.present'), false);
  assert.equal(facts.value('etcd.dataDir'), null);
  assert.equal(facts.value('etcd.ioPriority.class'), null);
  const blind = await tempHost(t, { 'etc/hostname': 'worker-1\n' });
  const unsure = await collectFacts(new HostRoot(blind), { collectors: [etcd] });
  assert.match(unsure.get('etcd.present')?.unknown ?? '', /\/proc is not readable/);
});

test('a data dir on tmpfs has no block device: device facts unknown with the reason', async (t) => {
  const root = await tempHost(t, {
    'proc/1/mountinfo': '21 0 8:1 / / rw - ext4 /dev/sda1 rw\n30 21 0:40 / /var/lib/etcd rw - tmpfs tmpfs rw,size=65536k\n',
    'etc/etcd.env': 'ETCD_DATA_DIR=/var/lib/etcd\n',
  });
  const facts = await collectFacts(new HostRoot(root), { collectors: [etcd] });
  assert.equal(facts.value('etcd.device.fsType'), 'tmpfs');
  assert.match(facts.get('etcd.device.rotational')?.unknown ?? '', /not a block device/);
});

test('events split and I/O priority parsing', async (t) => {
  assert.equal(splitsEvents('/events#https://10.0.0.1:2383;https://10.0.0.2:2383'), true);
  assert.equal(splitsEvents('coordination.k8s.io/leases#https://10.0.0.1:2385'), false);
  assert.equal(splitsEvents(undefined), false);
  assert.deepEqual(parseIonice('best-effort: prio 0\n'), { class: 'best-effort', level: 0 });
  assert.deepEqual(parseIonice('idle\n'), { class: 'idle', level: null });
  assert.equal(parseIonice('ionice: ioprio_get failed: No such process'), undefined);
  assert.equal(niceFromStat('9312 (my (odd) cmd) S 1 9249 3504 0 -1 4194304 102 0 0 0 0 0 0 0 30 10 1 0'), 10);
  const root = await tempHost(t, {
    'proc/1/cmdline': '/sbin/init\0',
    'proc/812/cmdline': ['kube-apiserver', '--etcd-servers=https://127.0.0.1:2379', '--etcd-servers-overrides=/events#https://127.0.0.1:2383', ''].join('\0'),
    'etc/etcd.env': 'ETCD_DATA_DIR=/var/lib/etcd\n',
  });
  const facts = await collectFacts(new HostRoot(root), { collectors: [etcd, etcdPriority] });
  assert.deepEqual([facts.value('etcd.eventsSplit'), facts.get('etcd.eventsSplit')?.source], [true, '/proc/812/cmdline']);
  assert.match(facts.get('etcd.ioPriority.class')?.unknown ?? '', /no running etcd process/);
});

test('/etc/etcd.env is read as systemd reads an EnvironmentFile, with or without its unit: `KEY = value` counts', async (t) => {
  // systemd drops the blanks around `=` (env-file.c: trailing key whitespace, leading value whitespace).
  const envFile = 'ETCD_DATA_DIR = /data/etcd\n';
  const unit = await readFile(new URL('../fixtures/hosts/etcd-kubespray-ssd/etc/systemd/system/etcd.service', import.meta.url), 'utf8');
  const alone = await tempHost(t, { 'proc/1/mountinfo': '21 0 8:1 / / rw - ext4 /dev/sda1 rw\n', 'etc/etcd.env': envFile });
  const withUnit = await tempHost(t, { 'proc/1/mountinfo': '21 0 8:1 / / rw - ext4 /dev/sda1 rw\n', 'etc/etcd.env': envFile, 'etc/systemd/system/etcd.service': unit });
  for (const root of [alone, withUnit]) {
    const facts = await collectFacts(new HostRoot(root), { collectors: [etcd] });
    assert.equal(facts.value('etcd.dataDir'), '/data/etcd', root === alone ? 'env file alone' : 'env file of the unit');
  }
});

test('flag, env and manifest parsing', () => {
  assert.deepEqual([...parseFlags(['--data-dir', '/a', '-name=m1', '--debug', '--x=1=2'])], [['data-dir', '/a'], ['name', 'm1'], ['debug', 'true'], ['x', '1=2']]);
  assert.equal(parseEnvironmentFile('# c\nETCD_DATA_DIR="/data/etcd"\nexport A=b\n').get('ETCD_DATA_DIR'), '/data/etcd');
  // environ holds what the process got: no quotes are removed, no newline splits an entry.
  assert.deepEqual([...parseEnviron('ETCD_DATA_DIR="/x"\0MULTI=a\nb\0junk\0')], [['ETCD_DATA_DIR', '"/x"'], ['MULTI', 'a\nb']]);
  assert.equal(pickMetricsUrl('https://a:2379, http://0.0.0.0:2381/'), 'https://a:2379');
  assert.equal(pickMetricsUrl('unix://x,http://0.0.0.0:2381/'), 'http://127.0.0.1:2381');
  assert.deepEqual(mapToHost('/var/lib/etcd/x', [{ mountPath: '/var/lib', hostPath: '/h1' }, { mountPath: '/var/lib/etcd', hostPath: '/h2' }])?.hostPath, '/h2/x');
  assert.equal(mapToHost('/other', [{ mountPath: '/var/lib/etcd', hostPath: '/h2' }]), undefined);
  assert.equal(parseEtcdManifest('{{{ not yaml'), undefined);
  assert.equal(parseEtcdManifest('spec: {containers: []}'), undefined);
});

test('parsers never throw on garbage', () => {
  fc.assert(
    fc.property(fc.string(), fc.array(fc.string()), (text, args) => {
      parseFlags(args);
      parseEnvironmentFile(text);
      parseEnviron(text);
      parseEtcdManifest(text);
      parseIonice(text);
      niceFromStat(text);
      splitsEvents(text);
      pickMetricsUrl(text);
    }),
    { numRuns: 300 },
  );
});

test('etcd on dm-multipath: one disk (the map) reached over two iSCSI paths', async () => {
  const facts = await factsOf('etcd-dm-multipath', [etcd]);
  assert.deepEqual([facts.value('etcd.device.kind'), facts.value('etcd.device.disks')], ['multipath', ['mpathA']]);
  assert.equal(facts.get('etcd.device.rotational')?.detail, 'mpathA (multipath over sdb, sdc): rotational=0, transport iscsi');
});
