// Opening a file by name runs its driver: a FIFO wakes (or blocks) its writer, /dev/ptmx allocates a
// terminal, /dev/watchdog arms a reboot. A check by name before the open (stat) races with whoever
// may swap the name for a symlink meanwhile. So a path is first opened with O_PATH, which opens
// nothing (no driver, no FIFO reader; the kernel only pins the file), the descriptor is checked, and
// only a regular file or a directory is opened for reading — through /proc/self/fd, the very file
// that was checked, whatever its name leads to by then.
import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';

/** Linux's O_PATH (asm-generic value, used by every architecture Node runs on); not in fs.constants. */
export const O_PATH = 0o10000000;
/** How a checked file is opened for reading: never a controlling terminal, never a blocking open. */
export const READ_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY;

/** The name of an open descriptor that the kernel follows to that very file. */
export function descriptorPath(fd: number): string {
  return `/proc/self/fd/${fd}`;
}

/** Closed without waiting for it: a failed close of a read-only or O_PATH descriptor loses nothing. */
export function closeLater(handle: FileHandle | undefined): void {
  handle?.close().catch(() => undefined);
}

/** The checked file opened for reading (a directory with O_DIRECTORY). The O_PATH descriptor stays the caller's. */
export function reopenForReading(pathFd: number, info: Stats): Promise<FileHandle> {
  return open(descriptorPath(pathFd), READ_FLAGS | (info.isDirectory() ? constants.O_DIRECTORY : 0));
}

export type CheckedFile = { ok: true; handle: FileHandle; info: Stats } | { ok: false; info: Stats };

/**
 * `file` opened for reading when it is a regular file (symlinks followed, as for any path a user
 * names), else its stat and nothing opened. Errors of the open (ENOENT, EACCES) are thrown.
 */
export async function openRegularFile(file: string): Promise<CheckedFile> {
  const pathHandle = await open(file, O_PATH);
  try {
    const info = await pathHandle.stat();
    if (!info.isFile()) return { ok: false, info };
    return { ok: true, handle: await reopenForReading(pathHandle.fd, info), info };
  } finally {
    closeLater(pathHandle);
  }
}

export type CheckedBytes = { ok: true; data: Buffer; info: Stats } | { ok: false; info: Stats; tooLarge?: true };

/**
 * The synchronous form, for the few reads that cannot wait (a token file read per request): the
 * bytes of a regular file of at most maxBytes, else its stat (tooLarge when it holds more).
 */
export function readRegularFileSync(file: string, maxBytes: number): CheckedBytes {
  const pathFd = openSync(file, O_PATH);
  let fd: number | undefined;
  try {
    const info = fstatSync(pathFd);
    if (!info.isFile()) return { ok: false, info };
    fd = openSync(descriptorPath(pathFd), READ_FLAGS);
    const data = Buffer.allocUnsafe(maxBytes + 1);
    let size = 0;
    while (size < data.length) {
      const read = readSync(fd, data, size, data.length - size, null);
      if (read === 0) break;
      size += read;
    }
    if (size > maxBytes) return { ok: false, info, tooLarge: true };
    return { ok: true, data: Buffer.from(data.subarray(0, size)), info };
  } finally {
    if (fd !== undefined) closeSync(fd);
    closeSync(pathFd);
  }
}
