// Our own Node, kept current by a single list-watch (field selector metadata.name=<node>): one LIST
// at start and after errors, then watches. No periodic GET. The Node the agent's own PATCH returned
// is adopted when it is newer than the watch's copy, so a silent or forbidden watch cannot make the
// agent diff against a stale Node and write the same patch every cycle.
import { describeError, type KubeError } from '../kube/errors.ts';
import type { Informer } from '../kube/informer.ts';
import { compareResourceVersions, type NodeObject } from '../kube/objects.ts';

/** onFailure: also re-tested after each failed LIST or watch. */
type Waiter = { test: () => boolean; resolve: () => void; onFailure: boolean };

export class NodeWatcher {
  private readonly name: string;
  private readonly informer: Informer<NodeObject>;
  private node: NodeObject | undefined;
  private listed = false;
  /** The server has answered a request of this watch (any HTTP status): it is reachable. */
  private answered = false;
  private stopped = false;
  private waiters: Waiter[] = [];
  private readonly listeners: ((node: NodeObject | undefined) => void)[] = [];
  private readonly failureListeners: ((reason: string) => void)[] = [];
  lastError: KubeError | undefined;

  constructor(informer: Informer<NodeObject>, name: string) {
    this.name = name;
    this.informer = informer;
    informer.on({
      added: (node) => this.seen(node),
      updated: (node) => this.seen(node),
      deleted: (node) => { if (node.metadata.name === this.name) this.set(undefined); },
      listed: (items) => { if (!items.some((n) => n.metadata.name === this.name)) this.set(undefined); },
      failed: (reason, err) => {
        this.lastError = err;
        if (!err.unreachable) this.answered = true;
        for (const listener of this.failureListeners) listener(reason);
        this.wake((w) => w.onFailure && w.test());
      },
    });
  }

  start(): void {
    this.stopped = false;
    this.informer.start();
  }

  /** Stops the watch; anyone waiting for the Node is released (ready() then throws). */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const w of this.waiters.splice(0)) w.resolve();
    await this.informer.stop();
  }

  /** The newest Node known (watch or own PATCH); undefined before the first LIST or if it does not exist. */
  current(): NodeObject | undefined {
    return this.node;
  }

  /** Called with every newer version of the Node (undefined: listed, and it does not exist). */
  subscribe(listener: (node: NodeObject | undefined) => void): void {
    this.listeners.push(listener);
  }

  /** Called with a readable reason whenever the LIST or watch fails. */
  onFailure(listener: (reason: string) => void): void {
    this.failureListeners.push(listener);
  }

  hasListed(): boolean {
    return this.listed;
  }

  /**
   * At start: resolves undefined as soon as the server answers (the LIST, or any HTTP error), or with
   * the error that shows it unreachable once `windowMs` is over (0: the first such failure decides).
   */
  async contact(windowMs: number, signal?: AbortSignal): Promise<KubeError | undefined> {
    const deadline = performance.now() + windowMs;
    const givenUp = (): boolean => this.lastError?.unreachable === true && !this.answered && performance.now() >= deadline;
    for (;;) {
      if (this.answered || this.listed || this.stopped || signal?.aborted) return undefined;
      if (givenUp()) return this.lastError;
      const left = deadline - performance.now();
      // Woken by the next answer or failure, or at the end of the window.
      await this.waitFor(() => this.answered || this.listed || givenUp(), left > 0 ? left : 60_000, signal, true);
    }
  }

  /** Resolves with the Node once the first LIST has answered; throws a clear error on timeout, absence or abort. */
  async ready(timeoutMs: number, signal?: AbortSignal): Promise<NodeObject> {
    if (!this.listed) await this.waitFor(() => this.listed, timeoutMs, signal);
    if (!this.listed) {
      const why = this.lastError ? `: ${describeError(this.lastError)}` : '';
      throw new Error(`node ${this.name} not read from the API server yet${why}`);
    }
    if (this.node === undefined) {
      throw new Error(`node "${this.name}" does not exist; check --node-name or NODE_NAME (spec.nodeName via the downward API)`);
    }
    return this.node;
  }

  /** The server's answer to our own write: newer than the watch's copy unless the watch already moved past it. */
  adopt(node: NodeObject): void {
    if (node.metadata?.name !== this.name) return;
    const order = compareResourceVersions(node.metadata.resourceVersion, this.node?.metadata.resourceVersion);
    if (this.node !== undefined && order !== undefined && order <= 0) return;
    this.set(node);
  }

  private waitFor(test: () => boolean, timeoutMs: number, signal?: AbortSignal, onFailure = false): Promise<void> {
    if (test() || this.stopped || signal?.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        this.waiters = this.waiters.filter((w) => w !== waiter);
        resolve();
      };
      const waiter: Waiter = { test, resolve: done, onFailure };
      const timer = setTimeout(done, timeoutMs);
      signal?.addEventListener('abort', done, { once: true });
      this.waiters.push(waiter);
    });
  }

  /** A version from the watch or a LIST; one older than what we hold (our own PATCH answer) is skipped. */
  private seen(node: NodeObject): void {
    if (node.metadata.name !== this.name) return;
    const order = compareResourceVersions(node.metadata.resourceVersion, this.node?.metadata.resourceVersion);
    this.lastError = undefined;
    if (order !== undefined && order < 0) {
      this.markListed();
      return;
    }
    this.set(node);
  }

  private set(node: NodeObject | undefined): void {
    this.node = node;
    this.markListed();
    for (const listener of this.listeners) listener(node);
  }

  private markListed(): void {
    this.listed = true;
    this.answered = true;
    this.wake((w) => w.test());
  }

  private wake(which: (w: Waiter) => boolean): void {
    const ready = this.waiters.filter(which);
    this.waiters = this.waiters.filter((w) => !ready.includes(w));
    for (const w of ready) w.resolve();
  }
}
