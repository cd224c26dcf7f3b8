// The agent's heartbeat (src/wire/heartbeat.ts): its Lease, renewed every --heartbeat period (+0–10 %
// jitter, so never more often) while the report on its Node is current, i.e. its last cycle
// succeeded within two intervals. The first renewal follows the first successful publish; before
// it one GET of the Lease tells when the agent last renewed, so a restart within a period writes
// nothing. Steady state: one merge PATCH per period, nothing else. A failed renewal is retried with
// the agents' backoff (at most one period apart); it never stops the agent.
import { type BackoffPolicy, DEFAULT_BACKOFF, delay, retryDelay } from '../kube/backoff.ts';
import { describeError, KubeError } from '../kube/errors.ts';
import type { KubeObject } from '../kube/objects.ts';
import { age, heartbeatLease, heartbeatSpec, readHeartbeat, renewalPatch } from '../wire/heartbeat.ts';

export interface LeaseApi {
  /** The Lease, or undefined when there is none (404). */
  getLease(namespace: string, name: string): Promise<KubeObject | undefined>;
  patchLease(namespace: string, name: string, patch: Record<string, unknown>): Promise<KubeObject>;
  createLease(namespace: string, lease: Record<string, unknown>): Promise<KubeObject>;
}

export interface HeartbeatOptions {
  api: LeaseApi;
  nodeName: string;
  namespace: string;
  periodMs: number;
  /** Whether the Node carries the agent's current report: only then is the heartbeat renewed. */
  current(): boolean;
  /** The Node's uid, for the Lease's owner reference (garbage-collected with the Node). */
  nodeUid(): string | undefined;
  log(line: string): void;
  onRenewed?(atMs: number): void;
  backoff?: BackoffPolicy;
  random?: () => number;
  now?: () => number;
}

export class Heartbeat {
  private readonly opts: HeartbeatOptions;
  private readonly stopper = new AbortController();
  private loop: Promise<void> | undefined;
  private wake: (() => void) | undefined;
  /** When the Lease was last renewed (wall clock, ms), as the agent knows it. */
  private renewedAt: number | undefined;
  /** Whether the Lease exists; undefined until known. */
  private exists: boolean | undefined;
  private failures = 0;
  /** After a failed renewal: how long until the next try. */
  private retryMs = 0;
  private lastProblem = '';
  private announced = false;

  constructor(opts: HeartbeatOptions) {
    this.opts = opts;
  }

  private get now(): number {
    return (this.opts.now ?? Date.now)();
  }

  private get where(): string {
    return `Lease ${this.opts.namespace}/${this.opts.nodeName}`;
  }

  /** After each successful publish: the first one starts the renewals; after a pause it renews at once when due. */
  published(): void {
    this.wake?.();
  }

  start(): void {
    this.loop ??= this.run().catch((err) => {
      if (!this.stopper.signal.aborted) this.opts.log(`heartbeat stopped: ${describeError(err)}`);
    });
  }

  async stop(): Promise<void> {
    this.stopper.abort();
    this.wake?.();
    await this.loop;
  }

  /** `agent --once`: one renewal after its publish, whatever the last one was. */
  async beatOnce(): Promise<boolean> {
    return this.renew();
  }

  private async run(): Promise<void> {
    await this.nextPublish();
    if (this.stopper.signal.aborted) return;
    await this.readLast();
    while (!this.stopper.signal.aborted) {
      await this.sleep(this.dueInMs());
      if (this.stopper.signal.aborted) return;
      if (!this.opts.current()) {
        this.problem('not renewed: the report on the Node is not current (its last scan or publish failed)');
        await this.nextPublish();
        continue;
      }
      if (!(await this.renew())) await this.sleep(Math.min(this.opts.periodMs, this.retryMs));
    }
  }

  /** Milliseconds until the next renewal: one period (+0–10 %) after the last one. */
  private dueInMs(): number {
    if (this.renewedAt === undefined) return 0;
    const period = this.opts.periodMs * (1 + 0.1 * (this.opts.random ?? Math.random)());
    return Math.max(0, this.renewedAt + period - this.now);
  }

  /** One GET at start: when this node's agent last renewed (another process of it, before a restart). */
  private async readLast(): Promise<void> {
    try {
      const lease = await this.opts.api.getLease(this.opts.namespace, this.opts.nodeName);
      this.exists = lease !== undefined;
      const read = lease === undefined ? undefined : readHeartbeat(lease, this.opts.nodeName);
      if (read?.ok && read.heartbeat.renewedAtMs <= this.now) this.renewedAt = read.heartbeat.renewedAtMs;
    } catch (err) {
      if (this.stopper.signal.aborted) return;
      this.problem(`could not read its ${this.where} (${describeError(err)}); renewing it now`);
    }
  }

  /** PATCH the Lease; create it when there is none. True when renewed. */
  private async renew(): Promise<boolean> {
    const at = this.now;
    const spec = heartbeatSpec(this.opts.nodeName, this.opts.periodMs, at);
    try {
      if (this.exists !== false) {
        try {
          await this.opts.api.patchLease(this.opts.namespace, this.opts.nodeName, renewalPatch(spec));
        } catch (err) {
          if (!(err instanceof KubeError && err.notFound)) throw err;
          this.exists = false;
        }
      }
      if (this.exists === false) {
        await this.opts.api.createLease(this.opts.namespace, heartbeatLease(this.opts.nodeName, this.opts.namespace, spec, this.opts.nodeUid()));
      }
    } catch (err) {
      // Someone (another process of this agent) created it meanwhile: patched at the next try.
      if (err instanceof KubeError && err.conflict) this.exists = true;
      if (this.stopper.signal.aborted) return false;
      this.failures += 1;
      this.retryMs = retryDelay(err, this.failures, this.opts.backoff ?? DEFAULT_BACKOFF, this.opts.random);
      this.problem(`renewing its ${this.where} failed (${describeError(err)}); attempt ${this.failures}`);
      return false;
    }
    this.exists = true;
    this.renewedAt = at;
    this.failures = 0;
    this.opts.onRenewed?.(at);
    if (!this.announced || this.lastProblem !== '') {
      this.opts.log(`heartbeat: ${this.where} renewed, every ${age(this.opts.periodMs / 1000)} (stale after ${age(spec.leaseDurationSeconds)})`);
    }
    this.announced = true;
    this.lastProblem = '';
    return true;
  }

  /** Logged once per different problem, not once per attempt. */
  private problem(text: string): void {
    const key = text.replace(/; attempt \d+$/, '');
    if (key !== this.lastProblem) this.opts.log(`heartbeat ${text}`);
    this.lastProblem = key;
  }

  private nextPublish(): Promise<void> {
    if (this.stopper.signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      this.wake = () => { this.wake = undefined; resolve(); };
    });
  }

  private async sleep(ms: number): Promise<void> {
    if (ms <= 0) return;
    await delay(ms, this.stopper.signal).catch(() => {});
  }
}
