// A real Prometheus (Debian package) on loopback for a test: config and rules in a temp dir,
// an ephemeral port, stopped by the test. Plus small helpers to poll its HTTP API.
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import path from 'node:path';
import { stringify } from 'yaml';

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer().once('error', reject).listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

export interface RunningPrometheus { url: string; process: ChildProcess; log: () => string; stop(): Promise<void> }

/** A scrape target: host:port, and the labels Prometheus adds (the DaemonSet's relabelling sets `node`). */
export interface Target { address: string; labels: Record<string, string> }

/** Prometheus on a free port with its own data dir under `dir`, scraping `targets` every second. */
export async function startPrometheus(binary: string, dir: string, targets: Target[], rules: unknown): Promise<RunningPrometheus> {
  const port = await freePort();
  await writeFile(path.join(dir, 'rules.yaml'), stringify(rules));
  await writeFile(path.join(dir, 'prometheus.yml'), stringify({
    global: { scrape_interval: '1s', scrape_timeout: '900ms', evaluation_interval: '1s' },
    rule_files: ['rules.yaml'],
    scrape_configs: [{ job_name: 'node-tuning-advisor', static_configs: targets.map((t) => ({ targets: [t.address], labels: t.labels })) }],
  }));
  let output = '';
  const child = spawn(binary, [
    `--config.file=${path.join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${path.join(dir, 'data')}`,
    `--web.listen-address=127.0.0.1:${port}`, '--storage.tsdb.retention.time=1h',
  ], { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout?.on('data', (d: Buffer) => { output += d.toString(); });
  child.stderr?.on('data', (d: Buffer) => { output += d.toString(); });
  const url = `http://127.0.0.1:${port}`;
  await waitFor(async () => (await fetch(`${url}/-/ready`).catch(() => undefined))?.ok === true, 20_000, () => `prometheus not ready:\n${output}`);
  return { url, process: child, log: () => output, stop: () => stopChild(child) };
}

export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}

export async function waitFor(check: () => Promise<boolean>, timeoutMs: number, describe: () => string): Promise<number> {
  const started = performance.now();
  while (performance.now() - started < timeoutMs) {
    if (await check()) return performance.now() - started;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`gave up after ${timeoutMs} ms: ${describe()}`);
}

export interface ApiAlert { labels: Record<string, string>; annotations?: Record<string, string>; state: string; activeAt: string }

export async function alerts(url: string): Promise<ApiAlert[]> {
  const body = await (await fetch(`${url}/api/v1/alerts`)).json() as { data: { alerts: ApiAlert[] } };
  return body.data.alerts;
}

export async function query(url: string, promql: string): Promise<{ metric: Record<string, string>; value: [number, string] }[]> {
  const body = await (await fetch(`${url}/api/v1/query?query=${encodeURIComponent(promql)}`)).json() as {
    data: { result: { metric: Record<string, string>; value: [number, string] }[] };
  };
  return body.data.result;
}
