// The mount table as the kernel prints it in /proc/<pid>/mountinfo, and the mount that holds a path.
// Format (proc(5)): "36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue".
import type { HostRoot } from './host-root.ts';
import { oncePerScanAndKey } from './per-scan.ts';

/** Nodes with thousands of pods have mount tables of several MiB (~150 bytes a mount). */
export const MAX_MOUNTINFO_BYTES = 16 * 1024 * 1024;

export type MountTable = { ok: true; entries: MountEntry[] } | { ok: false; reason: string };

/**
 * A whole mount table, or why not. A table longer than the cap is not parsed in part: the mounts
 * cut off could be the very one holding a path, which would then be attributed to a parent (often /).
 */
export const readMountTable: (host: HostRoot, path: string) => Promise<MountTable> = oncePerScanAndKey(readMountTableOnce);

async function readMountTableOnce(host: HostRoot, path: string): Promise<MountTable> {
  const read = await host.readText(path, { maxBytes: MAX_MOUNTINFO_BYTES });
  if (!read.ok) return { ok: false, reason: read.reason };
  if (read.truncated) {
    return { ok: false, reason: `${path} is longer than ${MAX_MOUNTINFO_BYTES / 1024 / 1024} MiB; a mount table read in part could name the wrong mount, so none is named` };
  }
  return { ok: true, entries: parseMountinfo(read.text) };
}

export interface MountEntry {
  mountId: number;
  parentId: number;
  /** "major:minor" of the filesystem; 0:N for tmpfs, overlay and btrfs subvolumes. */
  majorMinor: string;
  /** The path inside the filesystem that is mounted (bind mounts show a subdirectory). */
  root: string;
  mountPoint: string;
  mountOptions: string;
  fsType: string;
  source: string;
  superOptions: string;
}

/** "\040" → " " and the other octal escapes the kernel uses for space, tab, newline and backslash. */
export function unescapeMountPath(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
}

export function parseMountinfo(text: string): MountEntry[] {
  const entries: MountEntry[] = [];
  for (const line of text.split('\n')) {
    const fields = line.trim().split(' ');
    const separator = fields.indexOf('-', 6);
    if (separator < 0 || fields.length < separator + 3) continue;
    const [mountId, parentId, majorMinor, root, mountPoint, mountOptions] = fields;
    if (!/^\d+:\d+$/.test(majorMinor ?? '') || !/^\d+$/.test(mountId ?? '') || !mountPoint?.startsWith('/')) continue;
    entries.push({
      mountId: Number(mountId),
      parentId: Number(parentId),
      majorMinor: majorMinor as string,
      root: unescapeMountPath(root ?? ''),
      mountPoint: unescapeMountPath(mountPoint),
      mountOptions: mountOptions ?? '',
      fsType: fields[separator + 1] as string,
      source: unescapeMountPath(fields[separator + 2] as string),
      superOptions: fields[separator + 3] ?? '',
    });
  }
  return entries;
}

function contains(mountPoint: string, target: string): boolean {
  if (mountPoint === '/') return true;
  return target === mountPoint || target.startsWith(mountPoint + '/');
}

/** The mount a path lives on: the longest containing mount point; of equal ones the last (it covers the others). */
export function mountFor(entries: readonly MountEntry[], absolutePath: string): MountEntry | undefined {
  let best: MountEntry | undefined;
  for (const entry of entries) {
    if (!contains(entry.mountPoint, absolutePath)) continue;
    if (!best || entry.mountPoint.length >= best.mountPoint.length) best = entry;
  }
  return best;
}
