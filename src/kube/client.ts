// The project's one Kubernetes client: get, list (paginated, metadata-only, selectors), watch,
// create, merge-patch, delete and pod-log reads over node:http/node:https with the credentials of a
// kubeconfig or the pod's service account. Every request passes the client's token bucket, has a
// deadline and an AbortSignal, is counted (requests, bytes received), and comes back as JSON decoded
// into plain objects that passed validation, or as a KubeError naming the verb, the resource and why.
// stop() aborts everything in flight (writes get a short grace) and refuses new requests.
import type http from 'node:http';
import { TokenBucket } from './backoff.ts';
import { configSource, loadKubeConfig, type ConfigSource, type LoadedConfig } from './config.ts';
import { CredentialError, Credentials } from './credentials.ts';
import { Malformed, decodeList, decodeObject, decodeWatchLine, statusFromBody } from './decode.ts';
import { ContinueExpired, KubeError, describeTarget, parseRetryAfter, type Verb } from './errors.ts';
import { AbortReason, TooLarge, readBody, readLines, send } from './http.ts';
import type { KubeList, KubeObject, WatchEvent } from './objects.ts';
import { resourcePath, type ResourceRef } from './resources.ts';

export interface ClientOptions {
  /** Client-side rate limit shared by every request; default DEFAULT_QPS / DEFAULT_BURST. */
  limiter?: TokenBucket;
  /** Deadline of one request (a list page, a patch, a log read); for a watch, until its headers arrive. */
  timeoutMs?: number;
  /** Cap on one response body (a list page, a log); bigger: 'too-large'. */
  maxResponseBytes?: number;
  /** Cap on one watch line (one event). */
  maxWatchLineBytes?: number;
  /** A watch silent this long past its timeoutSeconds is aborted (a dead proxy); default 60 s. */
  watchIdleGraceMs?: number;
  userAgent?: string;
  /** Called once per request when it ends (for a watch: when the stream ends). */
  onRequest?(record: RequestRecord): void;
}

export interface RequestRecord {
  verb: Verb;
  /** plural[.group], e.g. "pods", "csidrivers.storage.k8s.io". */
  resource: string;
  /** HTTP status ("200"), or the KubeError code ("timeout", "ECONNREFUSED", …). */
  code: string;
  bytes: number;
}

export interface ClientStats {
  requests: number;
  bytesReceived: number;
}

interface Where {
  namespace?: string;
  /** Per call: overrides the client's deadline. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

export interface ListOptions extends Where {
  labelSelector?: string;
  fieldSelector?: string;
  /** '0': any version the API server has cached (cheap); unset: the latest (a consistent read). */
  resourceVersion?: string;
  resourceVersionMatch?: 'NotOlderThan' | 'Exact';
  /** Page size; the client follows `continue` until the list is complete. */
  limit?: number;
  /** Only apiVersion, kind and metadata of each item (PartialObjectMetadataList): far less to read. */
  metadataOnly?: boolean;
}

export interface WatchOptions extends Where {
  labelSelector?: string;
  fieldSelector?: string;
  /** Start after this version (from a list or the last event); unset: from now, after synthetic ADDED events. */
  resourceVersion?: string;
  /**
   * Server-side end of the watch; default a random 30–60 min (what kube-apiserver picks by itself),
   * so a quiet watch costs about one request per 45 min and renewals of many agents spread out.
   */
  timeoutSeconds?: number;
  metadataOnly?: boolean;
}

export interface LogOptions extends Where {
  container?: string;
  tailLines?: number;
  limitBytes?: number;
  sinceSeconds?: number;
  timestamps?: boolean;
  previous?: boolean;
}

export interface DeleteOptions extends Where {
  gracePeriodSeconds?: number;
  propagationPolicy?: 'Foreground' | 'Background' | 'Orphan';
}

/** Documented defaults: client-go's 5 QPS / burst 10. The agent passes its own, lower limit. */
export const DEFAULT_QPS = 5;
export const DEFAULT_BURST = 10;
export const DEFAULT_TIMEOUT_MS = 30_000;
export const DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024 * 1024;
/** etcd refuses objects over 1.5 MiB; their JSON is larger, but not this large. */
export const DEFAULT_MAX_WATCH_LINE_BYTES = 8 * 1024 * 1024;
const MAX_ERROR_BODY_BYTES = 64 * 1024;
/** A watch that sent nothing for this long past its server-side timeout is dead (a silent proxy): abort it. */
const WATCH_IDLE_GRACE_MS = 60_000;
const JSON_TYPE = 'application/json';
const METADATA_LIST = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json';
const METADATA_OBJECT = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json';

