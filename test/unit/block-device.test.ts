import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { activeScheduler, blockDeviceFor, transportFromSysPath } from '../../src/host/block-device.ts';
import { mountFor, parseMountinfo } from '../../src/host/mountinfo.ts';
import { HostRoot } from '../../src/host/host-root.ts';
import { fixtureHost } from '../helpers/fixtures.ts';

const TABLE = [
  '21 0 8:2 / / rw,relatime shared:1 - ext4 /dev/sda2 rw,errors=remount-ro',
  '98 21 8:17 / /data rw,noatime shared:45 - xfs /dev/sdb1 rw,attr2,inode64,noquota',
  '99 21 0:50 / /data/my\\040dir rw - tmpfs tmpfs rw',
  '100 98 8:33 / /data rw - ext4 /dev/sdc1 rw',
  'garbage line',
].join('\n');

test('mountinfo: fields, octal escapes, longest prefix, the later of two mounts on one point', () => {
  const entries = parseMountinfo(TABLE);
  assert.equal(entries.length, 4);
  assert.deepEqual([entries[0]?.fsType, entries[0]?.source, entries[0]?.superOptions], ['ext4', '/dev/sda2', 'rw,errors=remount-ro']);
  assert.equal(entries[2]?.mountPoint, '/data/my dir');
  assert.equal(mountFor(entries, '/data/my dir/x')?.fsType, 'tmpfs');
  assert.equal(mountFor(entries, '/data/etcd')?.majorMinor, '8:33');
  assert.equal(mountFor(entries, '/database')?.majorMinor, '8:2');
});

test('transport from the sysfs path, active scheduler', () => {
  assert.equal(transportFromSysPath('sda', '/sys/devices/pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0/block/sda'), 'sata');
  assert.equal(transportFromSysPath('nvme0n1', '/sys/devices/pci0000:00/0000:00:04.0/nvme/nvme0/nvme0n1'), 'nvme');
  assert.equal(transportFromSysPath('vda', '/sys/devices/pci0000:00/0000:00:02.0/virtio1/block/vda'), 'virtio');
  assert.equal(transportFromSysPath('sdb', '/sys/devices/platform/host3/session1/target3:0:0/3:0:0:1/block/sdb'), 'iscsi');
  assert.equal(transportFromSysPath('loop0', '/sys/devices/virtual/block/loop0'), 'virtual');
  assert.equal(activeScheduler('none [mq-deadline] kyber bfq'), 'mq-deadline');
  assert.equal(activeScheduler('none'), 'none');
  assert.equal(activeScheduler(''), null);
});

test('a partition resolves to its disk, an unknown major:minor and an anonymous one say why', async () => {
  const host = new HostRoot(fixtureHost('etcd-kubespray-ssd'));
  const sdb1 = await blockDeviceFor(host, '8:17');
  assert.ok(sdb1.ok);
  assert.deepEqual([sdb1.device.kind, sdb1.device.chain, sdb1.device.disks[0]?.rotational], ['partition', ['sdb1', 'sdb'], false]);
  const missing = await blockDeviceFor(host, '9:9');
  assert.deepEqual(missing.ok ? undefined : missing.reason, '/sys/dev/block/9:9 does not exist or cannot be resolved');
  const anonymous = await blockDeviceFor(host, '0:42');
  assert.match(anonymous.ok ? '' : anonymous.reason, /not a block device/);
});

test('this machine: the device under / resolves to a whole disk with a rotational flag', async (t) => {
  const root = parseMountinfo(await import('node:fs/promises').then((fs) => fs.readFile('/proc/self/mountinfo', 'utf8')));
  const mount = mountFor(root, '/');
  if (!mount || mount.majorMinor.startsWith('0:')) return t.skip('root filesystem is not on a block device here');
  const result = await blockDeviceFor(new HostRoot('/'), mount.majorMinor);
  assert.ok(result.ok, result.ok ? '' : result.reason);
  assert.ok(result.device.disks.length >= 1);
  assert.equal(typeof result.device.disks[0]?.rotational, 'boolean');
});

test('mountinfo and sysfs parsers never throw on garbage', () => {
  fc.assert(
    fc.property(fc.string(), fc.string(), (text, target) => {
      mountFor(parseMountinfo(text), '/' + target);
      activeScheduler(text);
      transportFromSysPath(target, text);
    }),
    { numRuns: 300 },
  );
});

test('dm-multipath: the paths of one LUN are one disk, not several', async () => {
  const result = await blockDeviceFor(new HostRoot(fixtureHost('etcd-dm-multipath')), '253:1');
  assert.ok(result.ok);
  const { device } = result;
  assert.deepEqual([device.name, device.kind, device.dmName], ['dm-1', 'multipath', 'mpathA']);
  assert.deepEqual(device.disks.map((disk) => [disk.name, disk.paths, disk.rotational, disk.transport, disk.model]), [
    ['mpathA', ['sdb', 'sdc'], false, 'iscsi', 'etcd-lun'],
  ]);
});

/** A HostRoot that counts directory listings: the walk's work. */
class CountingHost extends HostRoot {
  listings = 0;
  override listDir(p: string) { this.listings++; return super.listDir(p); }
}

test('a crafted device-mapper DAG (every dm of a level lists every dm of the next as a slave) is walked once per device', async (t) => {
  const { tempHost } = await import('../helpers/fixtures.ts');
  const width = 4;
  const levels = 5;
  const files: Record<string, string> = {};
  const dm = (level: number, i: number) => (level === 0 ? 'dm-0' : `dm-${1 + (level - 1) * width + i}`);
  const add = (name: string, slaves: string[]) => {
    files[`sys/devices/virtual/block/${name}/dev`] = '253:0\n';
    files[`sys/class/block/${name}`] = `->../../devices/virtual/block/${name}`;
    for (const slave of slaves) files[`sys/devices/virtual/block/${name}/slaves/${slave}`] = `->../../${slave}`;
  };
  const row = (level: number) => Array.from({ length: level === 0 ? 1 : width }, (_, i) => dm(level, i));
  for (let level = 0; level < levels; level++) for (const name of row(level)) add(name, level === levels - 1 ? ['sda'] : row(level + 1));
  files['sys/devices/pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0/block/sda/queue/rotational'] = '0\n';
  files['sys/class/block/sda'] = '->../../devices/pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0/block/sda';
  files['sys/dev/block/253:0'] = '->../../devices/virtual/block/dm-0';
  const host = new CountingHost(await tempHost(t, files));
  const result = await blockDeviceFor(host, '253:0');
  assert.ok(result.ok, result.ok ? '' : result.reason);
  assert.deepEqual(result.device.disks.map((disk) => disk.name), ['sda']);
  const devices = 1 + width * (levels - 1) + 1;
  assert.ok(host.listings <= devices, `${host.listings} listings for ${devices} devices (a walk per path would take ${width ** (levels - 1)}+)`);
});
