// The device-mapper walk on a crafted stack (issue 17 #13): every dm device of a level lists every
// dm device of the next level as a slave, 10 wide and 6 deep — 10^5 paths through 51 devices. A
// walk per path took over 40 s; each device is now walked once. Prints the time and sysfs listings.
import { mkdtemp, mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { blockDeviceFor } from '../src/host/block-device.ts';
import { HostRoot } from '../src/host/host-root.ts';

const WIDTH = 10;
const LEVELS = 6;

class CountingHost extends HostRoot {
  listings = 0;
  override listDir(p: string) {
    this.listings++;
    return super.listDir(p);
  }
}

async function build(root: string): Promise<number> {
  const name = (level: number, i: number) => (level === 0 ? 'dm-0' : `dm-${1 + (level - 1) * WIDTH + i}`);
  const row = (level: number) => Array.from({ length: level === 0 ? 1 : WIDTH }, (_, i) => name(level, i));
  let devices = 1;
  await mkdir(path.join(root, 'sys/class/block'), { recursive: true });
  for (let level = 0; level < LEVELS; level++) {
    for (const dm of row(level)) {
      const dir = path.join(root, 'sys/devices/virtual/block', dm);
      await mkdir(path.join(dir, 'slaves'), { recursive: true });
      await writeFile(path.join(dir, 'dev'), '253:0\n');
      await symlink(`../../devices/virtual/block/${dm}`, path.join(root, 'sys/class/block', dm));
      for (const slave of level === LEVELS - 1 ? ['sda'] : row(level + 1)) await symlink(`../../${slave}`, path.join(dir, 'slaves', slave));
      devices++;
    }
  }
  const sda = 'sys/devices/pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0/block/sda';
  await mkdir(path.join(root, sda, 'queue'), { recursive: true });
  await writeFile(path.join(root, sda, 'queue/rotational'), '0\n');
  await symlink(`../../${sda.replace('sys/', '')}`, path.join(root, 'sys/class/block/sda'));
  await mkdir(path.join(root, 'sys/dev/block'), { recursive: true });
  await symlink('../../devices/virtual/block/dm-0', path.join(root, 'sys/dev/block/253:0'));
  return devices;
}

export async function run(): Promise<void> {
  const root = await mkdtemp(path.join(tmpdir(), 'nta-dm-dag-'));
  try {
    const devices = await build(root);
    const host = new CountingHost(root);
    const started = performance.now();
    const result = await blockDeviceFor(host, '253:0');
    const ms = performance.now() - started;
    console.log(`${WIDTH} wide × ${LEVELS} deep (${devices} devices, ${WIDTH ** (LEVELS - 1)} paths): ${ms.toFixed(0)} ms, ${host.listings} directory listings, ${result.ok ? `disks ${result.device.disks.map((d) => d.name).join(', ')}` : result.reason}`);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}