type Query = Record<string, string | number | boolean | undefined>;

interface Spec {
  verb: Verb;
  ref: ResourceRef;
  method: string;
  namespace?: string;
  name?: string;
  subresource?: string;
  query?: Query;
  body?: unknown;
  contentType?: string;
  accept?: string;
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Writes get the stop grace; reads and watches are aborted at once. */
  write?: boolean;
}

interface Open {
  res: http.IncomingMessage;
  signal: AbortSignal;
  /** Re-arm or clear the deadline (a watch clears it once its headers arrived). */
  deadline(ms: number | undefined, message?: string): void;
  close(): void;
}

export class KubeClient {
  private readonly credentials: Credentials;
  private readonly limiter: TokenBucket;
  private readonly opts: ClientOptions;
  private readonly inflight = new Map<AbortController, { write: boolean }>();
  private stopping: Promise<void> | undefined;
  /** Set when the stop grace is over: writes are refused too. */
  private closed = false;
  private readonly counters: ClientStats = { requests: 0, bytesReceived: 0 };

  /** From a kubeconfig path, or the pod's service account when undefined (throws KubeConfigError). */
  static fromKubeconfig(kubeconfig: string | undefined, opts: ClientOptions = {}, env: NodeJS.ProcessEnv = process.env): KubeClient {
    return new KubeClient(loadKubeConfig(configSource(kubeconfig, env)), opts);
  }

  static fromSource(source: ConfigSource, opts: ClientOptions = {}): KubeClient {
    return new KubeClient(loadKubeConfig(source), opts);
  }

  constructor(config: LoadedConfig, opts: ClientOptions = {}) {
    this.credentials = new Credentials(config);
    this.limiter = opts.limiter ?? new TokenBucket(DEFAULT_QPS, DEFAULT_BURST);
    this.opts = opts;
  }

  get server(): URL {
    return this.credentials.server;
  }

  /** Requests sent and body bytes received so far (watch streams included). */
  get stats(): ClientStats {
    return { ...this.counters };
  }

  get stopped(): boolean {
    return this.stopping !== undefined;
  }

  get<T extends KubeObject>(ref: ResourceRef, name: string, opts: Where & { metadataOnly?: boolean } = {}): Promise<T> {
    return this.json('get', { verb: 'get', ref, method: 'GET', name, ...where(opts), ...(opts.metadataOnly ? { accept: METADATA_OBJECT } : {}) },
      (text) => decodeObject<T>(text));
  }

  /** The whole list (following `continue` when `limit` is set). */
  async list<T extends KubeObject>(ref: ResourceRef, opts: ListOptions = {}): Promise<KubeList<T>> {
    const items: T[] = [];
    const { resourceVersion } = await this.listPages<T>(ref, opts, (page) => { items.push(...page.items); });
    return { resourceVersion, items };
  }

  /**
   * A list page by page: each page is handed to onPage (awaited) and then dropped, so memory holds
   * one page. A 410 on a continue token throws ContinueExpired: restart from the first page.
   */
  async listPages<T extends KubeObject>(ref: ResourceRef, opts: ListOptions, onPage: (page: KubeList<T>) => void | Promise<void>): Promise<{ resourceVersion: string; pages: number; items: number }> {
    let token: string | undefined;
    let pages = 0;
    let count = 0;
    let resourceVersion = '';
    do {
      const query: Query = {
        labelSelector: opts.labelSelector, fieldSelector: opts.fieldSelector, limit: opts.limit, continue: token,
        ...(token === undefined ? { resourceVersion: opts.resourceVersion, resourceVersionMatch: opts.resourceVersionMatch } : {}),
      };
      const spec: Spec = { verb: 'list', ref, method: 'GET', query, ...where(opts), ...(opts.metadataOnly ? { accept: METADATA_LIST } : {}) };
      let page;
      try {
        page = await this.json('list', spec, (text) => decodeList<T>(text));
      } catch (err) {
        if (token !== undefined && err instanceof KubeError && err.expired) {
          throw new ContinueExpired({ verb: 'list', target: err.target, code: err.code, status: err.status, reason: err.reason, detail: `continue token expired, list again from the start (${err.detail})` });
        }
        throw err;
      }
      pages += 1;
      count += page.items.length;
      resourceVersion = page.resourceVersion;
      token = page.continue;
      await onPage({ resourceVersion: page.resourceVersion, items: page.items });
    } while (token);
    return { resourceVersion, pages, items: count };
  }

