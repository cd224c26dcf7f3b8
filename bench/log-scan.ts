// Client-side throttling scan of a 1 GiB CRI-format pod log: bounded time and memory whatever the
// file's size. The log (10 h of kube-scheduler lines, one throttling line in 50) is generated in a
// temporary directory and deleted afterwards. Prints MB/s, bytes read and peak RSS per scenario.
import { mkdtemp, mkdir, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { HostRoot } from '../src/host/host-root.ts';
import { DEFAULT_LIMITS, scanLogBackwards, type ScanLimits } from '../src/collectors/log-scan.ts';
import { createThrottlingCollector } from '../src/collectors/throttling.ts';
import { collectFacts } from '../src/collectors/run.ts';

const FILE_BYTES = 1024 * 1024 * 1024;
const CHUNK_BYTES = 4 * 1024 * 1024;
const SPAN_MS = 10 * 3_600_000;
const START_MS = Date.UTC(2026, 10, 30, 4, 0, 0);
const LOG = '/var/log/pods/kube-system_kube-scheduler-bench_0f1e2d3c4b5a69788796a5b4c3d2e1f0/kube-scheduler/0.log';
const MiB = 1024 * 1024;

function chunkText(atMs: number, index: number): string {
  const ts = new Date(atMs).toISOString().replace('Z', '000000Z');
  const klogTime = ts.slice(11, 26);
  const lines: string[] = [];
  let size = 0;
  for (let i = 0; size < CHUNK_BYTES; i++) {
    const line = i % 50 === 7
      ? `${ts} stderr F I1130 ${klogTime}       1 request.go:752] "Waited before sending request" delay="${(50 + (i % 900)).toString()}ms" reason="client-side throttling, not priority and fairness" verb="POST" URL="https://10.0.0.10:6443/api/v1/namespaces/batch/pods/job-${index}-${i}/binding"\n`
      : `${ts} stderr F I1130 ${klogTime}       1 schedule_one.go:314] "Successfully bound pod to node" pod="batch/job-${index}-${i}" node="worker-${i % 40}" evaluatedNodes=40 feasibleNodes=38\n`;
    lines.push(line);
    size += line.length;
  }
  return lines.join('');
}

async function generate(root: string): Promise<void> {
  const local = path.join(root, LOG);
  await mkdir(path.dirname(local), { recursive: true });
  const handle = await open(local, 'w');
  const chunks = FILE_BYTES / CHUNK_BYTES;
  try {
    for (let i = 0; i < chunks; i++) await handle.write(chunkText(START_MS + (SPAN_MS * i) / chunks, i));
  } finally {
    await handle.close();
  }
}

/** Runs `work` while sampling RSS every 2 ms; returns its result, the time and the RSS peak. */
async function measured<T>(work: () => Promise<T>): Promise<{ result: T; ms: number; peakRssMiB: number; baseRssMiB: number }> {
  const baseRssMiB = process.memoryUsage().rss / MiB;
  let peak = baseRssMiB;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss / MiB)), 2);
  const start = performance.now();
  try {
    const result = await work();
    return { result, ms: performance.now() - start, peakRssMiB: Math.max(peak, process.memoryUsage().rss / MiB), baseRssMiB };
  } finally {
    clearInterval(timer);
  }
}

async function scenario(host: HostRoot, label: string, windowMs: number, limits: ScanLimits): Promise<void> {
  const endMs = START_MS + SPAN_MS;
  const window = { startMs: endMs - windowMs, endMs, referenceYear: 2026 };
  const run = await measured(() => scanLogBackwards(host, LOG, window, limits));
  const scan = run.result;
  const mbps = scan.scannedBytes / MiB / (run.ms / 1000);
  console.log(
    `${label.padEnd(44)} read ${(scan.scannedBytes / MiB).toFixed(0).padStart(5)} MiB of ${(scan.sizeBytes / MiB).toFixed(0)} MiB` +
      ` in ${(run.ms / 1000).toFixed(2)} s (${mbps.toFixed(0)} MiB/s), ${scan.tally.count} throttling lines, window covered: ${scan.coveredWindow},` +
      ` RSS ${run.baseRssMiB.toFixed(0)} → peak ${run.peakRssMiB.toFixed(0)} MiB`,
  );
}

export async function run(): Promise<void> {
  const root = await mkdtemp(path.join(tmpdir(), 'nta-log-bench-'));
  try {
    const generated = await measured(() => generate(root));
    console.log(`generated a ${FILE_BYTES / MiB} MiB CRI log (10 h, 1 throttling line in 50) in ${(generated.ms / 1000).toFixed(1)} s`);
    const host = new HostRoot(root);
    await scenario(host, 'default limits (1 h window, 32 MiB budget)', 3_600_000, DEFAULT_LIMITS);
    await scenario(host, '1 h window, no byte budget', 3_600_000, { chunkBytes: DEFAULT_LIMITS.chunkBytes, budgetBytes: Infinity });
    await scenario(host, 'whole file (12 h window, no byte budget)', 12 * 3_600_000, { chunkBytes: DEFAULT_LIMITS.chunkBytes, budgetBytes: Infinity });
    const collector = createThrottlingCollector({ clock: () => START_MS + SPAN_MS });
    const full = await measured(() => collectFacts(host, { collectors: [collector] }));
    const count = full.result.get('throttling.scheduler.count');
    console.log(
      `throttling collector on that host: ${(full.ms / 1000).toFixed(2)} s, throttling.scheduler.count = ${String(count?.value)}` +
        ` (maxWaitMs ${String(full.result.value('throttling.scheduler.maxWaitMs'))}), peak RSS ${full.peakRssMiB.toFixed(0)} MiB`,
    );
    console.log(`process max RSS over the whole bench (includes generation): ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MiB`);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}
