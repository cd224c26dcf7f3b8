// fsync probe versus fio on the same directory, alternating (fio, probe) three times each, with
// etcd's fio job: --rw=write --ioengine=sync --fdatasync=1 --size=22m --bs=2300.
// Prints p50 and p99 of both (median over the runs), their ratios and the wall-time ratio.
// Goal: p50 and p99 within ±10 % of fio's, wall ≤ 1.1× fio's. FSYNC_BENCH_DIR picks the directory.
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { execa } from 'execa';
import { runFsyncProbe } from '../src/probe/fsync.ts';

const ROUNDS = 3;

interface Run {
  p50Ms: number;
  p99Ms: number;
  wallMs: number;
}

interface FioJson {
  jobs?: { sync?: { lat_ns?: { percentile?: Record<string, number> } } }[];
}

export function fioSyncPercentiles(json: FioJson): { p50Ms: number; p99Ms: number } | undefined {
  const percentiles = json.jobs?.[0]?.sync?.lat_ns?.percentile;
  const p50 = percentiles?.['50.000000'];
  const p99 = percentiles?.['99.000000'];
  return p50 === undefined || p99 === undefined ? undefined : { p50Ms: p50 / 1e6, p99Ms: p99 / 1e6 };
}

async function runFio(dir: string): Promise<Run> {
  const started = performance.now();
  const result = await execa('fio', ['--rw=write', '--ioengine=sync', '--fdatasync=1', `--directory=${dir}`, '--size=22m', '--bs=2300', '--name=etcd-bench', '--output-format=json'], { reject: false });
  const wallMs = performance.now() - started;
  for (const name of await readdir(dir)) if (name.startsWith('etcd-bench')) await rm(path.join(dir, name), { force: true });
  if (result.exitCode !== 0) throw new Error(`fio failed: ${result.shortMessage ?? result.stderr}`);
  const percentiles = fioSyncPercentiles(JSON.parse(String(result.stdout)) as FioJson);
  if (!percentiles) throw new Error('fio printed no sync percentiles (fio ≥ 3.4 is needed)');
  return { ...percentiles, wallMs };
}

async function runProbe(dir: string): Promise<Run> {
  const started = performance.now();
  const result = await runFsyncProbe({ dir });
  const wallMs = performance.now() - started;
  if (!result.ok) throw new Error(`probe failed: ${result.reason}`);
  return { p50Ms: result.p50Ms, p99Ms: result.p99Ms, wallMs };
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;
const fmt = (ms: number): string => `${(ms * 1000).toFixed(0)} µs`;

export async function run(): Promise<void> {
  const fioAvailable = await execa('fio', ['--version'], { reject: false }).then((r) => r.exitCode === 0, () => false);
  if (!fioAvailable) {
    console.log('fsync bench: fio not found (apt-get install fio); skipped');
    return;
  }
  const base = process.env.FSYNC_BENCH_DIR ?? os.tmpdir();
  const dir = await mkdtemp(path.join(base, 'nta-fsync-bench-'));
  const fio: Run[] = [];
  const probe: Run[] = [];
  try {
    for (let round = 0; round < ROUNDS; round++) {
      fio.push(await runFio(dir));
      probe.push(await runProbe(dir));
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  const row = (name: string, runs: Run[]): string =>
    `${name.padEnd(6)} p50 ${runs.map((r) => fmt(r.p50Ms)).join(' / ')}   p99 ${runs.map((r) => fmt(r.p99Ms)).join(' / ')}   wall ${runs.map((r) => `${r.wallMs.toFixed(0)} ms`).join(' / ')}`;
  const ratio = (key: keyof Run): number => median(probe.map((r) => r[key])) / median(fio.map((r) => r[key]));
  console.log(`fsync probe vs fio (${ROUNDS} alternating runs each, 22 MiB in 2300-byte writes, ${dir})`);
  console.log(row('fio', fio));
  console.log(row('probe', probe));
  console.log(
    `median ratios probe/fio: p50 ${ratio('p50Ms').toFixed(3)}  p99 ${ratio('p99Ms').toFixed(3)}  wall ${ratio('wallMs').toFixed(3)}` +
      '  (goal: p50, p99 within 0.90–1.10; wall ≤ 1.10)',
  );
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