  /** Create; the response may be an object without a name (a review), so only its shape is checked. */
  create<T extends KubeObject>(ref: ResourceRef, body: KubeObject | Record<string, unknown>, opts: Where = {}): Promise<T> {
    return this.json('create', { verb: 'create', ref, method: 'POST', body, write: true, ...where(opts) }, (text) => decodeObject<T>(text, false));
  }

  /** JSON merge patch (RFC 7386), of the object or a subresource ("status"). */
  patch<T extends KubeObject>(ref: ResourceRef, name: string, patch: Record<string, unknown>, opts: Where & { subresource?: string } = {}): Promise<T> {
    return this.json('patch', {
      verb: 'patch', ref, method: 'PATCH', name, body: patch, contentType: 'application/merge-patch+json', write: true,
      ...(opts.subresource ? { subresource: opts.subresource } : {}), ...where(opts),
    }, (text) => decodeObject<T>(text));
  }

  async delete(ref: ResourceRef, name: string, opts: DeleteOptions = {}): Promise<void> {
    await this.json('delete', {
      verb: 'delete', ref, method: 'DELETE', name, write: true, ...where(opts),
      query: { gracePeriodSeconds: opts.gracePeriodSeconds, propagationPolicy: opts.propagationPolicy },
    }, () => undefined);
  }

  /** A container's log as text, bounded by the server (tailLines, limitBytes, sinceSeconds) and by this client's cap. */
  readLog(namespace: string, pod: string, opts: LogOptions = {}): Promise<string> {
    const { container, tailLines, limitBytes, sinceSeconds, timestamps, previous } = opts;
    return this.text({
      verb: 'log', ref: PODS_FOR_LOGS, method: 'GET', namespace, name: pod, subresource: 'log', accept: 'text/plain, */*',
      query: { container, tailLines, limitBytes, sinceSeconds, timestamps, previous }, timeoutMs: opts.timeoutMs, signal: opts.signal,
    }, limitBytes === undefined ? undefined : limitBytes + 64 * 1024);
  }

  /**
   * One watch request: onEvent gets every validated event in order. Resolves with the last
   * resourceVersion seen when the server ends the stream; rejects with a KubeError on an HTTP error,
   * an ERROR event (410 Expired: list again), a malformed line, silence past the timeout, or abort.
   */
  async watch<T extends KubeObject>(ref: ResourceRef, opts: WatchOptions, onEvent: (event: WatchEvent<T>) => void): Promise<{ resourceVersion: string | undefined }> {
    const timeoutSeconds = opts.timeoutSeconds ?? Math.round(1800 * (1 + Math.random()));
    const spec: Spec = {
      verb: 'watch', ref, method: 'GET', ...where(opts), ...(opts.metadataOnly ? { accept: METADATA_OBJECT } : {}),
      query: {
        watch: true, allowWatchBookmarks: true, timeoutSeconds,
        labelSelector: opts.labelSelector, fieldSelector: opts.fieldSelector, resourceVersion: opts.resourceVersion,
      },
    };
    let last = opts.resourceVersion;
    let bytes = 0;
    let code = '200';
    const open = await this.open(spec);
    try {
      await this.failOnStatus(spec, open);
      const idleMs = timeoutSeconds * 1000 + (this.opts.watchIdleGraceMs ?? WATCH_IDLE_GRACE_MS);
      const silent = `watch sent nothing for ${Math.round(idleMs / 1000)} s`;
      open.deadline(idleMs, silent);
      open.res.on('data', (chunk: Buffer) => { bytes += chunk.length; this.counters.bytesReceived += chunk.length; open.deadline(idleMs, silent); });
      await readLines(open.res, this.opts.maxWatchLineBytes ?? DEFAULT_MAX_WATCH_LINE_BYTES, open.signal, (line) => {
        const decoded = decodeWatchLine<T>(line);
        if ('error' in decoded) {
          const { code: status, reason, message } = decoded.error;
          throw new KubeError({ verb: 'watch', target: targetOf(spec), code: String(status), status, reason, detail: message ?? '' });
        }
        last = decoded.event.object.metadata?.resourceVersion ?? last;
        onEvent(decoded.event);
      });
      return { resourceVersion: last };
    } catch (err) {
      const error = this.toKubeError(err, spec);
      code = error.code;
      throw error;
    } finally {
      open.close();
      this.count(spec, code, bytes);
    }
  }

