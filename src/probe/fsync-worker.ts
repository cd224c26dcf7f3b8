// The timed part of the fsync probe, on its own thread so that a slow disk never stalls the agent's
// event loop: sequential writes of one block, fdatasync after each, only the fdatasync timed (what
// fio's "sync percentiles" and etcd's wal_fsync histogram measure).
import { fdatasyncSync, writeSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { parentPort, workerData } from 'node:worker_threads';

export interface WorkerJob {
  /** The probe file, opened by the main thread (threads share descriptors); never reopened by path. */
  fd: number;
  sizeBytes: number;
  blockSize: number;
  /** No fallocate: write the whole file with zeros and sync once before timing. */
  fillWithZeros: boolean;
}

export type WorkerMessage =
  | { type: 'progress'; done: number; total: number }
  | { type: 'done'; durationsMs: Float64Array; bytesWritten: number }
  | { type: 'error'; code: string; message: string; phase: string };

/** Progress at most this often, and at least once a second, like fio's status line. */
const PROGRESS_EVERY = 250;
const PROGRESS_MS = 1000;

function fillWithZeros(fd: number, sizeBytes: number): void {
  const chunk = Buffer.alloc(1024 * 1024);
  for (let offset = 0; offset < sizeBytes; offset += chunk.length) {
    writeSync(fd, chunk, 0, Math.min(chunk.length, sizeBytes - offset), offset);
  }
  fdatasyncSync(fd);
}

function run(job: WorkerJob, post: (message: WorkerMessage) => void): void {
  let phase = 'preallocate';
  // Buffered I/O, no O_DIRECT or O_DSYNC: the way etcd opens its WAL and fio's sync engine writes.
  const { fd } = job;
  try {
    if (job.fillWithZeros) {
      phase = 'preallocate';
      fillWithZeros(fd, job.sizeBytes);
    }
    phase = 'write';
    const total = Math.floor(job.sizeBytes / job.blockSize);
    const block = Buffer.alloc(job.blockSize, 0x5a);
    const durations = new Float64Array(total);
    let position = 0;
    let posted = performance.now();
    for (let i = 0; i < total; i++) {
      writeSync(fd, block, 0, job.blockSize, position);
      position += job.blockSize;
      // performance.now() allocates nothing, so no garbage collection lands inside the timed call.
      const start = performance.now();
      fdatasyncSync(fd);
      const end = performance.now();
      durations[i] = end - start;
      if ((i + 1) % PROGRESS_EVERY === 0 || end - posted >= PROGRESS_MS) {
        post({ type: 'progress', done: i + 1, total });
        posted = end;
      }
    }
    post({ type: 'done', durationsMs: durations, bytesWritten: position });
  } catch (error) {
    const code = (error as { code?: string }).code ?? 'EUNKNOWN';
    post({ type: 'error', code, message: (error as Error).message, phase });
  }
}

if (parentPort && workerData) {
  const port = parentPort;
  run(workerData as WorkerJob, (message) => {
    if (message.type === 'done') port.postMessage(message, [message.durationsMs.buffer as ArrayBuffer]);
    else port.postMessage(message);
  });
}
