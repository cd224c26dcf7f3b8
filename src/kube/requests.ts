// The request engine under KubeClient: one request from rate limiter to decoded body. It applies
// the credentials, gives every request a deadline and an AbortController (linked to the caller's
// signal), reads bodies within caps, turns every failure into a KubeError, counts requests and
// bytes, retries once after a 401 with reloaded credentials, and on stop() aborts what is in flight.
import type http from 'node:http';
import { TokenBucket } from './backoff.ts';
import type { LoadedConfig } from './config.ts';
import { CredentialError, Credentials } from './credentials.ts';
import { statusFromBody } from './decode.ts';
import { Malformed } from './objects.ts';
import { KubeError, describeTarget, parseRetryAfter, type Verb } from './errors.ts';
import { AbortReason, ConnectTimeout, TooLarge, readBody, send } from './http.ts';
import { resourceName, resourcePath, type ResourceRef } from './resources.ts';

export interface ClientOptions {
  /** Client-side rate limit shared by every request; default DEFAULT_QPS / DEFAULT_BURST. */
  limiter?: TokenBucket;
  /** Deadline of one request (a list page, a patch, a log read); for a watch, until its headers arrive. */
  timeoutMs?: number;
  /** A new connection (TCP and TLS) must be up within this long; default DEFAULT_CONNECT_TIMEOUT_MS. */
  connectTimeoutMs?: number;
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

/** Documented defaults: client-go's 5 QPS / burst 10. The agent passes its own, lower limit. */
export const DEFAULT_QPS = 5;
export const DEFAULT_BURST = 10;
export const DEFAULT_TIMEOUT_MS = 30_000;
/** client-go's dialer waits 30 s; a CLI run against a dead address should say so sooner. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;
export const DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024 * 1024;
/** etcd refuses objects over 1.5 MiB; their JSON is larger, but not this large. */
export const DEFAULT_MAX_WATCH_LINE_BYTES = 8 * 1024 * 1024;
const MAX_ERROR_BODY_BYTES = 64 * 1024;
export const JSON_TYPE = 'application/json';

export type Query = Record<string, string | number | boolean | undefined>;

export interface Spec {
  verb: Verb;
  ref: ResourceRef;
  method: string;
  namespace?: string;
  name?: string;
  subresource?: string;
  /** A path outside the resource tree (/version); `ref` then only names it in errors and counts. */
  path?: string;
  query?: Query;
  body?: unknown;
  contentType?: string;
  accept?: string;
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Writes get the stop grace; reads and watches are aborted at once. */
  write?: boolean;
  /** The request has left: written to the socket (a retry after a 401 calls it again). */
  onWritten?: () => void;
}

export interface Open {
  res: http.IncomingMessage;
  signal: AbortSignal;
  /** Re-arm or clear the deadline (a watch clears it once its headers arrived). */
  deadline(ms: number | undefined, message?: string): void;
  close(): void;
}

export class Requests {
  private readonly credentials: Credentials;
  private readonly limiter: TokenBucket;
  private readonly opts: ClientOptions;
  private readonly inflight = new Map<AbortController, { write: boolean }>();
  private stopping: Promise<void> | undefined;
  /** Set when the stop grace is over: writes are refused too. */
  private closed = false;
  readonly counters: ClientStats = { requests: 0, bytesReceived: 0 };

  constructor(config: LoadedConfig, opts: ClientOptions) {
    this.credentials = new Credentials(config);
    this.limiter = opts.limiter ?? new TokenBucket(DEFAULT_QPS, DEFAULT_BURST);
    this.opts = opts;
  }

  get server(): URL {
    return this.credentials.server;
  }

  /** The bearer token and cluster CA of this identity, for the kubelet (`Credentials.bearerAndCa`). */
  bearerAndCa(): Promise<{ token: string | undefined; ca: string | undefined }> {
    return this.credentials.bearerAndCa();
  }

  get stopped(): boolean {
    return this.stopping !== undefined;
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

  async json<T>(verb: Verb, spec: Spec, decode: (text: string) => T): Promise<T> {
    return this.decodeBytes(verb, spec, (bytes) => decode(bytes.toString('utf8')));
  }

  /** As json(), decoding the body's bytes (a projection: the text never becomes one string). */
  async decodeBytes<T>(verb: Verb, spec: Spec, decode: (bytes: Buffer) => T): Promise<T> {
    const bytes = await this.bytes({ ...spec, verb, accept: spec.accept ?? JSON_TYPE });
    try {
      return decode(bytes);
    } catch (err) {
      throw this.toKubeError(err, spec);
    }
  }

  /** A request whose whole body is read (bounded); non-2xx becomes a KubeError with the server's Status. */
  async text(spec: Spec, maxBytes?: number): Promise<string> {
    return (await this.bytes(spec, maxBytes)).toString('utf8');
  }

  async bytes(spec: Spec, maxBytes?: number): Promise<Buffer> {
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
      return body;
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
  async failOnStatus(spec: Spec, open: Open): Promise<void> {
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
  async open(spec: Spec, retried = false): Promise<Open> {
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
        ...(spec.onWritten ? { onWritten: spec.onWritten } : {}),
        connectTimeoutMs: this.opts.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
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
      path = spec.path ?? resourcePath(spec.ref, { namespace: spec.namespace, name: spec.name, subresource: spec.subresource });
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

  toKubeError(err: unknown, spec: Spec): KubeError {
    if (err instanceof KubeError) return err;
    const target = targetOf(spec);
    const { verb } = spec;
    if (err instanceof AbortReason) return new KubeError({ verb, target, code: err.code, detail: err.message });
    if (err instanceof TooLarge) return new KubeError({ verb, target, code: 'too-large', detail: err.message });
    if (err instanceof Malformed) return new KubeError({ verb, target, code: 'malformed', detail: `malformed ${err.message}` });
    if (err instanceof CredentialError) return new KubeError({ verb, target, code: 'credentials', detail: err.message });
    const code = (err as { code?: unknown })?.code;
    if (typeof code === 'string' && /^[A-Z][A-Z0-9_]+$/.test(code)) {
      const detail = err instanceof ConnectTimeout ? err.message : code;
      return new KubeError({ verb, target, code, detail, server: serverName(this.server) });
    }
    return new KubeError({ verb, target, code: 'error', detail: String((err as Error)?.message ?? err) });
  }

  private stoppedError(spec: Spec): KubeError {
    return new KubeError({ verb: spec.verb, target: targetOf(spec), code: 'stopped', detail: 'stopped: the client is shutting down' });
  }

  count(spec: Spec, code: string, bytes: number): void {
    this.opts.onRequest?.({ verb: spec.verb, resource: spec.verb === 'log' ? 'pods/log' : resourceName(spec.ref), code, bytes });
  }
}

/** The server as an operator wrote it in the kubeconfig: scheme, host, port and any path prefix. */
export function serverName(url: URL): string {
  return `${url.origin}${url.pathname.replace(/\/$/, '')}`;
}

export function targetOf(spec: Spec): string {
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
