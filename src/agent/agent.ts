// The agent loop: scan every interval (±10 %, after a random start-up delay), publish against the
// watched Node, back off on errors. Stopping aborts the waits at once and gives a publish in flight
// a short grace (the client aborts it after that), so SIGTERM ends the agent within seconds.
import { DEFAULT_BACKOFF, jittered, retryDelay, type BackoffPolicy } from '../kube/backoff.ts';
import { describeError } from '../kube/errors.ts';
import type { Report } from '../report/types.ts';
import type { NodeWatcher } from './node-watcher.ts';
import type { Publisher, PublishOutcome } from './publisher.ts';
import { publishLine, scanLine } from './scan-log.ts';

export interface AgentDeps {
  scan(): Promise<Report>;
  watcher: NodeWatcher;
  /** Further watches that run while the agent runs (the workload path: pods, CSIDriver, CSINode). */
  background?: { start(): void; stop(): Promise<void> };
  publisher: Publisher;
  /** The heartbeat (heartbeat.ts): told of each successful publish; with --once renewed once before exit. */
  heartbeat?: { start(): void; stop(): Promise<void>; published(): void; beatOnce(): Promise<boolean> };
  /**
   * Before the first scan: whether the admission policies hold the agent's token (admission-check.ts).
   * Not held: the agent logs why and ends with 2; a throw (no answer to decide by) is retried as a failed cycle.
   */
  admission?(): Promise<{ held: true; lines: string[] } | { held: false; reason: string }>;
  /** Called by stop(): abort what is in flight (the API client's stop). */
  onStop?(): Promise<void> | void;
  onReport?(report: Report, durationSeconds: number): void;
  onScanError?(): void;
  log(line: string): void;
}

export interface AgentOptions {
  intervalMs: number;
  /** The first scan waits a random delay in [0, startupJitterMs) so a rollout does not write all at once. */
  startupJitterMs: number;
  once: boolean;
  /** How long to wait for the first LIST of the Node before calling it an error. */
  nodeReadTimeoutMs: number;
  /** --once gives up after this many failed attempts. */
  onceAttempts: number;
  /**
   * At start, an API server that has not answered for this long (refused, unroutable, no TLS
   * connection) ends the agent with exit 1 and the server's URL; with --once the first failure does.
   */
  reachWindowMs: number;
  backoff: BackoffPolicy;
  random(): number;
}

export const DEFAULT_AGENT_OPTIONS: AgentOptions = {
  intervalMs: 5 * 60_000,
  startupJitterMs: 30_000,
  once: false,
  nodeReadTimeoutMs: 30_000,
  onceAttempts: 5,
  reachWindowMs: 60_000,
  backoff: DEFAULT_BACKOFF,
  random: Math.random,
};

/** The scan itself failed (a collector crash the runner could not contain, a stop while waiting). */
class ScanFailed extends Error {}
/** The admission check got no answer to decide by. */
class AdmissionUndecided extends Error {}
/** An accepted dry run is asked again this often (1 s, 2 s, 4 s later) before it ends the agent: a new policy takes a moment to load. */
const ADMISSION_RETRIES = 3;
const ADMISSION_RETRY_MS = 1000;

export class Agent {
  private readonly deps: AgentDeps;
  private readonly opts: AgentOptions;
  private readonly stopper = new AbortController();
  private report: Report | undefined;
  private lastScanAt = -Infinity;
  private failures = 0;
  /** When the last cycle that published (or found the Node already carrying the report) ended. */
  private publishedAt = -Infinity;
  /** The report of the scan before the newest one: what "rules changed" is counted against. */
  private previous: Report | undefined;
  private scannedAt = 0;
  /** Set when the API server did not answer at start: run() ends with 1. */
  private unreachable = false;
  /** Whether the admission policies were found to hold the agent's token; false: run() ends with 2. */
  private admitted: boolean | undefined;
  cycles = 0;

  constructor(deps: AgentDeps, opts: Partial<AgentOptions> = {}) {
    this.deps = deps;
    this.opts = { ...DEFAULT_AGENT_OPTIONS, ...opts };
  }

  get ready(): boolean {
    return this.report !== undefined;
  }

  /**
   * The report on the Node is current: the last cycle succeeded, within two intervals (a scan that
   * hangs or a loop that stopped cycling stops the heartbeat too).
   */
  get current(): boolean {
    return this.failures === 0 && performance.now() - this.publishedAt < 2 * this.opts.intervalMs;
  }

  /** Aborted by stop(): long waits (the first LIST, a scan's wait for the watches) end with it. */
  get signal(): AbortSignal {
    return this.stopper.signal;
  }

  /** Stop now: waits end, the API client aborts requests in flight (a publish gets a short grace). */
  stop(): void {
    if (this.stopper.signal.aborted) return;
    this.stopper.abort();
    void Promise.resolve(this.deps.onStop?.()).catch((err) => this.deps.log(`stopping: ${describeError(err)}`));
  }

