// The fsync probe: etcd's disk test the way fio runs it (--rw=write --ioengine=sync --fdatasync=1
// --size=22m --bs=2300), in-process. The file is preallocated first as fio and etcd's WAL do
// (fallocate(1), mode 0; without it: zeros + one fdatasync), the timed loop runs on a worker thread,
// and the file is removed on success, error, SIGTERM, SIGINT and SIGHUP; files of a killed run are removed at start.
// It runs as root in directories other programs use, so nothing is done by path twice: the directory
// is opened and checked once (owner, mode) and named through its descriptor from then on; the file is
// created new (O_CREAT|O_EXCL|O_NOFOLLOW) and preallocated, written and synced through one descriptor.
// child_process, crypto and worker_threads are taken when a probe runs (process.getBuiltinModule):
// every scan loads this module for its collector, few run the probe, and each built-in module costs
// start-up time, more under `node --lite-mode`, which compiles them without Node's code cache.
import { constants as fsConstants, unlinkSync } from 'node:fs';
import { lstat, open, readdir, statfs, unlink, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import type { Worker } from 'node:worker_threads';
import { trustedCommand } from '../host/exec.ts';
import { ownerModeProblem } from '../host/owner-mode.ts';
import type { WorkerJob, WorkerMessage } from './fsync-worker.ts';
import { latencySummary, type LatencySummary } from './percentiles.ts';

export const DEFAULT_SIZE_BYTES = 22 * 1024 * 1024;
export const DEFAULT_BLOCK_SIZE = 2300;
export const PROBE_FILE_PREFIX = '.nta-fsync-probe-';
const PROBE_FILE = /^\.nta-fsync-probe-(\d+)-[0-9a-f]+\.tmp$/;
const STALE_AFTER_MS = 10 * 60 * 1000;
const FREE_SPACE_MARGIN = 4 * 1024 * 1024;

export interface FsyncProbeOptions {
  dir: string;
  /** How messages and the result name the directory (default: dir); for a held directory's /proc/self/fd name, its host path. */
  label?: string;
  sizeBytes?: number;
  blockSize?: number;
  /** "major:minor" of etcd's data dir; a probe dir on another device is reported as not representative. */
  expectedDevice?: string;
  /** false skips fallocate(1) and preallocates with zeros. */
  useFallocate?: boolean;
  onProgress?: (done: number, total: number) => void;
  /** Free space of the probe dir; replaceable so tests can inject a full filesystem. */
  freeBytes?: (dir: string) => Promise<number>;
}

export interface FsyncProbeSuccess extends LatencySummary {
  ok: true;
  wallMs: number;
  bytesWritten: number;
  blockSize: number;
  dir: string;
  device: string;
  /** null when no expected device was given. */
  sameDeviceAsEtcd: boolean | null;
  preallocation: 'fallocate' | 'zeros';
  staleFilesRemoved: number;
}

export interface FsyncProbeFailure {
  ok: false;
  /** ENOSPC, EROFS, EACCES, ENOENT, ENOTDIR, EINVAL, … */
  code: string;
  reason: string;
  dir: string;
  staleFilesRemoved: number;
}

export type FsyncProbeResult = FsyncProbeSuccess | FsyncProbeFailure;

const FIXES: Record<string, string> = {
  ENOSPC: 'free space on that filesystem or pass a smaller --size',
  EDQUOT: 'the disk quota is exhausted; free space or pass a smaller --size',
  EROFS: 'the filesystem is mounted read-only; probe a writable directory on the same disk',
  EACCES: 'run as a user that may write there (root in the DaemonSet)',
  EPERM: 'run as a user that may write there (root in the DaemonSet)',
  ENOENT: 'pass an existing directory with --dir',
  ENOTDIR: 'pass a directory, not a file, with --dir',
  EUNSAFE: 'probe a directory only root can change, e.g. `mkdir -m 0700 <etcd data dir>/node-tuning-advisor-probe` (the agent prefers that subdirectory)',
};

export function failureFor(dir: string, code: string, what: string, staleFilesRemoved = 0): FsyncProbeFailure {
  const fix = FIXES[code];
  return { ok: false, code, reason: `${what}${fix ? `: ${fix}` : ''}`, dir, staleFilesRemoved };
}

/** st_dev → "major:minor" (glibc's encoding of a 64-bit dev_t). */
export function majorMinor(dev: bigint): string {
  const major = ((dev >> 8n) & 0xfffn) | ((dev >> 32n) & ~0xfffn);
  const minor = (dev & 0xffn) | ((dev >> 12n) & ~0xffn);
  return `${major}:${minor}`;
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as { code?: string }).code === 'EPERM';
  }
}

/** Probe files left by a run that was killed (its PID is gone, or the file is older than any run). */
export async function removeStaleProbeFiles(dir: string, now = Date.now()): Promise<number> {
  let removed = 0;
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    const match = PROBE_FILE.exec(name);
    if (!match) continue;
    const file = path.join(dir, name);
    const pid = Number(match[1]);
    const old = await lstat(file).then((s) => now - s.mtimeMs > STALE_AFTER_MS, () => false);
    if (pid !== process.pid && (!pidAlive(pid) || old)) {
      await unlink(file).then(() => removed++, () => undefined);
    }
  }
  return removed;
}

