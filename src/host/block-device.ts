// host/: every read of the node goes through here; imports only text/ and the leaves, never a layer above.
// From a "major:minor" to the physical disks under it, through sysfs: /sys/dev/block/M:m links to
// the device's directory; a partition's parent directory is its disk; a device-mapper device (LVM,
// dm-crypt, multipath) lists what it is built on in slaves/, which may be dm devices again. Each device
// is walked once (the stack is a DAG), and a multipath map's slaves are paths to one LUN, not disks.
import path from 'node:path';
import type { HostRoot } from './host-root.ts';

const MAX_DEPTH = 8;

export interface PhysicalDisk {
  name: string;
  /** Host path of its sysfs directory, e.g. /sys/devices/pci0000:00/.../block/sda. */
  sysPath: string;
  rotational: boolean | null;
  model: string | null;
  transport: string | null;
  scheduler: string | null;
  /** dm-multipath: the path devices (sdb, sdc) that reach this one LUN. */
  paths?: string[];
}

export interface BlockDevice {
  /** The device the filesystem sits on: "sda2", "dm-0", "nvme0n1p1". */
  name: string;
  kind: 'disk' | 'partition' | 'device-mapper' | 'multipath';
  /** Device-mapper name (dm/name), e.g. "vg0-etcd". */
  dmName: string | null;
  /** Top to bottom: "dm-0 → sda2 → sda". */
  chain: string[];
  disks: PhysicalDisk[];
}

export type BlockDeviceResult = { ok: true; device: BlockDevice } | { ok: false; reason: string };

/** The host path a sysfs link points at, resolved inside the host root (the kernel's name for what the walk reached). */
export async function realHostPath(host: HostRoot, hostPath: string): Promise<string | undefined> {
  const real = await host.realPath(hostPath);
  return real.ok ? real.path : undefined;
}

