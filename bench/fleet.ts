// `report` at fleet scale on the real control plane: builds a cluster of 500 nodes / 10 000 pods and
// one of 5 000 nodes / 100 000 pods through the API (Nodes as kubelets register them, with the
// agent's annotations; pods of app Deployments and of two DaemonSets over every node; Tekton and a
// CSI driver whose pods' logs a stand-in kubelet serves), then runs the bundled CLI as shipped
// (`node dist/bundle/node-tuning-advisor.mjs report`) against each and prints, side by side: wall
// time, peak RSS (the kernel's high-water mark for the process), requests (the server's audit log)
// and bytes received (counted on the wire by a TCP relay in front of kube-apiserver).
//
// NTA_BENCH_FLEET_SIZES="500:10000,5000:100000" (nodes:pods); NTA_BENCH_FLEET_COMPARE=FILE.mjs runs
// another bundle (e.g. a build of main) against the same clusters, labelled NTA_BENCH_FLEET_COMPARE_LABEL.
// Needs KUBEBUILDER_ASSETS (see test/helpers/control-plane.ts) and /usr/bin/time.
import { spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { cp as copy, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { connect, createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleTo } from '../scripts/bundle.ts';
import { auditArgs, type AuditLog } from '../test/helpers/audit.ts';
import { ControlPlane } from '../test/helpers/control-plane.ts';
import { buildFleet } from '../test/helpers/fleet-cluster.ts';
import { KubeletLogs } from '../test/helpers/kubelet-logs.ts';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const REPORTER = 'bench-reporter';
const TOKEN = 'bench-fleet-report-token-0123456789';
/** Raised for the build only (many creates in flight); the report runs against the defaults. */
const BUILD_ARGS = ['--max-requests-inflight=2000', '--max-mutating-requests-inflight=1000'];
const APP_NAMESPACES = 100;
const APPS_PER_NAMESPACE = 4;

interface Size { nodes: number; pods: number }
interface Measured { label: string; output: string; code: number; wallS: number; peakMiB: number; requests: number; bytes: number; nodeBytes?: number }

function sizes(): Size[] {
  return (process.env.NTA_BENCH_FLEET_SIZES ?? '500:10000,5000:100000').split(',').map((s) => {
    const [nodes, pods] = s.split(':').map(Number);
    return { nodes: nodes as number, pods: pods as number };
  });
}

/** Counts what kube-apiserver sends back through it. */
class ByteRelay {
  bytes = 0;
  private readonly server: Server;
  port = 0;

  constructor(target: number) {
    this.server = createServer((client) => {
      const upstream = connect(target, '127.0.0.1');
      upstream.on('data', (chunk: Buffer) => { this.bytes += chunk.length; });
      client.pipe(upstream).on('error', () => client.destroy());
      upstream.pipe(client).on('error', () => upstream.destroy());
      client.on('error', () => upstream.destroy());
      upstream.on('error', () => client.destroy());
    });
  }

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as { port: number }).port;
  }

  stop(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

async function app(dir: string): Promise<string> {
  const { file } = await bundleTo(path.join(dir, 'dist/bundle'));
  await copy(path.join(REPO, 'rules'), path.join(dir, 'rules'), { recursive: true });
  await copy(path.join(REPO, 'package.json'), path.join(dir, 'package.json'));
  return file;
}

/** One run of a bundle: wall time around the process, its peak RSS from /usr/bin/time (KiB). */
async function measure(label: string, bundle: string, output: string, kubeconfig: string, relay: ByteRelay, audit: AuditLog, outFile: string): Promise<Measured> {
  const since = Date.now();
  relay.bytes = 0;
  const timeFile = `${outFile}.time`;
  const started = performance.now();
  const code = await new Promise<number>((resolve) => {
    const child = spawn('/usr/bin/time', ['-f', '%M', '-o', timeFile, process.execPath, bundle, 'report', '--kubeconfig', kubeconfig, '--output', output, '--fail-on', 'never'],
      { stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' } });
    child.stdout.pipe(createWriteStream(outFile));
    child.stderr.pipe(createWriteStream(`${outFile}.err`));
    child.on('close', (c) => resolve(c ?? 1));
  });
  const wallS = (performance.now() - started) / 1000;
  const peakMiB = Number((await readFile(timeFile, 'utf8')).trim().split('\n').at(-1)) / 1024;
  const requests = (await audit.requests((r) => r.user === REPORTER && r.at >= since)).length;
  return { label, output, code, wallS, peakMiB, requests, bytes: relay.bytes, ...nodeBytes(output === 'json' ? await readFile(outFile, 'utf8') : '') };
}

/** What the report itself says it received for the Node list (JSON, builds that count it). */
function nodeBytes(json: string): { nodeBytes?: number } {
  try {
    const bytes = (JSON.parse(json) as { api?: { bytesByResource?: Record<string, number> } }).api?.bytesByResource?.nodes;
    return bytes === undefined ? {} : { nodeBytes: bytes };
  } catch {
    return {};
  }
}

async function measureSize(size: Size, bundles: [string, string][], tmp: string): Promise<{ size: Size; buildS: number; runs: Measured[] }> {
  const dir = await mkdtemp(path.join(tmp, `fleet-${size.nodes}-`));
  const auditing = await auditArgs(dir, [REPORTER]);
  const [cp, kubelet] = await Promise.all([
    ControlPlane.start({ apiserverArgs: [...auditing.args, ...BUILD_ARGS], extraTokens: [{ token: TOKEN, user: REPORTER, groups: ['system:masters'] }] }),
    KubeletLogs.start(dir),
  ]);
  try {
    const workers = size.nodes - 3;
    const podsPerApp = Math.max(1, Math.round((size.pods - 2 * size.nodes) / (APP_NAMESPACES * APPS_PER_NAMESPACE)));
    const built = performance.now();
    let last = 0;
    await buildFleet(cp, kubelet, {
      workers, appNamespaces: APP_NAMESPACES, appsPerNamespace: APPS_PER_NAMESPACE, podsPerApp, daemonSets: true, pipelineRuns: 200,
      noAgentEvery: 50, unreadableEvery: 997, concurrency: 48,
      progress: (line) => { if (performance.now() - last > 15_000) { last = performance.now(); console.log(`  building ${size.nodes} nodes: ${line}`); } },
    });
    const buildS = (performance.now() - built) / 1000;
    // Measured against the default limits, with the watch cache filled as on a server that has been up.
    await cp.restartApiserver(auditing.args);
    await new Promise((r) => setTimeout(r, 5_000));
    const counting = new ByteRelay(Number(new URL(cp.url).port));
    await counting.start();
    const kubeconfig = path.join(dir, 'reporter.kubeconfig');
    await cp.writeKubeconfig(kubeconfig, REPORTER, TOKEN);
    await writeFile(kubeconfig, (await readFile(kubeconfig, 'utf8')).replace(cp.url, `https://127.0.0.1:${counting.port}`));
    const runs: Measured[] = [];
    try {
      // Unmeasured: the server's first lists after its restart warm its caches, which no variant should pay for.
      await measure('warm-up', (bundles[0] as [string, string])[1], 'table', kubeconfig, counting, auditing.log, path.join(dir, 'warm-up.out'));
      for (const [label, bundle] of bundles) {
        for (const output of ['table', 'json']) runs.push(await measure(label, bundle, output, kubeconfig, counting, auditing.log, path.join(dir, `${label}-${output}.out`)));
      }
    } finally {
      await counting.stop();
    }
    return { size, buildS, runs };
  } finally {
    await cp.stop();
    await kubelet.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
const spaced = (n: number) => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ' ');

function print(results: { size: Size; buildS: number; runs: Measured[] }[]): void {
  const heads = results.map((r) => `${spaced(r.size.nodes)} nodes / ${spaced(r.size.pods)} pods`);
  const width = Math.max(...heads.map((h) => h.length)) + 2;
  console.log(`\n${''.padEnd(30)}${heads.map((h) => h.padStart(width)).join('')}`);
  console.log(`${'cluster built in'.padEnd(30)}${results.map((r) => `${r.buildS.toFixed(0)} s`.padStart(width)).join('')}`);
  const first = results[0];
  for (const [i, run] of (first?.runs ?? []).entries()) {
    const cells = (f: (m: Measured) => string) => results.map((r) => f(r.runs[i] as Measured).padStart(width)).join('');
    const name = `${run.label} --output ${run.output}`;
    console.log(`\n${name}${results.some((r) => r.runs[i]?.code !== 0) ? `  (exit codes ${results.map((r) => r.runs[i]?.code).join(', ')})` : ''}`);
    console.log(`${'  wall time'.padEnd(30)}${cells((m) => `${m.wallS.toFixed(1)} s`)}`);
    console.log(`${'  peak RSS'.padEnd(30)}${cells((m) => `${m.peakMiB.toFixed(0)} MiB`)}`);
    console.log(`${'  requests'.padEnd(30)}${cells((m) => String(m.requests))}`);
    console.log(`${'  bytes received'.padEnd(30)}${cells((m) => mib(m.bytes))}`);
    if (results.every((r) => r.runs[i]?.nodeBytes !== undefined)) {
      console.log(`${'    of which the Node list'.padEnd(30)}${cells((m) => mib(m.nodeBytes ?? 0))}`);
      console.log(`${'    everything else'.padEnd(30)}${cells((m) => mib(m.bytes - (m.nodeBytes ?? 0)))}`);
    }
    if (results.length > 1) {
      const [small, big] = [results[0]?.runs[i] as Measured, results.at(-1)?.runs[i] as Measured];
      console.log(`  largest / smallest: peak RSS ×${(big.peakMiB / small.peakMiB).toFixed(2)}, bytes ×${(big.bytes / small.bytes).toFixed(1)}, wall ×${(big.wallS / small.wallS).toFixed(1)}`);
    }
  }
}

export async function run(): Promise<void> {
  const tmp = await mkdtemp(path.join(tmpdir(), 'nta-bench-fleet-'));
  try {
    const bundles: [string, string][] = [['this build', await app(path.join(tmp, 'app'))]];
    if (process.env.NTA_BENCH_FLEET_COMPARE) bundles.push([process.env.NTA_BENCH_FLEET_COMPARE_LABEL ?? 'compare', process.env.NTA_BENCH_FLEET_COMPARE]);
    const results = [];
    for (const size of sizes()) {
      console.log(`building ${spaced(size.nodes)} nodes / ${spaced(size.pods)} pods …`);
      results.push(await measureSize(size, bundles, tmp));
    }
    print(results);
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}
