// What the descriptor walk found at each path inside a --host-root, kept while reads follow one
// another. A scan reads hundreds of files below a few dozen directories (/sys/devices/system/cpu/…,
// /proc/<pid>/…); walking each path from the root opened every directory on the way again for each
// read. Per HostRoot, each resolved path (a key such as "sys/devices/system/cpu", real directories
// only, symlinks already expanded) is remembered as a directory (its O_PATH descriptor, held open),
// a symlink (its target) or a failure (missing, permission denied), and walks start from there.
//
// Safe to keep: a descriptor names the directory that was opened, not a name. A directory swapped
// for a symlink afterwards leaves the descriptor on the directory it opened (still inside the root,
// or moved out: every read checks the kernel's name for what it reached, see locate.ts), never on
// the link's target; a deleted one has no entries left. A remembered link target is only ever walked
// by descriptor, so any target stays inside the root. What a scan sees is what each path was when
// the scan first walked it, as the lstat cache before it did.
//
// Lifetime: a scan (collectFacts, `throughout`) holds them until it ends, whatever it waits for
// between reads, and closes them then. Reads outside a scan hold them while reads are in flight; at
// the first event-loop turn that ends with none, every descriptor is closed. O_PATH descriptors are
// closed synchronously: no filesystem is called, so it cannot block. Nothing is held between scans
// nor after a caller's last read, and no caller has to close anything. At most MAX_ENTRIES entries,
// so at most as many descriptors.
import { closeSync } from 'node:fs';
import { errorCode } from './read-failure.ts';

export type Known =
  | { kind: 'directory'; fd: number }
  | { kind: 'link'; target: string }
  /** A regular file, a device, …: fails a walk that needs a directory; the last step opens it anew. */
  | { kind: 'not-directory' }
  | { kind: 'failed'; error: unknown };

/** Enough for a scan of a node with a few hundred processes; half the usual soft limit of 1024 descriptors. */
export const MAX_ENTRIES = 512;
/** Failures that stay true for the scan; anything else (EMFILE, EIO) is tried again next time. */
const LASTING_FAILURES = new Set(['ENOENT', 'ENOTDIR', 'EACCES', 'EPERM', 'ELOOP']);

export class DirectoryCache {
  private entries = new Map<string, Promise<Known>>();
  private descriptors: number[] = [];
  /** Bumped at each close: a lookup still settling afterwards closes its own descriptor. */
  private generation = 0;
  private busy = 0;
  private idleCheck = false;

  /** Runs one read; the descriptors stay open until a turn of the event loop ends with no read running. */
  during<T>(read: () => Promise<T>): Promise<T> {
    return this.holding(read, () => this.closeWhenIdle());
  }

  /** Runs a whole scan: the descriptors stay open until it ends, whatever it waits for, and are closed then (unless reads outside it still run). */
  throughout<T>(scan: () => Promise<T>): Promise<T> {
    return this.holding(scan, () => this.closeAll());
  }

  private async holding<T>(work: () => Promise<T>, whenNoneRuns: () => void): Promise<T> {
    this.busy += 1;
    try {
      return await work();
    } finally {
      this.busy -= 1;
      if (this.busy === 0) whenNoneRuns();
    }
  }

  /** Descriptors held now (for tests and the bench). */
  get held(): number {
    return this.descriptors.length;
  }

  /** What `key` is, remembered or found now by `find` (remembered while there is room). `shared`: the cache owns the descriptor. */
  async lookUp(key: string, find: () => Promise<Known>): Promise<{ known: Known; shared: boolean }> {
    const remembered = this.entries.get(key);
    if (remembered) return { known: await remembered, shared: true };
    if (this.entries.size >= MAX_ENTRIES) return { known: await find(), shared: false };
    const found = find();
    this.remember(key, found);
    return { known: await found, shared: true };
  }

  /** What `key` is, when a walk already found it. */
  peek(key: string): Promise<Known> | undefined {
    return this.entries.get(key);
  }

  /** Keeps what a last step found by itself; false (no room, or known already): the descriptor stays the caller's. */
  offer(key: string, known: Known): boolean {
    if (this.entries.has(key) || this.entries.size >= MAX_ENTRIES) return false;
    this.remember(key, Promise.resolve(known));
    return true;
  }

  private remember(key: string, found: Promise<Known>): void {
    const generation = this.generation;
    this.entries.set(key, found);
    const forget = (): void => {
      if (this.entries.get(key) === found) this.entries.delete(key);
    };
    found.then((known) => {
      if (known.kind === 'failed' && !LASTING_FAILURES.has(errorCode(known.error) ?? '')) forget();
      if (known.kind !== 'directory') return;
      if (generation === this.generation) this.descriptors.push(known.fd);
      else closeQuietly(known.fd);
    }, forget);
  }

  private closeWhenIdle(): void {
    if (this.idleCheck) return;
    this.idleCheck = true;
    setImmediate(() => {
      this.idleCheck = false;
      if (this.busy === 0) this.closeAll();
    });
  }

  private closeAll(): void {
    this.generation += 1;
    this.descriptors.forEach(closeQuietly);
    this.descriptors = [];
    this.entries = new Map();
  }
}

/** An O_PATH descriptor's close: nothing to flush, nothing the filesystem is asked. */
export function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // EBADF only: nothing was lost.
  }
}
