// The file a host path names, held by an O_PATH descriptor (nothing opened for reading: no driver
// runs, no FIFO's writer wakes) with its stat. On the real root the kernel resolves the path (the
// host's own symlinks); below a --host-root it is walked by descriptor (descriptor-walk.ts), and the
// kernel's name for what was reached must still lie inside the root: a directory on the way moved
// out of the root meanwhile, even after the walk cached it, is caught here, at every read. The
// kernel's name of a held file is also what realPath answers, and holdDirectory gives a caller its own
// descriptor of a directory.
import { constants, type Stats } from 'node:fs';
import { readlink, realpath } from 'node:fs/promises';
import path from 'node:path';
import { closeQuietly, type DirectoryCache } from './directory-cache.ts';
import { fstatFd, openFd, release, walkBeneath, type Held } from './descriptor-walk.ts';
import { descriptorPath, O_PATH } from './open-checked.ts';
import { escaped, failure, type ReadFailure } from './read-failure.ts';

export type Located = ({ ok: true; info: Stats } & Held) | ReadFailure;

export interface HeldDirectory {
  ok: true;
  /** /proc/self/fd/<fd>: the held directory for any call that takes a path. */
  name: string;
  /** The kernel's name for it, as a host path. */
  hostPath: string;
  close(): void;
}

export class Locator {
  private readonly root: string;
  private readonly cache: DirectoryCache;
  private realRoot: Promise<string> | undefined;

  constructor(root: string, cache: DirectoryCache) {
    this.root = root;
    this.cache = cache;
  }

  get isRealRoot(): boolean {
    return this.root === '/';
  }

  /** The held file; the caller releases it (`release`) once done. */
  async locate(hostPath: string): Promise<Located> {
    if (this.isRealRoot) return this.locateOnRealRoot(hostPath);
    const walked = await walkBeneath(this.root, hostPath, this.cache);
    if (!walked.ok) return failure(hostPath, walked.error);
    try {
      if (await this.insideRoot(walked.fd)) return walked;
      release(walked);
      return escaped(hostPath);
    } catch (error) {
      release(walked);
      return failure(hostPath, error);
    }
  }

  /** The host path the kernel names what `hostPath` leads to by (see HostRoot.realPath). */
  async realPath(hostPath: string): Promise<{ ok: true; path: string } | ReadFailure> {
    const found = await this.locate(hostPath);
    if (!found.ok) return found;
    try {
      const real = await this.hostPathOf(found.fd);
      return real === undefined ? escaped(hostPath) : { ok: true, path: real };
    } catch (error) {
      return failure(hostPath, error);
    } finally {
      release(found);
    }
  }

  /** The directory `hostPath` leads to, held by a new descriptor the caller closes (see HostRoot.holdDirectory). */
  async holdDirectory(hostPath: string): Promise<HeldDirectory | ReadFailure> {
    const found = await this.locate(hostPath);
    if (!found.ok) return found;
    try {
      if (!found.info.isDirectory()) return failure(hostPath, { code: 'ENOTDIR' });
      const real = await this.hostPathOf(found.fd);
      if (real === undefined) return escaped(hostPath);
      const fd = await openFd(descriptorPath(found.fd), O_PATH | constants.O_DIRECTORY);
      return { ok: true, name: descriptorPath(fd), hostPath: real, close: () => closeQuietly(fd) };
    } catch (error) {
      return failure(hostPath, error);
    } finally {
      release(found);
    }
  }

  private async locateOnRealRoot(hostPath: string): Promise<Located> {
    let fd: number;
    try {
      fd = await openFd(normalizeHostPath(hostPath), O_PATH);
    } catch (error) {
      return failure(hostPath, error);
    }
    try {
      return { ok: true, fd, shared: false, info: await fstatFd(fd) };
    } catch (error) {
      release({ fd, shared: false });
      return failure(hostPath, error);
    }
  }

  /** The host path the kernel names the held file by, or undefined when that lies outside the root (moved out). */
  async hostPathOf(fd: number): Promise<string | undefined> {
    this.realRoot ??= realpath(this.root);
    const root = await this.realRoot;
    const actual = await readlink(descriptorPath(fd));
    if (root === '/') return actual;
    if (actual === root) return '/';
    return actual.startsWith(`${root}/`) ? actual.slice(root.length) : undefined;
  }

  private async insideRoot(fd: number): Promise<boolean> {
    return (await this.hostPathOf(fd)) !== undefined;
  }
}

export function normalizeHostPath(hostPath: string): string {
  return path.posix.normalize('/' + hostPath.replace(/^\/+/, ''));
}
