// A host path turned into the local path where it lives below a --host-root, resolved as the kernel
// would inside a chroot there: one component at a time, symlinks expanded (an absolute target means
// "from the host's /"), ".." of the root staying at the root, a missing component failing the whole
// path. For the callers that need a name rather than a descriptor (a probe's directory, statfs, a
// mount table's paths); reads do not use it, they walk by descriptor (descriptor-walk.ts).
import { lstat, readlink } from 'node:fs/promises';
import path from 'node:path';
import { components } from './descriptor-walk.ts';
import { failure, type ReadFailure } from './read-failure.ts';

const MAX_SYMLINK_HOPS = 40;
/** Components remembered per HostRoot (one scan): /sys, /proc/<pid>, … are resolved by many callers. */
const MAX_REMEMBERED_COMPONENTS = 4096;

/** What resolve needs of one path component: lstat, and the link's target when it is one. */
type Component = { ok: true; symlink: boolean; directory: boolean; target: string } | { ok: false; error: unknown };

export type Resolved = { ok: true; localPath: string } | ReadFailure;

export class ChrootResolver {
  private readonly root: string;
  private readonly components = new Map<string, Promise<Component>>();

  constructor(root: string) {
    this.root = root;
  }

  async resolve(hostPath: string): Promise<Resolved> {
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
      const info = await this.component(path.join(this.root, ...candidate));
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

  /** One lstat (and readlink) per component per scan; each async call is a trip through libuv's thread pool. */
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
}
