// The DaemonSet's resource figures: the bundled agent (as the image runs it, with the DaemonSet's
// NODE_OPTIONS) against the apiserver stand-in, scanning a fixture host every second (time
// compressed: 60 scans = 5 h at the default 5 min). Samples VmRSS/VmHWM and CPU time from /proc.
import { spawn } from 'node:child_process';
import { cp, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleTo } from '../scripts/bundle.ts';
import { parse } from 'yaml';
import { FakeApiServer } from '../test/helpers/fake-apiserver.ts';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const SECONDS = Number(process.env.NTA_BENCH_FOOTPRINT_SECONDS ?? 60);
const HOST = path.join(REPO, 'test/fixtures/hosts/etcd-kubeadm-nvme');
/** NODE_OPTIONS exactly as the DaemonSet sets it. */
async function daemonSetNodeOptions(): Promise<string> {
  const ds = parse(await readFile(path.join(REPO, 'manifests/base/daemonset/daemonset.yaml'), 'utf8'));
  const env: { name: string; value?: string }[] = ds.spec.template.spec.containers[0].env;
  return env.find((e) => e.name === 'NODE_OPTIONS')?.value ?? '';
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function sample(pid: number): Promise<{ rssMiB: number; hwmMiB: number; cpuMs: number }> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kib = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  const stat = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1]?.split(' ') ?? [];
  const ticks = Number(stat[11]) + Number(stat[12]);
  return { rssMiB: kib('VmRSS') / 1024, hwmMiB: kib('VmHWM') / 1024, cpuMs: (ticks * 1000) / 100 };
}

export async function run(): Promise<void> {
  const tmp = await mkdtemp(path.join(tmpdir(), 'nta-footprint-'));
  const api = new FakeApiServer();
  await api.start();
  api.addNode('worker-1');
  try {
    const app = path.join(tmp, 'app');
    const { file } = await bundleTo(path.join(app, 'dist/bundle'));
    await cp(path.join(REPO, 'rules'), path.join(app, 'rules'), { recursive: true });
    await cp(path.join(REPO, 'package.json'), path.join(app, 'package.json'));
    const agent = spawn(process.execPath, [file, 'agent', '--kubeconfig', api.writeKubeconfig(), '--node-name', 'worker-1',
      '--interval', '1s', '--startup-jitter', '1ms', '--metrics-addr', '127.0.0.1:0', '--host-root', HOST, '--probe-interval', 'off'],
    { stdio: 'ignore', env: { ...process.env, NODE_OPTIONS: process.env.NTA_BENCH_NODE_OPTIONS ?? await daemonSetNodeOptions() } });
    await sleep(3_000);
    const first = await sample(agent.pid as number);
    const rss: number[] = [];
    for (let i = 0; i < SECONDS; i++) { await sleep(1000); rss.push((await sample(agent.pid as number)).rssMiB); }
    const last = await sample(agent.pid as number);
    agent.kill('SIGTERM');
    const cpuPerScan = (last.cpuMs - first.cpuMs) / SECONDS;
    const sorted = [...rss].sort((a, b) => a - b);
    console.log(`bundled agent, ${SECONDS} scans of ${path.basename(HOST)} at 1 s:`);
    console.log(`  RSS median ${sorted[Math.floor(sorted.length / 2)]?.toFixed(1)} MiB, max ${sorted.at(-1)?.toFixed(1)} MiB, high-water mark ${last.hwmMiB.toFixed(1)} MiB`);
    console.log(`  CPU ${cpuPerScan.toFixed(0)} ms per scan (incl. publish and scrapes-free idle): ` +
      `${(cpuPerScan / 300).toFixed(2)} millicores at the default 5 min interval`);
    console.log(`  API: ${api.count('PATCH')} PATCH, ${api.count('POST')} POST over the run`);
  } finally {
    await api.stop();
    await rm(tmp, { recursive: true, force: true });
  }
}
