// Helpers for benches that watch a process from outside: /proc samples, a bare node beside it.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';

export interface ProcessSample { rssMiB: number; hwmMiB: number; cpuMs: number }

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] as number : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** VmRSS and VmHWM (MiB) and user+system CPU time (ms) from /proc. */
export async function sampleProcess(pid: number): Promise<ProcessSample> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kib = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  const stat = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1]?.split(' ') ?? [];
  const ticks = Number(stat[11]) + Number(stat[12]);
  return { rssMiB: kib('VmRSS') / 1024, hwmMiB: kib('VmHWM') / 1024, cpuMs: (ticks * 1000) / 100 };
}

/** A bare node idling (no flags, no script): the yardstick for ratios. */
export function startBareNode(): ChildProcess {
  return spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore', env: { PATH: process.env.PATH ?? '' } });
}
