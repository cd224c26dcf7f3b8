// Our own Node, kept current by a single ListWatch (field selector metadata.name=<node>): one LIST
// at start and after a 410, then a watch. No periodic GET. Errors restart it after a backoff.
import type { ListWatch, V1Node } from '@kubernetes/client-node';
import { DEFAULT_BACKOFF, retryDelay, type BackoffPolicy } from './backoff.ts';

export interface NodeSource {
  watchNode(name: string, onList: (found: boolean) => void): ListWatch<V1Node>;
}

type Waiter = { test: (node: V1Node | undefined) => boolean; resolve: () => void };

export class NodeWatcher {
  private readonly name: string;
  private readonly informer: ListWatch<V1Node>;
  private readonly policy: BackoffPolicy;
  private readonly log: (line: string) => void;
  private node: V1Node | undefined;
  private listed = false;
  private failures = 0;
  private stopped = false;
  private restartTimer: NodeJS.Timeout | undefined;
  private waiters: Waiter[] = [];
  private readonly listeners: ((node: V1Node | undefined) => void)[] = [];
  private readonly failureListeners: ((reason: string) => void)[] = [];
  lastError: unknown;

  constructor(source: NodeSource, name: string, log: (line: string) => void, policy: BackoffPolicy = DEFAULT_BACKOFF) {
    this.name = name;
    this.policy = policy;
    this.log = log;
    this.informer = source.watchNode(name, (found) => {
      this.failures = 0; // listed: the next failure backs off from the start again
      if (!found) this.markListed(false);
    });
    this.informer.on('add', (node) => this.seen(node));
    this.informer.on('update', (node) => this.seen(node));
    this.informer.on('delete', () => this.seen(undefined));
    this.informer.on('error', (err) => this.failed(err));
  }

  start(): void {
    this.stopped = false;
    void this.informer.start();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.restartTimer);
    await this.informer.stop();
  }

  /** The Node as last seen on the watch; undefined before the first LIST or if it does not exist. */
  current(): V1Node | undefined {
    return this.node;
  }

  /** Called with every version of the Node the watch delivers (undefined: listed, and it does not exist). */
  subscribe(listener: (node: V1Node | undefined) => void): void {
    this.listeners.push(listener);
  }

  /** Called with a readable reason whenever the LIST or watch fails. */
  onFailure(listener: (reason: string) => void): void {
    this.failureListeners.push(listener);
  }

  hasListed(): boolean {
    return this.listed;
  }

  /** Resolves with the Node once the first LIST has answered; throws a clear error on timeout or absence. */
  async ready(timeoutMs: number): Promise<V1Node> {
    if (!this.listed) await this.waitFor(() => this.listed, timeoutMs);
    if (!this.listed) {
      const why = this.lastError ? `: ${describeError(this.lastError)}` : '';
      throw new Error(`node ${this.name} not read from the API server yet${why}`);
    }
    if (this.node === undefined) {
      throw new Error(`node "${this.name}" does not exist; check --node-name or NODE_NAME (spec.nodeName via the downward API)`);
    }
    return this.node;
  }

  /** Wait until the watch delivers our own write, so the next diff sees it (bounded wait). */
  waitForResourceVersion(resourceVersion: string | undefined, timeoutMs: number): Promise<void> {
    if (resourceVersion === undefined) return Promise.resolve();
    return this.waitFor((node) => node?.metadata?.resourceVersion === resourceVersion, timeoutMs);
  }

  private waitFor(test: (node: V1Node | undefined) => boolean, timeoutMs: number): Promise<void> {
    if (test(this.node)) return Promise.resolve();
    return new Promise((resolve) => {
      const waiter: Waiter = { test, resolve: () => { clearTimeout(timer); resolve(); } };
      const timer = setTimeout(() => { this.waiters = this.waiters.filter((w) => w !== waiter); resolve(); }, timeoutMs);
      this.waiters.push(waiter);
    });
  }

  private seen(node: V1Node | undefined): void {
    if (node !== undefined && node.metadata?.name !== this.name) return;
    this.node = node;
    this.listed = true;
    this.failures = 0;
    this.lastError = undefined;
    this.notify();
  }

  /** A LIST that found no such Node sends no event; record the absence. */
  private markListed(found: boolean): void {
    if (!found) this.node = undefined;
    this.listed = true;
    this.notify();
  }

  private notify(): void {
    for (const listener of this.listeners) listener(this.node);
    const ready = this.waiters.filter((w) => w.test(this.node));
    this.waiters = this.waiters.filter((w) => !ready.includes(w));
    for (const w of ready) w.resolve();
  }

  private failed(err: unknown): void {
    this.lastError = err;
    if (this.stopped) return;
    for (const listener of this.failureListeners) listener(`cannot list or watch node ${this.name}: ${describeError(err)}`);
    this.failures += 1;
    const delay = retryDelay(err, this.failures, this.policy);
    this.log(`watch on node ${this.name} failed (${describeError(err)}); attempt ${this.failures}, retrying in ${(delay / 1000).toFixed(1)} s`);
    clearTimeout(this.restartTimer); // one restart pending at most, or two watches would run side by side
    this.restartTimer = setTimeout(() => { if (!this.stopped) void this.informer.start(); }, delay);
    this.restartTimer.unref();
  }
}

export function describeError(err: unknown): string {
  const e = err as { code?: unknown; statusCode?: unknown; message?: string; body?: unknown; cause?: { code?: string } };
  if (typeof e?.code === 'number') {
    let reason = '';
    try { reason = (JSON.parse(String(e.body)) as { message?: string }).message ?? ''; } catch { /* plain body */ }
    return `HTTP ${e.code}${reason ? `: ${reason}` : ''}`;
  }
  if (typeof e?.statusCode === 'number') return `HTTP ${e.statusCode}`;
  const cause = e?.cause?.code;
  return cause ? `cannot reach the API server: ${cause}` : (e?.message ?? String(err));
}