  /** Runs until stop() (resolves 0) or, with --once, after one publish (0) or giving up (1). */
  async run(): Promise<number> {
    this.deps.watcher.start();
    this.deps.background?.start();
    if (!this.opts.once) this.deps.heartbeat?.start();
    // Alongside the first cycles (the scan still runs and its metrics are served): a server that never answers ends the agent.
    const watchdog = this.watchServer();
    try {
      if (!this.opts.once) await this.sleep(this.opts.startupJitterMs * this.opts.random());
      while (!this.stopper.signal.aborted) {
        const delay = await this.cycle();
        if (this.unreachable) return 1;
        if (this.admitted === false) return 2;
        if (this.opts.once && (this.failures === 0 || this.failures >= this.opts.onceAttempts)) {
          if (this.failures > 0) return 1;
          await this.deps.heartbeat?.beatOnce(); // a failure is logged; the report is published all the same
          return 0;
        }
        await this.sleep(delay);
      }
      return this.unreachable ? 1 : 0;
    } finally {
      await Promise.all([this.deps.watcher.stop(), this.deps.background?.stop(), this.deps.heartbeat?.stop()]);
      await watchdog; // released by the watcher's stop
      await this.deps.onStop?.(); // closes the connections (a no-op after stop())
    }
  }

  /** Stops the agent (exit 1, logged with the server's URL) when the API server cannot be reached at start. */
  private async watchServer(): Promise<void> {
    const window = this.opts.once ? 0 : this.opts.reachWindowMs;
    const error = await this.deps.watcher.contact(window, this.stopper.signal);
    if (error === undefined) return;
    const waited = this.opts.once ? '' : ` for ${Number((window / 1000).toFixed(1))} s`;
    this.deps.log(`${error.summary}; no answer${waited}, exiting (check the kubeconfig's server or the in-cluster service address)`);
    this.unreachable = true;
    this.stop();
  }

  /** One scan (when due) and one publish; returns the delay before the next cycle. */
  private async cycle(): Promise<number> {
    this.cycles += 1;
    const scanDue = this.report === undefined || performance.now() - this.lastScanAt >= this.opts.intervalMs * 0.9;
    try {
      if (this.admitted === undefined && !(await this.admit())) return 0;
      if (scanDue) await this.scan();
      const node = await this.deps.watcher.ready(this.opts.nodeReadTimeoutMs, this.stopper.signal);
      const outcome = await this.deps.publisher.publish(this.report as Report, node);
      this.logPublished(scanDue, outcome);
      this.failures = 0;
      this.publishedAt = performance.now();
      this.deps.heartbeat?.published();
      return jittered(this.opts.intervalMs, this.opts.random);
    } catch (err) {
      if (this.stopper.signal.aborted) return 0;
      this.failures += 1;
      const delay = retryDelay(err, this.failures, this.opts.backoff, this.opts.random);
      const what = err instanceof ScanFailed ? 'scan failed' : err instanceof AdmissionUndecided ? 'admission check failed' : 'publish failed';
      this.deps.log(`${what} (${describeError(err)}); attempt ${this.failures}, retrying in ${(delay / 1000).toFixed(1)} s`);
      return delay;
    }
  }

  /** Whether the agent may go on: the admission policies hold its token (or nothing asks; a test). */
  private async admit(): Promise<boolean> {
    if (!this.deps.admission) {
      this.admitted = true;
      return true;
    }
    let verdict = await this.askAdmission();
    // A policy created a moment ago takes a moment to apply (the server loads it, and its parameter):
    // asked again, 1 s then 2 s then 4 s later, before the agent gives up.
    for (let retry = 0; !verdict.held && retry < ADMISSION_RETRIES && !this.stopper.signal.aborted; retry++) {
      await this.sleep(ADMISSION_RETRY_MS * 2 ** retry);
      verdict = await this.askAdmission();
    }
    if (!verdict.held) {
      this.deps.log(verdict.reason);
      this.admitted = false;
      this.stop();
      return false;
    }
    for (const line of verdict.lines) this.deps.log(line);
    this.admitted = true;
    return true;
  }

  private async askAdmission(): Promise<{ held: true; lines: string[] } | { held: false; reason: string }> {
    try {
      return await (this.deps.admission as NonNullable<AgentDeps['admission']>)();
    } catch (err) {
      throw new AdmissionUndecided(describeError(err));
    }
  }

  private async scan(): Promise<void> {
    const started = performance.now();
    let report: Report;
    try {
      report = await this.deps.scan();
    } catch (err) {
      if (!this.stopper.signal.aborted) this.deps.onScanError?.();
      throw new ScanFailed((err as Error).message);
    }
    this.previous = this.report;
    this.report = report;
    this.lastScanAt = performance.now();
    this.scannedAt = (this.lastScanAt - started) / 1000;
    this.deps.onReport?.(this.report, this.scannedAt);
  }

  /** One line per cycle: the scan's score and changes with what was sent, or (a retry) only what was sent. */
  private logPublished(scanned: boolean, outcome: PublishOutcome): void {
    const report = this.report as Report;
    this.deps.log(scanned ? scanLine(report, this.previous, outcome, this.scannedAt) : publishLine(outcome));
  }

  private sleep(ms: number): Promise<void> {
    if (ms <= 0 || this.stopper.signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      const signal = this.stopper.signal;
      function done(): void {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        resolve();
      }
      signal.addEventListener('abort', done);
    });
  }
}
