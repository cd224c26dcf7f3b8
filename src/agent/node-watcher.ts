// Our own Node, kept current by a single list-watch (field selector metadata.name=<node>): one LIST
// at start and after errors, then watches. No periodic GET. The Node the agent's own PATCH returned
// is adopted when it is newer than the watch's copy, so a silent or forbidden watch cannot make the
// agent diff against a stale Node and write the same patch every cycle.
import { describeError, type KubeError } from '../kube/errors.ts';
import type { Informer } from '../kube/informer.ts';
import { compareResourceVersions, type NodeObject } from '../kube/objects.ts';

type Waiter = { test: () => boolean; resolve: () => void };

export class NodeWatcher {
  private readonly name: string;
  private readonly informer: Informer<NodeObject>;
  private node: NodeObject | undefined;
  private listed = false;
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
        for (const listener of this.failureListeners) listener(reason);
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

  private waitFor(test: () => boolean, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    if (test() || this.stopped || signal?.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        this.waiters = this.waiters.filter((w) => w !== waiter);
        resolve();
      };
      const waiter: Waiter = { test, resolve: done };
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
    const ready = this.waiters.filter((w) => w.test());
    this.waiters = this.waiters.filter((w) => !ready.includes(w));
    for (const w of ready) w.resolve();
  }
}
