// A list-watch kept running: one LIST, then watches resumed from the last resourceVersion (each
// ended by the server after its timeout, then reopened at once); a LIST again only after an error.
// Errors stay inside the informer: each is logged, counted (with a bounded reason) and followed by
// a LIST after a backoff (a 429's Retry-After wins), so a bad line or a dead proxy never reaches the
// process. A handler that throws counts as an error of this informer too. stop() aborts the request
// in flight and the backoff wait; nothing is reopened after it.
import { DEFAULT_BACKOFF, delay, retryDelay, type BackoffPolicy } from './backoff.ts';
import type { KubeClient } from './client.ts';
import { KubeError, describeError } from './errors.ts';
import { AbortReason } from './http.ts';
import { objectKey, type KubeList, type KubeObject, type WatchEvent } from './objects.ts';
import type { ObjectShape } from './projection.ts';
import type { ResourceRef } from './resources.ts';

/** Bounded label values for a watch-errors metric. */
export type WatchErrorReason =
  | 'malformed' | 'expired' | 'throttled' | 'unauthorized' | 'forbidden' | 'not-found' | 'client-error'
  | 'server-error' | 'timeout' | 'too-large' | 'network' | 'handler';

/** A paged LIST (`pageBytes`) starts small and never asks for more items than this per page. */
const FIRST_PAGE_ITEMS = 10;
const MAX_PAGE_ITEMS = 500;

export interface InformerOptions {
  /** A short, fixed name for metrics: "node", "pods". */
  name: string;
  /** What it watches, for log lines: "node worker-1", "pods on node worker-1". */
  what: string;
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  metadataOnly?: boolean;
  /** Keep only these fields of each object, decoded from the bytes (src/kube/projection.ts). */
  project?: ObjectShape;
  /**
   * LIST in pages of about this many bytes (the latest state: resourceVersion=0, the API server's
   * cache, would ignore the limit and answer everything at once).
   */
  pageBytes?: number;
  /** More objects than this fail the list or watch ('too-large'): the consumer says why it knows nothing. */
  maxObjects?: number;
  backoff?: BackoffPolicy;
  log?(line: string): void;
  /** Every failure with its reason (metrics). */
  onError?(reason: WatchErrorReason, err: KubeError): void;
  random?(): number;
}

export interface InformerHandlers<T extends KubeObject> {
  added?(obj: T): void;
  updated?(obj: T, old: T): void;
  deleted?(obj: T): void;
  /** After each LIST was applied to the cache (its adds, updates and deletes delivered first). */
  listed?(items: T[]): void;
  /** After each failure, with a readable sentence. */
  failed?(reason: string, err: KubeError): void;
}

export class Informer<T extends KubeObject> {
  private readonly client: KubeClient;
  private readonly ref: ResourceRef;
  private readonly opts: InformerOptions;
  private readonly handlers: InformerHandlers<T>[] = [];
  private cache = new Map<string, T>();
  private controller: AbortController | undefined;
  private running: Promise<void> | undefined;
  private listedOnce = false;
  /** Set when a handler threw: the failure is the consumer's, counted as 'handler'. */
  private handlerThrew = false;
  /** After a handler threw, the next LIST delivers every object again (the consumer may have missed some). */
  private redeliver = false;

  constructor(client: KubeClient, ref: ResourceRef, opts: InformerOptions) {
    this.client = client;
    this.ref = ref;
    this.opts = opts;
  }

  on(handlers: InformerHandlers<T>): this {
    this.handlers.push(handlers);
    return this;
  }

  get hasListed(): boolean {
    return this.listedOnce;
  }

  get(key: string): T | undefined {
    return this.cache.get(key);
  }

  items(): T[] {
    return [...this.cache.values()];
  }

  start(): void {
    if (this.running) return;
    const controller = new AbortController();
    this.controller = controller;
    this.running = this.run(controller.signal).catch((err) => this.opts.log?.(`${this.opts.what}: internal error: ${describeError(err)}`));
  }

  async stop(): Promise<void> {
    this.controller?.abort(new AbortReason('stopped', `stopped watching ${this.opts.what}`));
    await this.running;
    this.running = undefined;
  }

