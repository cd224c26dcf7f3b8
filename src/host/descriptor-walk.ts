// A path below a --host-root walked as the kernel walks it inside a chroot, one component at a time,
// each opened relative to its parent's descriptor with O_PATH|O_NOFOLLOW: nothing is opened for
// reading and the kernel follows no link. A symlink is read and its target walked on, from the root
// (absolute) or from its directory; ".." pops to the parent's descriptor and stays at the root. A
// component swapped for a symlink or moved once it is open changes nothing: each next step starts
// from the descriptor, not from a name. Node has no openat(2) nor openat2's RESOLVE_BENEATH;
// `/proc/self/fd/<dir>/<name>` is the same lookup (the kernel jumps to the descriptor's directory).
// Directories, links and failures found on the way are shared through the DirectoryCache, so a
// scan opens each directory once, not once per file below it.
import { constants, fstat, open, readlink, type Stats } from 'node:fs';
import { promisify } from 'node:util';
import path from 'node:path';
import { closeQuietly, type DirectoryCache, type Known } from './directory-cache.ts';
import { descriptorPath, O_PATH } from './open-checked.ts';
import { errorCode } from './read-failure.ts';

const MAX_SYMLINK_HOPS = 40;
const HOLD = O_PATH | constants.O_NOFOLLOW;

export const openFd = promisify(open);
export const fstatFd = promisify(fstat);
const readlinkAt = promisify(readlink);

/** An O_PATH descriptor; `shared`: the cache's (never close it), else the caller closes it (`release`). */
export type Held = { fd: number; shared: boolean };
export type Walked = ({ ok: true; info: Stats } & Held) | { ok: false; error: unknown };
type Directory = Held & { key: string };

export function release(held: Held | undefined): void {
  if (held && !held.shared) closeQuietly(held.fd);
}

/** The host path's file under `root` as an O_PATH descriptor and its stat. */
export async function walkBeneath(root: string, hostPath: string, cache: DirectoryCache): Promise<Walked> {
  const directories: Directory[] = [];
  const pending = components(hostPath);
  let hops = 0;
  try {
    while (pending.length > 0) {
      const part = pending.shift() as string;
      if (part === '.') continue;
      if (part === '..') {
        release(directories.pop());
        continue;
      }
      const parent = directories.at(-1);
      const key = parent ? `${parent.key}/${part}` : part;
      const at = `${parent ? descriptorPath(parent.fd) : root}/${part}`;
      const step = pending.length > 0 ? await throughStep(cache, key, at) : await lastStep(cache, key, at);
      if (step.kind === 'failed') return { ok: false, error: step.error };
      if (step.kind === 'link') {
        if (++hops > MAX_SYMLINK_HOPS) return { ok: false, error: { code: 'ELOOP' } };
        if (step.target === '') return { ok: false, error: { code: 'ENOENT' } };
        if (path.isAbsolute(step.target)) directories.splice(0).forEach(release);
        pending.unshift(...components(step.target));
        continue;
      }
      if (step.kind === 'file') return { ok: true, fd: step.fd, shared: false, info: step.info };
      directories.push({ key, fd: step.fd, shared: step.shared });
    }
    const last = directories.pop() ?? (await rootDirectory(cache, root));
    return await withStat(last);
  } catch (error) {
    return { ok: false, error };
  } finally {
    directories.forEach(release);
  }
}

type Step =
  | ({ kind: 'directory' } & Held)
  | { kind: 'file'; fd: number; info: Stats }
  | { kind: 'link'; target: string }
  | { kind: 'failed'; error: unknown };

function stepOf(known: Known, shared: boolean): Step {
  if (known.kind === 'directory') return { kind: 'directory', fd: known.fd, shared };
  if (known.kind === 'not-directory') return { kind: 'failed', error: { code: 'ENOTDIR' } };
  return known;
}

/** A component with more after it: must be a directory, or a link to walk on. */
async function throughStep(cache: DirectoryCache, key: string, at: string): Promise<Step> {
  const { known, shared } = await cache.lookUp(key, () => findThrough(at));
  return stepOf(known, shared);
}

/**
 * Opened with O_DIRECTORY first (one call; a symlink or a file fails it and is looked at again).
 * A symlink's target is read through the parent's descriptor too.
 */
async function findThrough(at: string): Promise<Known> {
  try {
    return { kind: 'directory', fd: await openFd(at, HOLD | constants.O_DIRECTORY) };
  } catch (error) {
    const code = errorCode(error);
    if (code !== 'ENOTDIR' && code !== 'ELOOP') return { kind: 'failed', error };
  }
  try {
    const fd = await openFd(at, HOLD);
    const info = await statOrClose(fd);
    if (info.isDirectory()) return { kind: 'directory', fd };
    closeQuietly(fd);
    if (info.isSymbolicLink()) return { kind: 'link', target: await readlinkAt(at) };
    return { kind: 'not-directory' };
  } catch (error) {
    return { kind: 'failed', error };
  }
}

/**
 * The last component: a directory or link a walk found already is taken from the cache; anything
 * else is held anew and stat'ed through its descriptor (a file is never remembered: the very file
 * a read checks is the one it opens).
 */
async function lastStep(cache: DirectoryCache, key: string, at: string): Promise<Step> {
  const remembered = cache.peek(key);
  const known = remembered && (await remembered);
  if (known && known.kind !== 'not-directory') return stepOf(known, true);
  let fd: number;
  try {
    fd = await openFd(at, HOLD);
  } catch (error) {
    if (errorCode(error) === 'ENOENT') cache.offer(key, { kind: 'failed', error });
    return { kind: 'failed', error };
  }
  const info = await statOrClose(fd);
  if (info.isSymbolicLink()) {
    closeQuietly(fd);
    const target = await readlinkAt(at);
    cache.offer(key, { kind: 'link', target });
    return { kind: 'link', target };
  }
  if (info.isDirectory()) return { kind: 'directory', fd, shared: cache.offer(key, { kind: 'directory', fd }) };
  return { kind: 'file', fd, info };
}

async function rootDirectory(cache: DirectoryCache, root: string): Promise<Directory> {
  const { known, shared } = await cache.lookUp('', async () => {
    try {
      return { kind: 'directory', fd: await openFd(root, O_PATH | constants.O_DIRECTORY) };
    } catch (error) {
      return { kind: 'failed', error };
    }
  });
  if (known.kind !== 'directory') throw known.kind === 'failed' ? known.error : { code: 'ENOTDIR' };
  return { key: '', fd: known.fd, shared };
}

async function withStat(held: Held): Promise<Walked> {
  try {
    return { ok: true, ...held, info: await fstatFd(held.fd) };
  } catch (error) {
    release(held);
    return { ok: false, error };
  }
}

async function statOrClose(fd: number): Promise<Stats> {
  try {
    return await fstatFd(fd);
  } catch (error) {
    closeQuietly(fd);
    throw error;
  }
}

/** A path's components as the kernel walks them; a trailing "/" requires a directory (kept as "."). */
export function components(p: string): string[] {
  const parts = p.split('/').filter((part) => part !== '');
  if (p.endsWith('/') && parts.length > 0) parts.push('.');
  return parts;
}
