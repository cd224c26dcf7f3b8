// Every read of the host goes through HostRoot. It maps host paths ("/proc/cpuinfo") into a root
// directory (`--host-root`) and resolves them the way the kernel would inside a chroot there: one
// component at a time, symlinks expanded (an absolute target means "from the host's /"), ".." of the
// root staying at the root, a missing component failing the whole path. Reads walk the path by
// descriptor (descriptor-walk.ts) and open nothing for reading before the descriptor says it is a
// regular file or a directory (open-checked.ts): a symlink swapped in meanwhile can neither lead out
// nor open a device or a FIFO. Reads are capped; errors come back as values.
import { type Stats } from 'node:fs';
import { lstat, open, readdir, readlink, realpath, stat, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { components, walkBeneath } from './descriptor-walk.ts';
import { closeLater, descriptorPath, O_PATH, reopenForReading } from './open-checked.ts';
import { naturalCompare } from '../order.ts';
import { errorCode, escaped, failure, notRegular, type ReadFailure } from './read-failure.ts';

export { naturalCompare } from '../order.ts';

export { errorCode, type ReadFailure, type ReadFailureCode } from './read-failure.ts';

export const DEFAULT_MAX_BYTES = 1024 * 1024;
const MAX_SYMLINK_HOPS = 40;

export interface TextRead {
  ok: true;
  path: string;
  text: string;
  /** True when the file was longer than the cap and only its start was read. */
  truncated: boolean;
}

export interface DirRead {
  ok: true;
  path: string;
  entries: string[];
}

export type TextResult = TextRead | ReadFailure;
export type DirResult = DirRead | ReadFailure;

export interface TailRead {
  ok: true;
  path: string;
  data: Buffer;
  start: number;
  size: number;
}

export type TailResult = TailRead | ReadFailure;

export interface ReadOptions {
  maxBytes?: number;
}

type Opened = { ok: true; handle: FileHandle; info: Stats } | ReadFailure;
/** An O_PATH descriptor of the file a host path names (nothing opened for reading) and its stat. */
type Located = { ok: true; pathHandle: FileHandle; info: Stats } | ReadFailure;

/** What resolve needs of one path component: lstat, and the link's target when it is one. */
type Component = { ok: true; symlink: boolean; directory: boolean; target: string } | { ok: false; error: unknown };
/** Components remembered per HostRoot (one scan): /sys, /proc/<pid>, … are walked by hundreds of reads. */
const MAX_REMEMBERED_COMPONENTS = 4096;

export class HostRoot {
  readonly root: string;
  private realRoot: Promise<string> | undefined;
  private readonly components = new Map<string, Promise<Component>>();

  constructor(root: string) {
    this.root = path.resolve(root);
  }

  /** True when the tool looks at the machine it runs on, so running its commands is meaningful. */
  get isRealRoot(): boolean {
    return this.root === '/';
  }

  /** Where a host path lives on the filesystem we can open; every symlink on the way resolved inside the root. */
  async resolve(hostPath: string): Promise<{ ok: true; localPath: string } | ReadFailure> {
    if (this.isRealRoot) return { ok: true, localPath: normalizeHostPath(hostPath) };
    let hops = 0;
    let resolved: string[] = [];
    const pending = components(hostPath);
    while (pending.length > 0) {
      const part = pending.shift() as string;
      if (part === '.') continue;
      if (part === '..') {
        resolved.pop();
        continue;
      }
      const candidate = [...resolved, part];
      const local = path.join(this.root, ...candidate);
      const info = await this.component(local);
      if (!info.ok) return failure(hostPath, info.error);
      if (info.symlink) {
        if (++hops > MAX_SYMLINK_HOPS) return failure(hostPath, { code: 'ELOOP' });
        if (info.target === '') return failure(hostPath, { code: 'ENOENT' });
        if (path.isAbsolute(info.target)) resolved = [];
        pending.unshift(...components(info.target));
        continue;
      }
      if (pending.length > 0 && !info.directory) return failure(hostPath, { code: 'ENOTDIR' });
      resolved = candidate;
    }
    return { ok: true, localPath: path.join(this.root, ...resolved) };
  }

  /**
   * One lstat (and readlink) per component per scan, for the callers that need a local path (a
   * probe directory, statfs, realpath); each async call is a trip through libuv's thread pool.
   * Reads do not use it: they walk by descriptor.
   */
  private component(local: string): Promise<Component> {
    const known = this.components.get(local);
    if (known) return known;
    const looked = (async (): Promise<Component> => {
      try {
        const info = await lstat(local);
        const symlink = info.isSymbolicLink();
        return { ok: true, symlink, directory: info.isDirectory(), target: symlink ? await readlink(local) : '' };
      } catch (error) {
        return { ok: false, error };
      }
    })();
    if (this.components.size < MAX_REMEMBERED_COMPONENTS) this.components.set(local, looked);
    return looked;
  }

  async readText(hostPath: string, options: ReadOptions = {}): Promise<TextResult> {
    const bytes = await this.readBytes(hostPath, options);
    if (!bytes.ok) return bytes;
    return { ok: true, path: hostPath, text: bytes.data.toString('utf8'), truncated: bytes.truncated };
  }

  /** The first trimmed line of a one-value file (sysfs style), or a failure. */
  async readValue(hostPath: string): Promise<TextResult> {
    const result = await this.readText(hostPath, { maxBytes: 64 * 1024 });
    if (!result.ok) return result;
    return { ...result, text: result.text.split('\n', 1)[0]?.trim() ?? '' };
  }

  /** A gzip-compressed text file such as /proc/config.gz; the cap applies to the decompressed text. */
  async readGzipText(hostPath: string, options: ReadOptions = {}): Promise<TextResult> {
    const maxBytes = options.maxBytes ?? 16 * DEFAULT_MAX_BYTES;
    const bytes = await this.readBytes(hostPath, { maxBytes });
    if (!bytes.ok) return bytes;
    try {
      const text = gunzipSync(bytes.data, { maxOutputLength: maxBytes }).toString('utf8');
      return { ok: true, path: hostPath, text, truncated: false };
    } catch (error) {
      const reason = `${hostPath}: not a readable gzip file (${(error as Error).message})`;
      return { ok: false, path: hostPath, code: 'EINVAL', reason };
    }
  }

  /**
   * Up to maxBytes ending at `end` (default: the end of the file), for reading logs backwards in
   * bounded chunks. `start` is the offset of the first byte returned; `size` the file's size.
   */
  async readTail(hostPath: string, options: { maxBytes: number; end?: number }): Promise<TailResult> {
    const opened = await this.openFile(hostPath);
    if (!opened.ok) return opened;
    const { handle, info } = opened;
    try {
      const end = Math.min(options.end ?? info.size, info.size);
      const start = Math.max(0, end - Math.max(0, options.maxBytes));
      const data = Buffer.alloc(end - start);
      let filled = 0;
      while (filled < data.length) {
        const { bytesRead } = await handle.read(data, filled, data.length - filled, start + filled);
        if (bytesRead === 0) break;
        filled += bytesRead;
      }
      return { ok: true, path: hostPath, data: data.subarray(0, filled), start, size: info.size };
    } catch (error) {
      return failure(hostPath, error);
    } finally {
      await handle.close();
    }
  }

  /** The target of a symlink as the host sees it (e.g. /proc/<pid>/cwd), without following it. */
  async readLink(hostPath: string): Promise<TextResult> {
    const normalized = normalizeHostPath(hostPath);
    const parent = await this.resolve(path.posix.dirname(normalized));
    if (!parent.ok) return parent;
    try {
      const target = await readlink(path.join(parent.localPath, path.posix.basename(normalized)));
      return { ok: true, path: hostPath, text: target, truncated: false };
    } catch (error) {
      return failure(hostPath, error);
    }
  }

  async listDir(hostPath: string): Promise<DirResult> {
    const found = await this.locate(hostPath);
    if (!found.ok) return found;
    try {
      if (found.info.isFile()) return failure(hostPath, { code: 'ENOTDIR' });
      if (!found.info.isDirectory()) return notRegular(hostPath, found.info);
      // Listed through the descriptor: the directory that was checked, whatever its path names now.
      const entries = await readdir(descriptorPath(found.pathHandle.fd));
      return { ok: true, path: hostPath, entries: entries.sort(naturalCompare) };
    } catch (error) {
      return failure(hostPath, error);
    } finally {
      closeLater(found.pathHandle);
    }
  }

  /** What the host path names (symlinks followed inside the root), stat'ed through its descriptor; nothing is opened. */
  async stat(hostPath: string): Promise<{ ok: true; info: Stats } | ReadFailure> {
    const found = await this.locate(hostPath);
    if (!found.ok) return found;
    closeLater(found.pathHandle);
    return { ok: true, info: found.info };
  }

  async exists(hostPath: string): Promise<boolean> {
    return (await this.stat(hostPath)).ok;
  }

  /** Checks that the root itself is a readable directory; the one error that stops a scan. */
  async checkRoot(): Promise<string | undefined> {
    try {
      const info = await stat(this.root);
      if (!info.isDirectory()) return `--host-root ${this.root} is not a directory.`;
      await readdir(this.root);
      return undefined;
    } catch (error) {
      const code = errorCode(error);
      if (code === 'ENOENT') return `--host-root ${this.root} does not exist; pass the directory where the host's / is mounted.`;
      if (code === 'EACCES' || code === 'EPERM') {
        return `--host-root ${this.root} is not readable by this user; run as a user that can read it, or mount it readable.`;
      }
      return `--host-root ${this.root} cannot be read: ${(error as Error).message}`;
    }
  }

  /**
   * A regular file opened for reading. What the path names is first held by an O_PATH descriptor,
   * which opens nothing (no driver runs, no FIFO's writer wakes); only a regular file is then
   * opened, through that descriptor (/proc/self/fd): the very file that was checked.
   */
  private async openFile(hostPath: string): Promise<Opened> {
    const found = await this.locate(hostPath);
    if (!found.ok) return found;
    const { pathHandle, info } = found;
    try {
      if (info.isDirectory()) return failure(hostPath, { code: 'EISDIR' });
      if (!info.isFile()) return notRegular(hostPath, info);
      return { ok: true, handle: await reopenForReading(pathHandle, info), info };
    } catch (error) {
      return failure(hostPath, error);
    } finally {
      closeLater(pathHandle);
    }
  }

  /**
   * The file a host path names, as an O_PATH descriptor: on the real root the kernel resolves it
   * (the host's own symlinks); below a --host-root it is walked by descriptor, and the kernel's
   * name for what was reached must still lie inside the root (a directory moved out meanwhile).
   */
  private async locate(hostPath: string): Promise<Located> {
    if (this.isRealRoot) {
      try {
        const pathHandle = await open(normalizeHostPath(hostPath), O_PATH);
        return await statOf(hostPath, pathHandle);
      } catch (error) {
        return failure(hostPath, error);
      }
    }
    const walked = await walkBeneath(this.root, hostPath);
    if (!walked.ok) return failure(hostPath, walked.error);
    try {
      if (await this.insideRoot(walked.handle)) return { ok: true, pathHandle: walked.handle, info: walked.info };
      closeLater(walked.handle);
      return escaped(hostPath);
    } catch (error) {
      closeLater(walked.handle);
      return failure(hostPath, error);
    }
  }

  private async insideRoot(handle: FileHandle): Promise<boolean> {
    if (this.isRealRoot) return true;
    this.realRoot ??= realpath(this.root);
    const root = await this.realRoot;
    const actual = await readlink(descriptorPath(handle.fd));
    return actual === root || actual.startsWith(`${root}/`);
  }

  private async readBytes(
    hostPath: string,
    options: ReadOptions,
  ): Promise<{ ok: true; data: Buffer; truncated: boolean } | ReadFailure> {
    const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
    const opened = await this.openFile(hostPath);
    if (!opened.ok) return opened;
    const { handle } = opened;
    try {
      // procfs and sysfs report size 0 or 4096 whatever they hold, so read until EOF or the cap.
      const chunks: Buffer[] = [];
      let total = 0;
      while (total <= maxBytes) {
        const chunk = Buffer.alloc(Math.min(64 * 1024, maxBytes + 1 - total));
        const { bytesRead } = await handle.read(chunk, 0, chunk.length, null);
        if (bytesRead === 0) break;
        chunks.push(chunk.subarray(0, bytesRead));
        total += bytesRead;
      }
      const data = Buffer.concat(chunks);
      const truncated = data.length > maxBytes;
      return { ok: true, data: truncated ? data.subarray(0, maxBytes) : data, truncated };
    } catch (error) {
      return failure(hostPath, error);
    } finally {
      await handle.close();
    }
  }
}

function normalizeHostPath(hostPath: string): string {
  return path.posix.normalize('/' + hostPath.replace(/^\/+/, ''));
}

async function statOf(hostPath: string, pathHandle: FileHandle): Promise<Located> {
  try {
    return { ok: true, pathHandle, info: await pathHandle.stat() };
  } catch (error) {
    closeLater(pathHandle);
    return failure(hostPath, error);
  }
}
