// The project's one Kubernetes client: get, list (paginated, metadata-only, selectors), watch,
// create, merge-patch, delete and pod-log reads over node:http/node:https with the credentials of a
// kubeconfig or the pod's service account. Every request passes the client's token bucket, has a
// deadline and an AbortSignal, is counted (requests, bytes received), and comes back as JSON decoded
// into plain objects that passed validation, or as a KubeError naming the verb, the resource and why.
// stop() aborts everything in flight (writes get a short grace) and refuses new requests.
import { configSource, loadKubeConfig, type ConfigSource, type LoadedConfig } from './config.ts';
import { decodeList, decodeListBytes, decodeObject, decodeWatchBytes, decodeWatchLine } from './decode.ts';
import { ContinueExpired, KubeError } from './errors.ts';
import { readLines } from './http.ts';
import type { KubeList, KubeObject, WatchEvent } from './objects.ts';
import type { ObjectShape } from './projection.ts';
import { PODS, VERSION, type ResourceRef } from './resources.ts';
import { DEFAULT_MAX_WATCH_LINE_BYTES, Requests, targetOf, type ClientOptions, type ClientStats, type Query, type Spec } from './requests.ts';

export { DEFAULT_BURST, DEFAULT_QPS, DEFAULT_TIMEOUT_MS, type ClientOptions, type ClientStats, type RequestRecord } from './requests.ts';

export interface Where {
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
  /**
   * With `limit`: keep pages near this many bytes. The first page asks for at most FIRST_ADAPTIVE_LIMIT
   * items, each next one for as many as the last page's size per item says fit (1 to `limit`).
   */
  pageBytes?: number;
  /** Only apiVersion, kind and metadata of each item (PartialObjectMetadataList): far less to read. */
  metadataOnly?: boolean;
  /** With `pageBytes`: the first page's limit (default FIRST_ADAPTIVE_LIMIT). */
  firstLimit?: number;
  /** Keep only these fields of each item, decoded from the bytes (src/kube/projection.ts). */
  project?: ObjectShape;
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
  /** Keep only these fields of each event's object, decoded from the bytes. */
  project?: ObjectShape;
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

/** A watch that sent nothing for this long past its server-side timeout is dead (a silent proxy): abort it. */
const WATCH_IDLE_GRACE_MS = 60_000;
/** The first page of a list kept near `pageBytes` asks for at most this many items. */
export const FIRST_ADAPTIVE_LIMIT = 100;
const JSON_TYPE = 'application/json';
const METADATA_LIST = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json';
const METADATA_OBJECT = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json';

export class KubeClient {
  private readonly requests: Requests;
  private readonly opts: ClientOptions;

  /** From a kubeconfig path, or the pod's service account when undefined (throws KubeConfigError). */
  static fromKubeconfig(kubeconfig: string | undefined, opts: ClientOptions = {}, env: NodeJS.ProcessEnv = process.env): KubeClient {
    return new KubeClient(loadKubeConfig(configSource(kubeconfig, env)), opts);
  }

  static fromSource(source: ConfigSource, opts: ClientOptions = {}): KubeClient {
    return new KubeClient(loadKubeConfig(source), opts);
  }

  constructor(config: LoadedConfig, opts: ClientOptions = {}) {
    this.requests = new Requests(config, opts);
    this.opts = opts;
  }

  get server(): URL {
    return this.requests.server;
  }

  /** Requests sent and body bytes received so far (watch streams included). */
  get stats(): ClientStats {
    return { ...this.requests.counters };
  }

  /** This identity's bearer token and the cluster CA, for a call to the node's kubelet (not the API server). */
  bearerAndCa(): Promise<{ token: string | undefined; ca: string | undefined }> {
    return this.requests.bearerAndCa();
  }

  get stopped(): boolean {
    return this.requests.stopped;
  }

  /**
   * Abort every request in flight and refuse new ones. Writes in flight (and writes started during
   * the grace) get `graceMs` to finish: a publish that is nearly done completes.
   */
  stop(graceMs = 0): Promise<void> {
    return this.requests.stop(graceMs);
  }

  get<T extends KubeObject>(ref: ResourceRef, name: string, opts: Where & { metadataOnly?: boolean } = {}): Promise<T> {
    return this.requests.json('get', { verb: 'get', ref, method: 'GET', name, ...where(opts), ...(opts.metadataOnly ? { accept: METADATA_OBJECT } : {}) },
      (text) => decodeObject<T>(text));
  }

