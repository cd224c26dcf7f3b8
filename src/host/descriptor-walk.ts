// A path below a --host-root walked as the kernel walks it inside a chroot, one component at a time,
// each opened relative to its parent's descriptor with O_PATH|O_NOFOLLOW: nothing is opened for
// reading and the kernel follows no link. A symlink is read and its target walked on, from the root
// (absolute) or from its directory; ".." pops to the parent's descriptor and stays at the root. A
// component swapped for a symlink or moved once it is open changes nothing: each next step starts
// from the descriptor, not from a name. Node has no openat(2) nor openat2's RESOLVE_BENEATH;
// `/proc/self/fd/<dir>/<name>` is the same lookup (the kernel jumps to the descriptor's directory).
import { constants, type Stats } from 'node:fs';
import { open, readlink, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { closeLater, descriptorPath, O_PATH } from './open-checked.ts';

const MAX_SYMLINK_HOPS = 40;

export type Walked = { ok: true; handle: FileHandle; info: Stats } | { ok: false; error: unknown };

/** The host path's file under `root` as an O_PATH descriptor and its stat; the handle is the caller's to close. */
export async function walkBeneath(root: string, hostPath: string): Promise<Walked> {
  const directories: FileHandle[] = [];
  const pending = components(hostPath);
  let hops = 0;
  try {
    while (pending.length > 0) {
      const part = pending.shift() as string;
      if (part === '.') continue;
      if (part === '..') {
        closeLater(directories.pop());
        continue;
      }
      const parent = directories.at(-1);
      const at = `${parent ? descriptorPath(parent.fd) : root}/${part}`;
      const step = await openComponent(at, pending.length > 0);
      if (step.kind === 'failed') return { ok: false, error: step.error };
      if (step.kind === 'link') {
        if (++hops > MAX_SYMLINK_HOPS) return { ok: false, error: { code: 'ELOOP' } };
        if (step.target === '') return { ok: false, error: { code: 'ENOENT' } };
        if (path.isAbsolute(step.target)) directories.splice(0).forEach(closeLater);
        pending.unshift(...components(step.target));
        continue;
      }
      if (step.kind === 'last') return { ok: true, handle: step.handle, info: step.info };
      directories.push(step.handle);
    }
    const last = directories.pop() ?? (await open(root, O_PATH | constants.O_DIRECTORY));
    return await withStat(last);
  } catch (error) {
    return { ok: false, error };
  } finally {
    directories.forEach(closeLater);
  }
}

type Step =
  | { kind: 'directory'; handle: FileHandle }
  | { kind: 'last'; handle: FileHandle; info: Stats }
  | { kind: 'link'; target: string }
  | { kind: 'failed'; error: unknown };

/**
 * One component by its parent's descriptor. One that has more after it must be a directory: opened
 * with O_DIRECTORY first (one call; a symlink or a file fails it and is looked at again). The last one is stat'ed
 * through its descriptor. A symlink's target is read through the parent's descriptor too.
 */
async function openComponent(at: string, moreAfter: boolean): Promise<Step> {
  if (moreAfter) {
    try {
      return { kind: 'directory', handle: await open(at, O_PATH | constants.O_NOFOLLOW | constants.O_DIRECTORY) };
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOTDIR' && code !== 'ELOOP') return { kind: 'failed', error };
    }
  }
  const walked = await withStat(await open(at, O_PATH | constants.O_NOFOLLOW));
  if (!walked.ok) return { kind: 'failed', error: walked.error };
  if (walked.info.isSymbolicLink()) {
    closeLater(walked.handle);
    return { kind: 'link', target: await readlink(at) };
  }
  if (moreAfter) {
    if (walked.info.isDirectory()) return { kind: 'directory', handle: walked.handle };
    closeLater(walked.handle);
    return { kind: 'failed', error: { code: 'ENOTDIR' } };
  }
  return { kind: 'last', ...walked };
}

async function withStat(handle: FileHandle): Promise<Walked> {
  try {
    return { ok: true, handle, info: await handle.stat() };
  } catch (error) {
    closeLater(handle);
    return { ok: false, error };
  }
}

/** A path's components as the kernel walks them; a trailing "/" requires a directory (kept as "."). */
export function components(p: string): string[] {
  const parts = p.split('/').filter((part) => part !== '');
  if (p.endsWith('/') && parts.length > 0) parts.push('.');
  return parts;
}