  private async run(signal: AbortSignal): Promise<void> {
    let failures = 0;
    let listFrom: string | undefined = '0';
    let lastVersion: string | undefined;
    while (!signal.aborted) {
      try {
        const { namespace, labelSelector, fieldSelector, metadataOnly, project } = this.opts;
        const selectors = { namespace, labelSelector, fieldSelector, metadataOnly, project };
        const list = await this.listAll(listFrom, signal);
        this.replace(list.items);
        lastVersion = list.resourceVersion || lastVersion;
        for (;;) {
          const end = await this.client.watch<T>(this.ref, { ...selectors, resourceVersion: lastVersion, signal }, (event) => {
            this.apply(event);
            failures = 0;
          });
          lastVersion = end.resourceVersion ?? lastVersion;
          failures = 0;
        }
      } catch (err) {
        if (signal.aborted) return;
        const error = asKubeError(err, this.ref);
        failures += 1;
        // After 410 the versions we know are gone: the next LIST reads the latest state; otherwise a
        // LIST not older than what was seen (served from the API server's cache).
        listFrom = error.expired ? undefined : lastVersion ?? '0';
        const wait = retryDelay(error, failures, this.opts.backoff ?? DEFAULT_BACKOFF, this.opts.random);
        this.failed(error, this.handlerThrew ? 'handler' : reasonOf(error), wait);
        this.handlerThrew = false;
        await delay(wait, signal).catch(() => {});
      }
    }
  }

  private async listAll(listFrom: string | undefined, signal: AbortSignal): Promise<KubeList<T>> {
    const { namespace, labelSelector, fieldSelector, metadataOnly, project, pageBytes } = this.opts;
    const paging = pageBytes === undefined ? { resourceVersion: listFrom } : { limit: MAX_PAGE_ITEMS, firstLimit: FIRST_PAGE_ITEMS, pageBytes };
    const items: T[] = [];
    const { resourceVersion } = await this.client.listPages<T>(this.ref, { namespace, labelSelector, fieldSelector, metadataOnly, project, signal, ...paging }, (page) => {
      items.push(...page.items);
      if (items.length > (this.opts.maxObjects ?? Infinity)) throw this.tooMany('list');
    });
    return { resourceVersion, items };
  }

  private tooMany(verb: 'list' | 'watch'): KubeError {
    return new KubeError({ verb, target: this.ref.plural, code: 'too-large', detail: `more than ${this.opts.maxObjects} ${this.opts.what}` });
  }

  private failed(error: KubeError, reason: WatchErrorReason, waitMs: number): void {
    this.opts.onError?.(reason, error);
    const sentence = `cannot list or watch ${this.opts.what}: ${error.summary}`;
    for (const h of this.handlers) {
      try { h.failed?.(sentence, error); } catch { /* a failure listener cannot make things worse */ }
    }
    this.opts.log?.(`watch on ${this.opts.what} failed (${error.summary}); retrying in ${(waitMs / 1000).toFixed(1)} s`);
  }

  /** A fresh LIST: deliver what changed against the cache (deletes, adds, updates), then `listed`. */
  private replace(items: T[]): void {
    const next = new Map(items.map((item) => [objectKey(item), item]));
    const old = this.cache;
    const again = this.redeliver;
    this.redeliver = false;
    this.cache = next;
    this.deliver(() => {
      for (const [key, obj] of old) if (!next.has(key)) for (const h of this.handlers) h.deleted?.(obj);
      for (const [key, obj] of next) {
        const before = old.get(key);
        if (before === undefined) for (const h of this.handlers) h.added?.(obj);
        else if (again || before.metadata.resourceVersion !== obj.metadata.resourceVersion) for (const h of this.handlers) h.updated?.(obj, before);
      }
      this.listedOnce = true;
      for (const h of this.handlers) h.listed?.(items);
    });
  }

  private apply(event: WatchEvent<T>): void {
    if (event.type === 'BOOKMARK') return;
    const key = objectKey(event.object);
    const before = this.cache.get(key);
    if (event.type === 'DELETED') {
      this.cache.delete(key);
      this.deliver(() => { for (const h of this.handlers) h.deleted?.(event.object); });
      return;
    }
    if (before === undefined && this.cache.size >= (this.opts.maxObjects ?? Infinity)) throw this.tooMany('watch');
    this.cache.set(key, event.object);
    this.deliver(() => {
      for (const h of this.handlers) {
        if (before === undefined) h.added?.(event.object);
        else h.updated?.(event.object, before);
      }
    });
  }

  private deliver(run: () => void): void {
    try {
      run();
    } catch (err) {
      this.handlerThrew = true;
      this.redeliver = true;
      throw new Error(`a handler of ${this.opts.what} threw: ${describeError(err)}`);
    }
  }
}

function asKubeError(err: unknown, ref: ResourceRef): KubeError {
  if (err instanceof KubeError) return err;
  return new KubeError({ verb: 'watch', target: ref.plural, code: 'error', detail: describeError(err) });
}

export function reasonOf(error: KubeError): WatchErrorReason {
  if (error.code === 'malformed') return 'malformed';
  if (error.code === 'too-large') return 'too-large';
  if (error.code === 'timeout') return 'timeout';
  if (error.expired) return 'expired';
  const status = error.status;
  if (status === undefined) return 'network';
  if (status === 429) return 'throttled';
  if (status === 401) return 'unauthorized';
  if (status === 403) return 'forbidden';
  if (status === 404) return 'not-found';
  return status >= 500 ? 'server-error' : 'client-error';
}
