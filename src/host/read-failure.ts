// Filesystem errors as values: every host read answers with data or one of these, never throws.
import type { Stats } from 'node:fs';

export type ReadFailureCode = 'ENOENT' | 'EACCES' | 'EISDIR' | 'ENOTDIR' | 'ELOOP' | 'ENOTREG' | 'EXDEV' | 'EINVAL' | 'EIO' | 'OTHER';

export interface ReadFailure {
  ok: false;
  /** The host path that was asked for, e.g. "/proc/config.gz". */
  path: string;
  code: ReadFailureCode;
  /** One sentence for a human: what failed and why. */
  reason: string;
}

export function errorCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : undefined;
}

export function failure(hostPath: string, error: unknown): ReadFailure {
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

/** "is a FIFO", "is a directory", … for a file that is not a regular one. */
export function fileTypeOf(info: Stats): string {
  if (info.isFIFO()) return 'is a FIFO';
  if (info.isSocket()) return 'is a socket';
  if (info.isCharacterDevice()) return 'is a character device';
  if (info.isBlockDevice()) return 'is a block device';
  if (info.isDirectory()) return 'is a directory';
  return 'is not a regular file';
}

/** Opening a FIFO blocks, opening a device can act on it: such files are never opened. */
export function notRegular(hostPath: string, info: Stats): ReadFailure {
  return { ok: false, path: hostPath, code: 'ENOTREG', reason: `${hostPath} ${fileTypeOf(info)}, not a regular file: not read` };
}

export function escaped(hostPath: string): ReadFailure {
  return { ok: false, path: hostPath, code: 'EXDEV', reason: `${hostPath} leads outside --host-root (a symbolic link changed while it was opened): not read` };
}
