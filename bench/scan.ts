// In-process full scan of fixture hosts (no probe): collectors + rules + report, repeated.
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { runScan } from '../src/scan.ts';

const HOSTS = ['intel-pstate-epp-power', 'rhel-hz1000-tuned-merged', 'amd-acpi-cpufreq-ondemand', 'vm-no-cpufreq'];
const ITERATIONS = 30;

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}

export async function run(): Promise<void> {
  for (const host of HOSTS) {
    const hostRoot = fileURLToPath(new URL(`../test/fixtures/hosts/${host}`, import.meta.url));
    await runScan({ hostRoot }); // warm-up: module loading, ajv compile
    const times: number[] = [];
    for (let i = 0; i < ITERATIONS; i++) {
      const start = performance.now();
      await runScan({ hostRoot });
      times.push(performance.now() - start);
    }
    times.sort((a, b) => a - b);
    console.log(`scan ${host.padEnd(28)} median ${percentile(times, 50).toFixed(1)} ms  p90 ${percentile(times, 90).toFixed(1)} ms  (n=${ITERATIONS})`);
  }
  const rss = process.memoryUsage().rss / 1024 / 1024;
  console.log(`process RSS after scans: ${rss.toFixed(0)} MiB`);
}