/** The transport the way lsblk names it, judged from where the disk hangs in the device tree. */
export function transportFromSysPath(name: string, sysPath: string): string | null {
  if (name.startsWith('nvme') || sysPath.includes('/nvme/')) return 'nvme';
  if (sysPath.includes('/virtio')) return 'virtio';
  if (name.startsWith('xvd') || sysPath.includes('/xen/') || sysPath.includes('/vbd-')) return 'xen';
  if (sysPath.includes('/usb')) return 'usb';
  if (/\/ata\d+\//.test(sysPath)) return 'sata';
  if (/\/session\d+\//.test(sysPath)) return 'iscsi';
  if (/\/rport-/.test(sysPath)) return 'fc';
  if (sysPath.includes('/VMBUS:') || sysPath.includes('/vmbus_')) return 'hyperv';
  if (name.startsWith('mmcblk')) return 'mmc';
  if (/\/host\d+\/target\d+/.test(sysPath)) return 'scsi';
  if (sysPath.startsWith('/sys/devices/virtual/')) return 'virtual';
  return null;
}

/** "none [mq-deadline] kyber bfq" → "mq-deadline"; a single word ("none") is itself. */
export function activeScheduler(text: string): string | null {
  const bracketed = /\[([^\]]+)\]/.exec(text)?.[1];
  if (bracketed) return bracketed;
  const words = text.trim().split(/\s+/).filter(Boolean);
  return words.length === 1 ? (words[0] as string) : null;
}

async function readOptional(host: HostRoot, hostPath: string): Promise<string | null> {
  const read = await host.readValue(hostPath);
  return read.ok && read.text !== '' ? read.text : null;
}

async function describeDisk(host: HostRoot, sysPath: string): Promise<PhysicalDisk> {
  const name = path.posix.basename(sysPath);
  const rotational = await readOptional(host, `${sysPath}/queue/rotational`);
  const scheduler = await readOptional(host, `${sysPath}/queue/scheduler`);
  // NVMe namespaces keep the model on the controller (device/), SCSI and SATA on the device itself.
  const model = (await readOptional(host, `${sysPath}/device/model`)) ?? (await readOptional(host, `${sysPath}/device/device/model`));
  return {
    name,
    sysPath,
    rotational: rotational === '1' ? true : rotational === '0' ? false : null,
    model,
    transport: transportFromSysPath(name, sysPath),
    scheduler: scheduler === null ? null : activeScheduler(scheduler),
  };
}

interface Walk {
  /** Every device met, once, in the order first reached. */
  chain: string[];
  disks: PhysicalDisk[];
  /** sysfs paths already walked: a device-mapper stack is a DAG, and a crafted one must not cost a walk per path. */
  visited: Set<string>;
}

/** dm-multipath maps (and their partitions, "part1-mpath-…") join paths to one LUN; their slaves are not separate disks. */
function isMultipathUuid(uuid: string | null): boolean {
  return uuid !== null && /^(?:part\d+-)*mpath-/.test(uuid);
}

async function walk(host: HostRoot, sysPath: string, depth: number, acc: Walk): Promise<string | undefined> {
  const name = path.posix.basename(sysPath);
  if (depth > MAX_DEPTH) return `${sysPath}: device stack deeper than ${MAX_DEPTH} levels`;
  if (acc.visited.has(sysPath)) return undefined;
  acc.visited.add(sysPath);
  acc.chain.push(name);
  if (await host.exists(`${sysPath}/partition`)) {
    return walk(host, path.posix.dirname(sysPath), depth + 1, acc);
  }
  const slaves = await host.listDir(`${sysPath}/slaves`);
  if (!slaves.ok || slaves.entries.length === 0) {
    acc.disks.push(await describeDisk(host, sysPath));
    return undefined;
  }
  const multipath = isMultipathUuid(await readOptional(host, `${sysPath}/dm/uuid`));
  const below: Walk = multipath ? { chain: acc.chain, disks: [], visited: acc.visited } : acc;
  for (const slave of slaves.entries) {
    const slavePath = await realHostPath(host, `/sys/class/block/${slave}`);
    if (!slavePath) return `/sys/class/block/${slave} (a slave of ${name}) cannot be resolved`;
    const problem = await walk(host, slavePath, depth + 1, below);
    if (problem) return problem;
  }
  if (multipath) acc.disks.push(await multipathDisk(host, sysPath, below.disks));
  return undefined;
}

/** One LUN reached over several paths: named after the map, described by its first path, its paths listed. */
async function multipathDisk(host: HostRoot, sysPath: string, paths: PhysicalDisk[]): Promise<PhysicalDisk> {
  const name = (await readOptional(host, `${sysPath}/dm/name`)) ?? path.posix.basename(sysPath);
  const first = paths[0];
  const rotational = paths.some((p) => p.rotational === true) ? true : paths.length > 0 && paths.every((p) => p.rotational === false) ? false : null;
  return {
    name,
    sysPath,
    rotational,
    model: first?.model ?? null,
    transport: first?.transport ?? null,
    scheduler: first?.scheduler ?? null,
    paths: paths.map((p) => p.name),
  };
}

export async function blockDeviceFor(host: HostRoot, majorMinor: string): Promise<BlockDeviceResult> {
  if (/^0:\d+$/.test(majorMinor)) {
    return { ok: false, reason: `device ${majorMinor} is not a block device (tmpfs, overlay or a btrfs subvolume)` };
  }
  const link = `/sys/dev/block/${majorMinor}`;
  const sysPath = await realHostPath(host, link);
  if (!sysPath || !(await host.exists(sysPath))) return { ok: false, reason: `${link} does not exist or cannot be resolved` };
  const acc: Walk = { chain: [], disks: [], visited: new Set() };
  const problem = await walk(host, sysPath, 0, acc);
  if (problem) return { ok: false, reason: problem };
  const name = path.posix.basename(sysPath);
  const dmName = await readOptional(host, `${sysPath}/dm/name`);
  const isPartition = await host.exists(`${sysPath}/partition`);
  const multipath = isMultipathUuid(await readOptional(host, `${sysPath}/dm/uuid`));
  const kind = multipath ? 'multipath' : dmName !== null || acc.chain.length > 1 && !isPartition ? 'device-mapper' : isPartition ? 'partition' : 'disk';
  return { ok: true, device: { name, kind, dmName, chain: acc.chain, disks: acc.disks } };
}

/** For a mount source such as /dev/nvme0n1p2 when the mount's major:minor is anonymous (btrfs). */
export async function majorMinorOfDevNode(host: HostRoot, source: string): Promise<string | undefined> {
  if (!source.startsWith('/dev/')) return undefined;
  const devPath = await realHostPath(host, source);
  const name = path.posix.basename(devPath ?? source);
  const dev = await host.readValue(`/sys/class/block/${name}/dev`);
  return dev.ok && /^\d+:\d+$/.test(dev.text) ? dev.text : undefined;
}
