// The file a host path names, held by an O_PATH descriptor (nothing opened for reading: no driver
// runs, no FIFO's writer wakes) with its stat. On the real root the kernel resolves the path (the
// host's own symlinks); below a --host-root it is walked by descriptor (descriptor-walk.ts), and the
// kernel's name for what was reached must still lie inside the root: a directory on the way moved
// out of the root meanwhile, even after the walk cached it, is caught here, at every read.
import { type Stats } from 'node:fs';
import { readlink, realpath } from 'node:fs/promises';
import path from 'node:path';
import { type DirectoryCache } from './directory-cache.ts';
import { fstatFd, openFd, release, walkBeneath, type Held } from './descriptor-walk.ts';
import { descriptorPath, O_PATH } from './open-checked.ts';
import { escaped, failure, type ReadFailure } from './read-failure.ts';

export type Located = ({ ok: true; info: Stats } & Held) | ReadFailure;

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

  private async insideRoot(fd: number): Promise<boolean> {
    this.realRoot ??= realpath(this.root);
    const root = await this.realRoot;
    if (root === '/') return true;
    const actual = await readlink(descriptorPath(fd));
    return actual === root || actual.startsWith(`${root}/`);
  }
}

export function normalizeHostPath(hostPath: string): string {
  return path.posix.normalize('/' + hostPath.replace(/^\/+/, ''));
}
