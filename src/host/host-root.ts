// Every read of the host goes through HostRoot. It maps host paths ("/proc/cpuinfo") into a root
// directory (`--host-root`), resolves symlinks so that they never leave that root (an absolute link
// inside a fake tree or a hostPath mount means "relative to the host's /"), caps read sizes, and turns
// the usual filesystem errors into values.
import { constants as fsConstants } from 'node:fs';
import { lstat, open, readdir, readlink, stat } from 'node:fs/promises';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';

export const DEFAULT_MAX_BYTES = 1024 * 1024;
const MAX_SYMLINK_HOPS = 40;

export type ReadFailureCode = 'ENOENT' | 'EACCES' | 'EISDIR' | 'ENOTDIR' | 'ELOOP' | 'EINVAL' | 'EIO' | 'OTHER';

export interface ReadFailure {
  ok: false;
  /** The host path that was asked for, e.g. "/proc/config.gz". */
  path: string;
  code: ReadFailureCode;
  /** One sentence for a human: what failed and why. */
  reason: string;
}

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

export class HostRoot {
  readonly root: string;

  constructor(root: string) {
    this.root = path.resolve(root);
  }

  /** True when the tool looks at the machine it runs on, so running its commands is meaningful. */
  get isRealRoot(): boolean {
    return this.root === '/';
  }

  /** Where a host path lives on the filesystem we can open, following symlinks inside the root. */
  async resolve(hostPath: string): Promise<{ ok: true; localPath: string } | ReadFailure> {
    const normalized = normalizeHostPath(hostPath);
    if (this.isRealRoot) return { ok: true, localPath: normalized };
    let hops = 0;
    let resolved: string[] = [];
    const pending = splitPath(normalized);
    while (pending.length > 0) {
      const part = pending.shift() as string;
      if (part === '..') {
        resolved.pop();
        continue;
      }
      const candidate = [...resolved, part];
      const local = path.join(this.root, ...candidate);
      let isLink = false;
      try {
        isLink = (await lstat(local)).isSymbolicLink();
      } catch (error) {
        // A missing component: the later open reports ENOENT with the full path.
        if (errorCode(error) === 'ENOENT' || errorCode(error) === 'ENOTDIR') {
          return { ok: true, localPath: path.join(this.root, ...candidate, ...pending) };
        }
        return failure(hostPath, error);
      }
      if (!isLink) {
        resolved = candidate;
        continue;
      }
      if (++hops > MAX_SYMLINK_HOPS) {
        return { ok: false, path: hostPath, code: 'ELOOP', reason: `${hostPath}: too many levels of symbolic links` };
      }
      const target = await readlink(local);
      if (path.isAbsolute(target)) resolved = [];
      pending.unshift(...splitPath(target));
    }
    return { ok: true, localPath: path.join(this.root, ...resolved) };
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
    const where = await this.resolve(hostPath);
    if (!where.ok) return where;
    let handle;
    try {
      handle = await open(where.localPath, fsConstants.O_RDONLY | fsConstants.O_NONBLOCK);
      const info = await handle.stat();
      if (info.isDirectory()) return { ok: false, path: hostPath, code: 'EISDIR', reason: `${hostPath} is a directory, not a file` };
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
      await handle?.close();
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
    const where = await this.resolve(hostPath);
    if (!where.ok) return where;
    try {
      const entries = await readdir(where.localPath);
      return { ok: true, path: hostPath, entries: entries.sort(naturalCompare) };
    } catch (error) {
      return failure(hostPath, error);
    }
  }

  async exists(hostPath: string): Promise<boolean> {
    const where = await this.resolve(hostPath);
    if (!where.ok) return false;
    try {
      await stat(where.localPath);
      return true;
    } catch {
      return false;
    }
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

  private async readBytes(
    hostPath: string,
    options: ReadOptions,
  ): Promise<{ ok: true; data: Buffer; truncated: boolean } | ReadFailure> {
    const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
    const where = await this.resolve(hostPath);
    if (!where.ok) return where;
    let handle;
    try {
      handle = await open(where.localPath, fsConstants.O_RDONLY | fsConstants.O_NONBLOCK);
      if ((await handle.stat()).isDirectory()) {
        return { ok: false, path: hostPath, code: 'EISDIR', reason: `${hostPath} is a directory, not a file` };
      }
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
      await handle?.close();
    }
  }
}

function normalizeHostPath(hostPath: string): string {
  return path.posix.normalize('/' + hostPath.replace(/^\/+/, ''));
}

function splitPath(p: string): string[] {
  return p.split('/').filter((part) => part !== '' && part !== '.');
}

export function errorCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : undefined;
}

function failure(hostPath: string, error: unknown): ReadFailure {
  const code = errorCode(error);
  switch (code) {
    case 'ENOENT':
      return { ok: false, path: hostPath, code, reason: `${hostPath} does not exist` };
    case 'EACCES':
    case 'EPERM':
      return { ok: false, path: hostPath, code: 'EACCES', reason: `${hostPath} is not readable (permission denied)` };
    case 'EISDIR':
      return { ok: false, path: hostPath, code, reason: `${hostPath} is a directory, not a file` };
    case 'ENOTDIR':
      return { ok: false, path: hostPath, code, reason: `${hostPath}: a parent of it is not a directory` };
    case 'ELOOP':
      return { ok: false, path: hostPath, code, reason: `${hostPath}: too many levels of symbolic links` };
    case 'EINVAL':
    case 'EIO':
      return { ok: false, path: hostPath, code, reason: `${hostPath} cannot be read (${code})` };
    default:
      return { ok: false, path: hostPath, code: 'OTHER', reason: `${hostPath} cannot be read: ${(error as Error)?.message ?? String(error)}` };
  }
}

/** "policy10" after "policy9", "cpu2" before "cpu10". */
export function naturalCompare(a: string, b: string): number {
  return a.localeCompare(b, 'en', { numeric: true });
}