  /**
   * The whole list (following `continue` when `limit` is set), the one place pages are collected;
   * `bound`: more than `maxItems` items stops the list with its `tooMany()` error.
   */
  async list<T extends KubeObject>(ref: ResourceRef, opts: ListOptions = {}, bound?: { maxItems: number; tooMany: () => Error }): Promise<KubeList<T>> {
    const items: T[] = [];
    const { resourceVersion } = await this.listPages<T>(ref, opts, (page) => {
      items.push(...page.items);
      if (bound && items.length > bound.maxItems) throw bound.tooMany();
    });
    return { resourceVersion, items };
  }

  /**
   * A list page by page: each page is handed to onPage (awaited) and then dropped, so memory holds
   * one page; onPage returning false stops there (`continue` not followed). A 410 on a continue
   * token throws ContinueExpired: restart from the first page.
   */
  async listPages<T extends KubeObject>(ref: ResourceRef, opts: ListOptions, onPage: (page: KubeList<T>) => void | boolean | Promise<void | boolean>): Promise<{ resourceVersion: string; pages: number; items: number }> {
    let token: string | undefined;
    let pages = 0;
    let count = 0;
    let resourceVersion = '';
    let limit = opts.limit !== undefined && opts.pageBytes !== undefined ? Math.min(opts.limit, opts.firstLimit ?? FIRST_ADAPTIVE_LIMIT) : opts.limit;
    let pageChars = 0;
    do {
      const query: Query = {
        labelSelector: opts.labelSelector, fieldSelector: opts.fieldSelector, limit, continue: token,
        ...(token === undefined ? { resourceVersion: opts.resourceVersion, resourceVersionMatch: opts.resourceVersionMatch } : {}),
      };
      const spec: Spec = { verb: 'list', ref, method: 'GET', query, ...where(opts), ...(opts.metadataOnly ? { accept: METADATA_LIST } : {}) };
      let page;
      try {
        const project = opts.project;
        page = project
          ? await this.requests.decodeBytes('list', spec, (bytes) => { pageChars = bytes.length; return decodeListBytes<T>(bytes, project); })
          : await this.requests.json('list', spec, (text) => { pageChars = text.length; return decodeList<T>(text); });
      } catch (err) {
        if (token !== undefined && err instanceof KubeError && err.expired) {
          throw new ContinueExpired({ verb: 'list', target: err.target, code: err.code, status: err.status, reason: err.reason, detail: `continue token expired, list again from the start (${err.detail})` });
        }
        throw err;
      }
      pages += 1;
      count += page.items.length;
      if (opts.limit !== undefined && opts.pageBytes !== undefined && page.items.length > 0) {
        limit = Math.max(1, Math.min(opts.limit, Math.floor((opts.pageBytes * page.items.length) / Math.max(1, pageChars))));
      }
      resourceVersion = page.resourceVersion;
      token = page.continue;
      if ((await onPage({ resourceVersion: page.resourceVersion, items: page.items })) === false) break;
    } while (token);
    return { resourceVersion, pages, items: count };
  }

  /** The API server's /version (gitVersion "v1.31.2", …): open to every authenticated user. */
  async serverVersion(opts: Where = {}): Promise<{ gitVersion: string }> {
    const info = await this.requests.json('get', { verb: 'get', ref: VERSION, method: 'GET', path: '/version', ...where(opts) },
      (text) => decodeObject<KubeObject>(text, false));
    const gitVersion = (info as { gitVersion?: unknown }).gitVersion;
    if (typeof gitVersion !== 'string' || !/^v?\d{1,3}\.\d{1,4}(\.\d{1,4})?([-+][0-9A-Za-z.+-]{1,60})?$/.test(gitVersion)) {
      throw new KubeError({ verb: 'get', target: 'version', code: 'malformed', detail: 'malformed /version: no gitVersion like v1.31.2' });
    }
    return { gitVersion };
  }

  /**
   * Create; the response may be an object without a name (a review), so only its shape is checked.
   * `onWritten`: the moment the request left (written to the socket), for callers that time it.
   */
  create<T extends KubeObject>(ref: ResourceRef, body: KubeObject | Record<string, unknown>, opts: Where & DryRun & { onWritten?: () => void } = {}): Promise<T> {
    return this.requests.json('create', {
      verb: 'create', ref, method: 'POST', body, write: true, ...where(opts), ...dryRun(opts), ...(opts.onWritten ? { onWritten: opts.onWritten } : {}),
    }, (text) => decodeObject<T>(text, false));
  }