async function defaultFreeBytes(dir: string): Promise<number> {
  const fs = await statfs(dir);
  return fs.bavail * fs.bsize;
}

/** A path inside etcd's member/ directory (next to wal/ and snap/) is never probed. */
export function insideEtcdMember(dir: string): boolean {
  return path.resolve(dir).split(path.sep).includes('member');
}

/** Runs a command with `stdin` as its standard input; its exit status and (bounded) stderr. */
function run(file: string, args: string[], stdin: number, timeoutMs: number): Promise<{ status: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = process.getBuiltinModule('node:child_process').spawn(file, args, { stdio: [stdin, 'ignore', 'pipe'], timeout: timeoutMs, env: { LC_ALL: 'C' } });
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => { if (stderr.length < 4096) stderr += chunk.toString('utf8'); });
    child.on('error', (error) => resolve({ status: null, stderr: error.message }));
    child.on('close', (status) => resolve({ status, stderr }));
  });
}

/** Preallocates through the open descriptor: fallocate(1) from a system directory gets it as its stdin. */
async function preallocate(handle: FileHandle, sizeBytes: number, useFallocate: boolean): Promise<{ method: 'fallocate' | 'zeros' } | { code: string; message: string }> {
  const fallocate = useFallocate ? await trustedCommand('fallocate') : undefined;
  if (!fallocate?.ok) return { method: 'zeros' };
  const result = await run(fallocate.path, ['-l', String(sizeBytes), '/dev/stdin'], handle.fd, 30_000);
  if (result.status === 0) return { method: 'fallocate' };
  const { stderr } = result;
  if (/No space left/i.test(stderr)) return { code: 'ENOSPC', message: `fallocate ${sizeBytes} bytes failed: ${stderr.trim()}` };
  if (/Read-only file system/i.test(stderr)) return { code: 'EROFS', message: stderr.trim() };
  if (/Permission denied/i.test(stderr)) return { code: 'EACCES', message: stderr.trim() };
  // A filesystem without fallocate support: fall back to writing zeros.
  return { method: 'zeros' };
}

function runWorker(job: WorkerJob, onProgress?: (done: number, total: number) => void): { worker: Worker; done: Promise<WorkerMessage> } {
  const { Worker } = process.getBuiltinModule('node:worker_threads');
  const worker = new Worker(new URL('./fsync-worker.ts', import.meta.url), { workerData: job });
  const done = new Promise<WorkerMessage>((resolve) => {
    worker.on('message', (message: WorkerMessage) => {
      if (message.type === 'progress') onProgress?.(message.done, message.total);
      else resolve(message);
    });
    worker.on('error', (error) => resolve({ type: 'error', code: 'EWORKER', message: error.message, phase: 'worker' }));
    worker.on('exit', (code) => resolve({ type: 'error', code: 'EWORKER', message: `probe thread exited with ${code}`, phase: 'worker' }));
  });
  return { worker, done };
}

/** While the probe file exists, SIGTERM/SIGINT/SIGHUP (a dropped SSH session) remove it before the process goes down. */
const CLEANUP_SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;

function cleanupOnSignals(file: string, worker: () => Worker | undefined): () => void {
  const handler = (signal: NodeJS.Signals): void => {
    void worker()?.terminate();
    try {
      unlinkSync(file);
    } catch {
      // already gone
    }
    detach();
    // Nobody else handles the signal: die of it, as we would have without this handler.
    if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
  };
  const detach = (): void => {
    for (const signal of CLEANUP_SIGNALS) process.off(signal, handler);
  };
  for (const signal of CLEANUP_SIGNALS) process.on(signal, handler);
  return detach;
}

interface ProbeDir {
  handle: FileHandle;
  /** The directory through its descriptor: what was checked, whatever its path names meanwhile. */
  at: string;
  device: string;
}

/** Why another user could swap files in this directory under the probe, or undefined. */
function unsafeDir(dir: string, uid: number, gid: number, mode: number): string | undefined {
  const problem = ownerModeProblem({ uid, gid, mode }, { ownUid: 'effective', rootGroupMayWrite: true, sticky: true });
  if (problem?.kind === 'owner') return `${dir} is owned by uid ${uid}: its owner could swap the probe file for a link to any file`;
  if (problem?.by === 'everyone') return `${dir} is writable by everyone and has no sticky bit`;
  if (problem?.by === 'group') return `${dir} is writable by group ${gid} and has no sticky bit`;
  return undefined;
}

