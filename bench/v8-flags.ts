// Node/V8 settings for the DaemonSet, side by side: the bundled agent against the real control plane
// (as in bench/footprint.ts) with each variant's node flags and environment, 40 scans each at 1 s:
// steady RSS against CPU per scan. NTA_BENCH_V8_VARIANTS=a,b picks variants by label;
// NTA_BENCH_V8_SCANS sets the scans per variant.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { agentCluster, buildApp, measureAgent } from './footprint.ts';

const SCANS = Number(process.env.NTA_BENCH_V8_SCANS ?? 40);
const OLD_OPTIONS = '--max-old-space-size=96 --max-semi-space-size=2';
const MALLOC = 'glibc.malloc.arena_max=1:glibc.malloc.trim_threshold=131072:glibc.malloc.mmap_threshold=131072';

interface Variant { label: string; nodeFlags: string[]; env: Record<string, string> }

export const VARIANTS: Variant[] = [
  { label: 'none', nodeFlags: [], env: {} },
  { label: 'heap-limits', nodeFlags: [], env: { NODE_OPTIONS: OLD_OPTIONS } },
  { label: 'heap-limits+malloc', nodeFlags: [], env: { NODE_OPTIONS: OLD_OPTIONS, GLIBC_TUNABLES: MALLOC } },
  { label: 'optimize-for-size', nodeFlags: ['--optimize-for-size'], env: { NODE_OPTIONS: OLD_OPTIONS } },
  { label: 'max-lazy', nodeFlags: ['--max-lazy'], env: { NODE_OPTIONS: OLD_OPTIONS } },
  { label: 'jitless', nodeFlags: ['--jitless'], env: { NODE_OPTIONS: OLD_OPTIONS } },
  { label: 'lite', nodeFlags: ['--lite-mode'], env: {} },
  { label: 'lite+heap-limits', nodeFlags: ['--lite-mode'], env: { NODE_OPTIONS: OLD_OPTIONS } },
  { label: 'lite+semi1', nodeFlags: ['--lite-mode'], env: { NODE_OPTIONS: '--max-old-space-size=96 --max-semi-space-size=1' } },
  { label: 'lite+heap-limits+malloc', nodeFlags: ['--lite-mode'], env: { NODE_OPTIONS: OLD_OPTIONS, GLIBC_TUNABLES: MALLOC } },
  { label: 'lite+heap-limits+arena1', nodeFlags: ['--lite-mode'], env: { NODE_OPTIONS: OLD_OPTIONS, GLIBC_TUNABLES: 'glibc.malloc.arena_max=1' } },
  { label: 'lite+heap-limits+malloc+pool1', nodeFlags: ['--lite-mode'], env: { NODE_OPTIONS: `${OLD_OPTIONS} --v8-pool-size=1`, GLIBC_TUNABLES: MALLOC, UV_THREADPOOL_SIZE: '1' } },
  { label: 'lite+single-threaded+malloc', nodeFlags: ['--lite-mode', '--single-threaded'], env: { NODE_OPTIONS: OLD_OPTIONS, GLIBC_TUNABLES: MALLOC } },
];

export async function run(): Promise<void> {
  const wanted = process.env.NTA_BENCH_V8_VARIANTS?.split(',');
  const tmp = await mkdtemp(path.join(tmpdir(), 'nta-v8-flags-'));
  const app = await buildApp(tmp);
  const { cp, kubeconfig } = await agentCluster(tmp);
  try {
    console.log(`bundled agent against the real control plane, ${SCANS} scans at 1 s per variant (steady = median of the last third):`);
    console.log(`  ${'variant'.padEnd(32)} ${'RSS MiB'.padStart(8)} ${'x bare'.padStart(7)} ${'HWM'.padStart(6)} ${'CPU ms/scan'.padStart(12)}`);
    for (const v of VARIANTS.filter((x) => !wanted || wanted.includes(x.label))) {
      try {
        const r = await measureAgent(app, kubeconfig, v.nodeFlags, v.env, SCANS);
        console.log(`  ${v.label.padEnd(32)} ${r.steadyMiB.toFixed(1).padStart(8)} ${(r.steadyMiB / r.bareMiB).toFixed(2).padStart(7)} ` +
          `${r.hwmMiB.toFixed(1).padStart(6)} ${r.cpuMsPerScan.toFixed(0).padStart(12)}${r.scanErrors ? `  (${r.scanErrors} scan errors)` : ''}`);
      } catch (err) {
        console.log(`  ${v.label.padEnd(32)} failed: ${String((err as Error).message).split('\n').slice(0, 3).join(' | ')}`);
      }
    }
  } finally {
    await cp.stop();
    await rm(tmp, { recursive: true, force: true });
  }
}
