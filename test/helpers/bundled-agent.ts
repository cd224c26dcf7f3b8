// The agent as the image runs it: the esbuild bundle (scripts/bundle.ts) two levels below an app root
// holding rules/ and package.json, started as a child process. The test reads its stderr only to find
// the metrics port and to explain failures; what it did is asserted on the server.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp as copy } from 'node:fs/promises';
import path from 'node:path';
import { bundleTo } from './bundle-cache.ts';
import { REPO } from './manifests.ts';
import { imageEntrypoint, splitNodeCommand } from './shipped-agent.ts';

/** Bundles the CLI into `appDir` the way the Dockerfile lays it out; returns the bundle's path. */
export async function buildApp(appDir: string): Promise<string> {
  const { file } = await bundleTo(path.join(appDir, 'dist/bundle'));
  await copy(path.join(REPO, 'rules'), path.join(appDir, 'rules'), { recursive: true });
  await copy(path.join(REPO, 'package.json'), path.join(appDir, 'package.json'));
  return file;
}

/** The node flags the image runs the bundle with. */
const IMAGE_NODE_FLAGS = splitNodeCommand(await imageEntrypoint()).nodeFlags;

const METRICS_LINE = /serving \/metrics, \/healthz, \/readyz on ([\d.]+:\d+)/;
/** The line the agent logs at the end of each cycle, after that cycle's PATCH and Events were sent (src/agent/scan-log.ts). */
const CYCLE_LINE = /^agent: (?:scan: .*; took [\d.]+ s|publish: PATCH (?:yes|no), \d+ Events? sent)$/gm;

export class AgentProcess {
  readonly child: ChildProcess;
  log = '';
  private readonly exited: Promise<number | null>;

  private constructor(child: ChildProcess) {
    this.child = child;
    child.stderr?.on('data', (d: Buffer) => { this.log += d.toString(); });
    child.stdout?.on('data', (d: Buffer) => { this.log += d.toString(); });
    this.exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? (signal ? 128 : null))));
  }

  /**
   * Runs `node FLAGS BUNDLE ARGS`, FLAGS being the image's (the Dockerfile's ENTRYPOINT: --lite-mode),
   * with only PATH and `env` in its environment (a container's is as bare); `wrap` puts a command
   * before it (e.g. unshare: a PID namespace of its own).
   */
  static start(bundle: string, args: string[], env: Record<string, string> = {}, wrap: (argv: string[]) => string[] = (argv) => argv): AgentProcess {
    // setpriv --pdeathsig: if the test process dies without its after-hook, the agent dies too.
    const argv = wrap([process.execPath, ...IMAGE_NODE_FLAGS, bundle, ...args]);
    const [command, rest] = existsSync('/usr/bin/setpriv') ? ['/usr/bin/setpriv', ['--pdeathsig', 'KILL', '--', ...argv]] : [argv[0] as string, argv.slice(1)];
    const child = spawn(command, rest, {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env }, stdio: ['ignore', 'pipe', 'pipe'],
    });
    return new AgentProcess(child);
  }

  get pid(): number {
    return this.child.pid as number;
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** The metrics address it logged, once it serves. */
  async metricsUrl(timeoutMs = 30_000): Promise<string> {
    await this.waitForLog(METRICS_LINE, timeoutMs);
    return `http://${(METRICS_LINE.exec(this.log) as RegExpExecArray)[1]}`;
  }

  /** The lines of the cycles it has finished so far (scan and publish, or a publish retried), each saying what it sent. */
  cycleLines(): string[] {
    return this.log.match(CYCLE_LINE) ?? [];
  }

  get cycles(): number {
    return this.cycleLines().length;
  }

  /**
   * Until it has finished `count` cycles in all: what was sent by then includes everything those
   * cycles sent. The timeout is only a hang guard (each cycle is one --interval apart).
   */
  async waitForCycles(count: number, timeoutMs = 120_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.cycles < count) {
      if (!this.running) throw new Error(`agent exited (${this.child.exitCode}) after ${this.cycles} of ${count} cycles:\n${this.log}`);
      if (Date.now() > deadline) throw new Error(`${this.cycles} of ${count} cycles within ${timeoutMs} ms:\n${this.log}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  async waitForLog(pattern: RegExp, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!pattern.test(this.log)) {
      if (!this.running) throw new Error(`agent exited (${this.child.exitCode}) before ${pattern}:\n${this.log}`);
      if (Date.now() > deadline) throw new Error(`no ${pattern} within ${timeoutMs} ms:\n${this.log}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** SIGTERM, as the kubelet stops a pod; resolves with the exit code. */
  async stop(): Promise<number | null> {
    if (this.running) this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 10_000);
    const code = await this.exited;
    clearTimeout(timer);
    return code;
  }

  /** Resolves with the exit code when it ends by itself. */
  wait(): Promise<number | null> {
    return this.exited;
  }
}

/** GET a path of the agent's metrics server: status and body. */
export async function scrape(baseUrl: string, urlPath = '/metrics'): Promise<{ status: number; body: string }> {
  const res = await fetch(`${baseUrl}${urlPath}`, { signal: AbortSignal.timeout(5_000) });
  return { status: res.status, body: await res.text() };
}

/** The value of one sample in Prometheus text format, e.g. sample(text, 'x_count', {phase: 'total'}). */
export function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) return Number(m[3]);
  }
  return undefined;
}