  /** JSON merge patch (RFC 7386), of the object or a subresource ("status"). */
  patch<T extends KubeObject>(ref: ResourceRef, name: string, patch: Record<string, unknown>, opts: Where & DryRun & { subresource?: string } = {}): Promise<T> {
    return this.requests.json('patch', {
      verb: 'patch', ref, method: 'PATCH', name, body: patch, contentType: 'application/merge-patch+json', write: true,
      ...(opts.subresource ? { subresource: opts.subresource } : {}), ...where(opts), ...dryRun(opts),
    }, (text) => decodeObject<T>(text));
  }

  async delete(ref: ResourceRef, name: string, opts: DeleteOptions = {}): Promise<void> {
    await this.requests.json('delete', {
      verb: 'delete', ref, method: 'DELETE', name, write: true, ...where(opts),
      query: { gracePeriodSeconds: opts.gracePeriodSeconds, propagationPolicy: opts.propagationPolicy },
    }, () => undefined);
  }

  /** Deletes every object of a namespace that matches the selector, in one request (graceful, like delete). */
  async deleteCollection(ref: ResourceRef, opts: DeleteOptions & { namespace: string; labelSelector?: string }): Promise<void> {
    await this.requests.json('deletecollection', {
      verb: 'deletecollection', ref, method: 'DELETE', write: true, ...where(opts),
      query: { labelSelector: opts.labelSelector, gracePeriodSeconds: opts.gracePeriodSeconds, propagationPolicy: opts.propagationPolicy },
    }, () => undefined);
  }

  /** A container's log as text, bounded by the server (tailLines, limitBytes, sinceSeconds) and by this client's cap. */
  readLog(namespace: string, pod: string, opts: LogOptions = {}): Promise<string> {
    const { container, tailLines, limitBytes, sinceSeconds, timestamps, previous } = opts;
    return this.requests.text({
      verb: 'log', ref: PODS, method: 'GET', namespace, name: pod, subresource: 'log', accept: 'text/plain, */*',
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
    const open = await this.requests.open(spec);
    try {
      await this.requests.failOnStatus(spec, open);
      const idleMs = timeoutSeconds * 1000 + (this.opts.watchIdleGraceMs ?? WATCH_IDLE_GRACE_MS);
      const silent = `watch sent nothing for ${Math.round(idleMs / 1000)} s`;
      open.deadline(idleMs, silent);
      open.res.on('data', (chunk: Buffer) => { bytes += chunk.length; this.requests.counters.bytesReceived += chunk.length; open.deadline(idleMs, silent); });
      await readLines(open.res, this.opts.maxWatchLineBytes ?? DEFAULT_MAX_WATCH_LINE_BYTES, open.signal, (line) => {
        const decoded = opts.project ? decodeWatchBytes<T>(line, opts.project) : decodeWatchLine<T>(line.toString('utf8'));
        if ('error' in decoded) {
          const { code: status, reason, message } = decoded.error;
          throw new KubeError({ verb: 'watch', target: targetOf(spec), code: String(status), status, reason, detail: message ?? '' });
        }
        last = decoded.event.object.metadata?.resourceVersion ?? last;
        onEvent(decoded.event);
      });
      return { resourceVersion: last };
    } catch (err) {
      const error = this.requests.toKubeError(err, spec);
      code = error.code;
      throw error;
    } finally {
      open.close();
      this.requests.count(spec, code, bytes);
    }
  }
}

export interface DryRun {
  /** dryRun=All: the server authorizes and admits the write (admission policies included) and stores nothing. */
  dryRun?: boolean;
}

function dryRun(opts: DryRun): Pick<Spec, 'query'> {
  return opts.dryRun ? { query: { dryRun: 'All' } } : {};
}

function where(opts: Where): Pick<Spec, 'namespace' | 'timeoutMs' | 'signal'> {
  return {
    ...(opts.namespace !== undefined ? { namespace: opts.namespace } : {}),
    ...(opts.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {}),
    ...(opts.signal !== undefined ? { signal: opts.signal } : {}),
  };
}