async function openProbeDir(opened: string, dir: string): Promise<ProbeDir | FsyncProbeFailure> {
  let handle: FileHandle;
  try {
    handle = await open(opened, fsConstants.O_RDONLY | fsConstants.O_DIRECTORY);
  } catch (error) {
    const code = (error as { code?: string }).code ?? 'EUNKNOWN';
    return failureFor(dir, code, code === 'ENOTDIR' ? `${dir} is not a directory` : `${dir} cannot be used (${code})`);
  }
  const info = await handle.stat({ bigint: true });
  const problem = unsafeDir(dir, Number(info.uid), Number(info.gid), Number(info.mode));
  if (problem) {
    await handle.close();
    return failureFor(dir, 'EUNSAFE', `${problem}; not probed`);
  }
  return { handle, at: `/proc/self/fd/${handle.fd}`, device: majorMinor(info.dev) };
}

/** A new file only this run can have made: never an existing name, never through a link. */
async function createProbeFile(file: string): Promise<FileHandle | { code: string; message: string }> {
  try {
    return await open(file, fsConstants.O_RDWR | fsConstants.O_CREAT | fsConstants.O_EXCL | fsConstants.O_NOFOLLOW, 0o600);
  } catch (error) {
    const code = (error as { code?: string }).code ?? 'EUNKNOWN';
    return { code, message: `creating ${path.basename(file)} failed (${code})` };
  }
}

export async function runFsyncProbe(options: FsyncProbeOptions): Promise<FsyncProbeResult> {
  const started = performance.now();
  const opened = path.resolve(options.dir);
  const dir = options.label ?? opened;
  const sizeBytes = options.sizeBytes ?? DEFAULT_SIZE_BYTES;
  const blockSize = options.blockSize ?? DEFAULT_BLOCK_SIZE;
  if (!(Number.isInteger(blockSize) && blockSize > 0 && Number.isInteger(sizeBytes) && sizeBytes >= blockSize)) {
    return failureFor(dir, 'EINVAL', `--size (${sizeBytes}) must be a whole number of bytes ≥ --block-size (${blockSize}) > 0`);
  }
  if (insideEtcdMember(dir)) {
    return failureFor(dir, 'EINVAL', `${dir} is inside etcd's member/ directory; probe its parent (the data dir) or another directory on the same disk`);
  }
  const probeDir = await openProbeDir(opened, dir);
  if ('ok' in probeDir) return probeDir;
  try {
    return await probeIn(dir, probeDir, { ...options, sizeBytes, blockSize }, started);
  } finally {
    await probeDir.handle.close();
  }
}

async function probeIn(
  dir: string, probeDir: ProbeDir, options: FsyncProbeOptions & { sizeBytes: number; blockSize: number }, started: number,
): Promise<FsyncProbeResult> {
  const { sizeBytes, blockSize } = options;
  const stale = await removeStaleProbeFiles(probeDir.at);
  const free = await (options.freeBytes ?? defaultFreeBytes)(probeDir.at).catch(() => Infinity);
  if (free < sizeBytes + FREE_SPACE_MARGIN) {
    const mib = (n: number): string => (n / 1024 / 1024).toFixed(1);
    return failureFor(dir, 'ENOSPC', `${dir} has ${mib(free)} MiB free, the probe needs ${mib(sizeBytes + FREE_SPACE_MARGIN)} MiB`, stale);
  }
  const file = path.join(probeDir.at, `${PROBE_FILE_PREFIX}${process.pid}-${process.getBuiltinModule('node:crypto').randomBytes(4).toString('hex')}.tmp`);
  let worker: Worker | undefined;
  // Before the file exists: a SIGTERM as soon as it appears must find the handler in place.
  const detach = cleanupOnSignals(file, () => worker);
  const created = await createProbeFile(file);
  if (!('fd' in created)) {
    detach();
    return failureFor(dir, created.code, created.message, stale);
  }
  try {
    const prepared = await preallocate(created, sizeBytes, options.useFallocate ?? true);
    if ('code' in prepared) return failureFor(dir, prepared.code, prepared.message, stale);
    const job: WorkerJob = { fd: created.fd, sizeBytes, blockSize, fillWithZeros: prepared.method === 'zeros' };
    const run = runWorker(job, options.onProgress);
    worker = run.worker;
    const outcome = await run.done;
    await worker.terminate();
    if (outcome.type !== 'done') {
      const code = outcome.type === 'error' ? outcome.code : 'EUNKNOWN';
      const message = outcome.type === 'error' ? `${outcome.phase} of ${path.basename(file)} in ${dir} failed: ${outcome.message}` : 'unexpected message';
      return failureFor(dir, code, message, stale);
    }
    return {
      ok: true,
      ...latencySummary(outcome.durationsMs),
      wallMs: round(performance.now() - started),
      bytesWritten: outcome.bytesWritten,
      blockSize,
      dir,
      device: probeDir.device,
      sameDeviceAsEtcd: options.expectedDevice === undefined ? null : options.expectedDevice === probeDir.device,
      preallocation: prepared.method,
      staleFilesRemoved: stale,
    };
  } finally {
    detach();
    await unlink(file).catch(() => undefined);
    await created.close();
  }
}

function round(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}