  /**
   * Abort every request in flight and refuse new ones. Writes in flight (and writes started during
   * the grace) get `graceMs` to finish: a publish that is nearly done completes.
   */
  stop(graceMs = 0): Promise<void> {
    this.stopping ??= this.shutdown(graceMs);
    return this.stopping;
  }

  private async shutdown(graceMs: number): Promise<void> {
    const stopped = new AbortReason('stopped', 'stopped: the client is shutting down');
    for (const [controller, { write }] of this.inflight) if (!write) controller.abort(stopped);
    const deadline = performance.now() + graceMs;
    while ([...this.inflight.values()].some((r) => r.write) && performance.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    this.closed = true;
    for (const controller of this.inflight.keys()) controller.abort(stopped);
    this.credentials.destroy();
  }

  private async json<T>(verb: Verb, spec: Spec, decode: (text: string) => T): Promise<T> {
    const text = await this.text({ ...spec, verb, accept: spec.accept ?? JSON_TYPE });
    try {
      return decode(text);
    } catch (err) {
      throw this.toKubeError(err, spec);
    }
  }

  /** A request whose whole body is read (bounded); non-2xx becomes a KubeError with the server's Status. */
  private async text(spec: Spec, maxBytes?: number): Promise<string> {
    let code = 'error';
    let bytes = 0;
    let open: Open | undefined;
    try {
      open = await this.open(spec);
      await this.failOnStatus(spec, open);
      const body = await readBody(open.res, maxBytes ?? this.opts.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES, open.signal);
      bytes = body.length;
      this.counters.bytesReceived += bytes;
      code = String(open.res.statusCode);
      return body.toString('utf8');
    } catch (err) {
      const error = this.toKubeError(err, spec);
      code = error.code;
      throw error;
    } finally {
      open?.close();
      this.count(spec, code, bytes);
    }
  }

  /** Throws a KubeError for a non-2xx status (reading at most a small error body). */
  private async failOnStatus(spec: Spec, open: Open): Promise<void> {
    const status = open.res.statusCode ?? 0;
    if (status >= 200 && status < 300) return;
    const body = await readBody(open.res, MAX_ERROR_BODY_BYTES, open.signal).catch(() => Buffer.alloc(0));
    this.counters.bytesReceived += body.length;
    const info = statusFromBody(body.toString('utf8'));
    const retryAfterMs = parseRetryAfter(open.res.headers['retry-after']);
    throw new KubeError({
      verb: spec.verb, target: targetOf(spec), code: String(status), status, reason: info.reason,
      detail: info.message ?? open.res.statusMessage ?? '', ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
    });
  }

  /** Sends the request (after the rate limiter), retrying once with reloaded credentials after a 401. */
  private async open(spec: Spec, retried = false): Promise<Open> {
    if (this.stopping && (!spec.write || this.closed)) throw this.stoppedError(spec);
    const controller = new AbortController();
    const entry = { write: spec.write === true };
    this.inflight.set(controller, entry);
    const unlink = link(controller, spec.signal);
    let timer: NodeJS.Timeout | undefined;
    const deadline = (ms: number | undefined, message?: string): void => {
      clearTimeout(timer);
      if (ms !== undefined) timer = setTimeout(() => controller.abort(new AbortReason('timeout', message ?? `${spec.verb} timed out after ${ms / 1000} s`)), ms);
    };
    const close = (): void => { clearTimeout(timer); unlink(); this.inflight.delete(controller); };
    deadline(spec.timeoutMs ?? this.opts.timeoutMs ?? DEFAULT_TIMEOUT_MS);
    try {
      await this.limiter.take(controller.signal);
      const auth = await this.credentials.apply();
      const body = spec.body === undefined ? undefined : Buffer.from(JSON.stringify(spec.body));
      this.counters.requests += 1;
      const res = await send({
        method: spec.method, url: this.url(spec), agent: auth.agent, signal: controller.signal, ...(body ? { body } : {}),
        headers: {
          ...auth.headers, Accept: spec.accept ?? JSON_TYPE, 'User-Agent': this.opts.userAgent ?? 'node-tuning-advisor',
          ...(body ? { 'Content-Type': spec.contentType ?? JSON_TYPE } : {}),
        },
      });
      if (res.statusCode === 401 && !retried && this.credentials.refresh()) {
        res.destroy();
        close();
        this.count(spec, '401', 0);
        return this.open(spec, true);
      }
      if (spec.verb === 'watch') deadline(undefined);
      return { res, signal: controller.signal, deadline, close };
    } catch (err) {
      close();
      throw err;
    }
  }

  private url(spec: Spec): URL {
    let path: string;
    try {
      path = resourcePath(spec.ref, { namespace: spec.namespace, name: spec.name, subresource: spec.subresource });
    } catch (err) {
      throw new KubeError({ verb: spec.verb, target: targetOf(spec), code: 'invalid', detail: (err as Error).message });
    }
    const base = this.server;
    const url = new URL(`${base.pathname.replace(/\/$/, '')}${path}`, base);
    for (const [key, value] of Object.entries(spec.query ?? {})) {
      if (value !== undefined && value !== '') url.searchParams.set(key, String(value));
    }
    return url;
  }

  private toKubeError(err: unknown, spec: Spec): KubeError {
    if (err instanceof KubeError) return err;
    const target = targetOf(spec);
    const { verb } = spec;
    if (err instanceof AbortReason) return new KubeError({ verb, target, code: err.code, detail: err.message });
    if (err instanceof TooLarge) return new KubeError({ verb, target, code: 'too-large', detail: err.message });
    if (err instanceof Malformed) return new KubeError({ verb, target, code: 'malformed', detail: `malformed ${err.message}` });
    if (err instanceof CredentialError) return new KubeError({ verb, target, code: 'credentials', detail: err.message });
    const code = (err as { code?: unknown })?.code;
    if (typeof code === 'string' && /^[A-Z][A-Z0-9_]+$/.test(code)) return new KubeError({ verb, target, code, detail: code });
    return new KubeError({ verb, target, code: 'error', detail: String((err as Error)?.message ?? err) });
  }

  private stoppedError(spec: Spec): KubeError {
    return new KubeError({ verb: spec.verb, target: targetOf(spec), code: 'stopped', detail: 'stopped: the client is shutting down' });
  }

  private count(spec: Spec, code: string, bytes: number): void {
    const resource = spec.ref.group ? `${spec.ref.plural}.${spec.ref.group}` : spec.ref.plural;
    this.opts.onRequest?.({ verb: spec.verb, resource: spec.verb === 'log' ? 'pods/log' : resource, code, bytes });
  }
}

const PODS_FOR_LOGS: ResourceRef = { group: '', version: 'v1', plural: 'pods', kind: 'Pod', namespaced: true };

function where(opts: Where): Pick<Spec, 'namespace' | 'timeoutMs' | 'signal'> {
  return {
    ...(opts.namespace !== undefined ? { namespace: opts.namespace } : {}),
    ...(opts.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {}),
    ...(opts.signal !== undefined ? { signal: opts.signal } : {}),
  };
}

function targetOf(spec: Spec): string {
  return describeTarget(spec.ref, spec.ref.namespaced ? spec.namespace : undefined, spec.name, spec.subresource);
}

/** Abort `controller` when `parent` aborts; returns the unlink. */
function link(controller: AbortController, parent: AbortSignal | undefined): () => void {
  if (!parent) return () => {};
  const onAbort = (): void => controller.abort(parent.reason instanceof AbortReason ? parent.reason : new AbortReason('stopped', 'aborted by the caller'));
  if (parent.aborted) onAbort();
  else parent.addEventListener('abort', onAbort, { once: true });
  return () => parent.removeEventListener('abort', onAbort);
}
