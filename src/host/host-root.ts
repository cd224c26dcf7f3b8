// Every read of the host goes through HostRoot. It maps host paths ("/proc/cpuinfo") into a root
// directory (`--host-root`) and resolves them the way the kernel would inside a chroot there: every
// access walks by descriptor (descriptor-walk.ts, sharing the directories a scan has opened,
// directory-cache.ts); a caller that needs a name gets the kernel's name of what was walked
// (realPath) or a held directory's /proc/self/fd name (holdDirectory), never a path to open again. Nothing is opened for reading before its
// descriptor says it is a regular file or a directory (locate.ts, open-checked.ts): a symlink
// swapped in meanwhile can neither lead out nor open a device or a FIFO. Reads are capped
// (bounded-read.ts); errors come back as values.
import { type Stats } from 'node:fs';
import { readdir, readlink, stat, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { readRange, readUpTo } from './bounded-read.ts';
import { components, release } from './descriptor-walk.ts';
import { DirectoryCache } from './directory-cache.ts';
import { Locator, type HeldDirectory } from './locate.ts';

export type { HeldDirectory } from './locate.ts';
import { descriptorPath, reopenForReading } from './open-checked.ts';
import { naturalCompare } from '../order.ts';
import { errorCode, failure, notRegular, type ReadFailure } from './read-failure.ts';

export { naturalCompare } from '../order.ts';

export { errorCode, type ReadFailure, type ReadFailureCode } from './read-failure.ts';

export const DEFAULT_MAX_BYTES = 1024 * 1024;

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

export class HostRoot {
  readonly root: string;
  private readonly directories = new DirectoryCache();
  private readonly locator: Locator;

  constructor(root: string) {
    this.root = path.resolve(root);
    this.locator = new Locator(this.root, this.directories);
  }

  /** True when the tool looks at the machine it runs on, so running its commands is meaningful. */
  get isRealRoot(): boolean {
    return this.root === '/';
  }

  /** Directory descriptors the reads in flight share now (0 once reads stop; for tests and the bench). */
  get heldDirectories(): number {
    return this.directories.held;
  }

  /**
   * Runs a scan's reads with the directories they open kept until it ends, whatever it waits for
   * between reads (a command, a sleep); closed at its end. Reads outside it share them while they
   * follow one another.
   */
  sharingDirectories<T>(scan: () => Promise<T>): Promise<T> {
    return this.directories.throughout(scan);
  }

  /**
   * The host path of what `hostPath` names, every symlink on the way expanded inside the root: the
   * kernel's name for the descriptor the walk reached. For the callers that need a name: a sysfs
   * device's place in the device tree, a process's working directory.
   */
  realPath(hostPath: string): Promise<{ ok: true; path: string } | ReadFailure> {
    return this.directories.during(() => this.locator.realPath(hostPath));
  }

  /**
   * A directory held by a descriptor of the caller's own, for work that needs a name for a while
   * (statfs, the fsync probe creating its file there): `name` (/proc/self/fd/<fd>) leads to the
   * directory that was walked, whatever its path names meanwhile. The caller closes it.
   */
  holdDirectory(hostPath: string): Promise<HeldDirectory | ReadFailure> {
    return this.directories.during(() => this.locator.holdDirectory(hostPath));
  }

  readText(hostPath: string, options: ReadOptions = {}): Promise<TextResult> {
    return this.directories.during(async () => {
      const bytes = await this.readBytes(hostPath, options.maxBytes ?? DEFAULT_MAX_BYTES);
      if (!bytes.ok) return bytes;
      return { ok: true, path: hostPath, text: bytes.data.toString('utf8'), truncated: bytes.truncated };
    });
  }

  /** The first trimmed line of a one-value file (sysfs style), or a failure. */
  async readValue(hostPath: string): Promise<TextResult> {
    const result = await this.readText(hostPath, { maxBytes: 64 * 1024 });
    if (!result.ok) return result;
    return { ...result, text: result.text.split('\n', 1)[0]?.trim() ?? '' };
  }

  /** A gzip-compressed text file such as /proc/config.gz; the cap applies to the decompressed text. */
  readGzipText(hostPath: string, options: ReadOptions = {}): Promise<TextResult> {
    return this.directories.during(async () => {
      const maxBytes = options.maxBytes ?? 16 * DEFAULT_MAX_BYTES;
      const bytes = await this.readBytes(hostPath, maxBytes);
      if (!bytes.ok) return bytes;
      try {
        const text = gunzipSync(bytes.data, { maxOutputLength: maxBytes }).toString('utf8');
        return { ok: true, path: hostPath, text, truncated: false };
      } catch (error) {
        const reason = `${hostPath}: not a readable gzip file (${(error as Error).message})`;
        return { ok: false, path: hostPath, code: 'EINVAL', reason };
      }
    });
  }

  /**
   * Up to maxBytes ending at `end` (default: the end of the file), for reading logs backwards in
   * bounded chunks. `start` is the offset of the first byte returned; `size` the file's size.
   */
  readTail(hostPath: string, options: { maxBytes: number; end?: number }): Promise<TailResult> {
    return this.directories.during(async () => {
      const opened = await this.openFile(hostPath);
      if (!opened.ok) return opened;
      const { handle, info } = opened;
      try {
        const end = Math.min(options.end ?? info.size, info.size);
        const start = Math.max(0, end - Math.max(0, options.maxBytes));
        return { ok: true, path: hostPath, data: await readRange(handle, start, end), start, size: info.size };
      } catch (error) {
        return failure(hostPath, error);
      } finally {
        await handle.close();
      }
    });
  }

  /**
   * The target of a symlink as the host sees it (e.g. /proc/<pid>/cwd), without following it. Its
   * directory is held by descriptor (the walk reads use) and the link read relative to it
   * (/proc/self/fd/<dir>/<name>: the kernel jumps to the held directory and does not follow the
   * last component), so a directory swapped for a symlink meanwhile cannot lead out of the root.
   */
  readLink(hostPath: string): Promise<TextResult> {
    const parts = components(hostPath);
    const name = parts.pop();
    return this.directories.during(async () => {
      // "/", "dir/", "dir/.", "dir/..": the kernel follows the last component, which is then no link.
      if (name === undefined || name === '.' || name === '..') return this.notALink(hostPath);
      const parent = await this.locator.locate(`/${parts.join('/')}`);
      if (!parent.ok) return parent;
      try {
        if (!parent.info.isDirectory()) return failure(hostPath, { code: 'ENOTDIR' });
        const target = await readlink(`${descriptorPath(parent.fd)}/${name}`);
        return { ok: true, path: hostPath, text: target, truncated: false };
      } catch (error) {
        return failure(hostPath, error);
      } finally {
        release(parent);
      }
    });
  }

  private async notALink(hostPath: string): Promise<ReadFailure> {
    const found = await this.locator.locate(hostPath);
    if (!found.ok) return found;
    release(found);
    return failure(hostPath, { code: 'EINVAL' });
  }

  listDir(hostPath: string): Promise<DirResult> {
    return this.directories.during(async () => {
      const found = await this.locator.locate(hostPath);
      if (!found.ok) return found;
      try {
        if (found.info.isFile()) return failure(hostPath, { code: 'ENOTDIR' });
        if (!found.info.isDirectory()) return notRegular(hostPath, found.info);
        // Listed through the descriptor: the directory that was checked, whatever its path names now.
        const entries = await readdir(descriptorPath(found.fd));
        return { ok: true, path: hostPath, entries: entries.sort(naturalCompare) };
      } catch (error) {
        return failure(hostPath, error);
      } finally {
        release(found);
      }
    });
  }

  /** What the host path names (symlinks followed inside the root), stat'ed through its descriptor; nothing is opened. */
  stat(hostPath: string): Promise<{ ok: true; info: Stats } | ReadFailure> {
    return this.directories.during(async () => {
      const found = await this.locator.locate(hostPath);
      if (!found.ok) return found;
      release(found);
      return { ok: true, info: found.info };
    });
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
   * which opens nothing; only a regular file is then opened, through that descriptor
   * (/proc/self/fd): the very file that was checked.
   */
  private async openFile(hostPath: string): Promise<Opened> {
    const found = await this.locator.locate(hostPath);
    if (!found.ok) return found;
    const { info } = found;
    try {
      if (info.isDirectory()) return failure(hostPath, { code: 'EISDIR' });
      if (!info.isFile()) return notRegular(hostPath, info);
      return { ok: true, handle: await reopenForReading(found.fd, info), info };
    } catch (error) {
      return failure(hostPath, error);
    } finally {
      release(found);
    }
  }

  private async readBytes(hostPath: string, maxBytes: number): Promise<{ ok: true; data: Buffer; truncated: boolean } | ReadFailure> {
    const opened = await this.openFile(hostPath);
    if (!opened.ok) return opened;
    const { handle } = opened;
    try {
      return { ok: true, ...(await readUpTo(handle, opened.info, maxBytes)) };
    } catch (error) {
      return failure(hostPath, error);
    } finally {
      await handle.close();
    }
  }
}
