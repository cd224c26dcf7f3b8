// What `report` reads from kube-apiserver, through the project's Kubernetes client: read-only,
// paginated LISTs (each page handed to the caller and dropped), single GETs and bounded log tails,
// with the caller's credentials. Nothing here throws: every call comes back as a value that says
// what was read or why not, and every request is recorded for the report and the tests.
import { KubeClient, type ClientOptions, type ListOptions } from '../kube/client.ts';
import { ContinueExpired, describeError, KubeError } from '../kube/errors.ts';
import { objectKey, type KubeObject, type Obj } from '../kube/objects.ts';
import { configSource, type ConfigSource } from '../kube/config.ts';
import { EVENTS, NODES, resourceName, type ResourceRef } from '../kube/resources.ts';

export type ApiResult<T> = { ok: true; value: T } | { ok: false; code: string; reason: string };

export interface ApiRequest {
  verb: string;
  resource: string;
  code: string;
  /** Body bytes received. */
  bytes: number;
}

/** Log reads stay small: the last lines of the last hour, capped in bytes. */
export interface LogBounds {
  tailLines: number;
  limitBytes: number;
  sinceSeconds: number;
}

export const DEFAULT_LOG_BOUNDS: LogBounds = { tailLines: 2000, limitBytes: 512 * 1024, sinceSeconds: 3600 };
/** Items per LIST request at most (kubectl's chunk size). */
export const DEFAULT_PAGE_SIZE = 500;
/**
 * Bytes per LIST response aimed at: pages of large objects (Nodes with big annotations) get fewer
 * items. Below ~1 MiB a page's text and objects die young; bigger ones linger until a full GC.
 */
export const PAGE_BYTES = 768 * 1024;

export interface Paging {
  /** Items per LIST request; 0: each list in one response (no `limit`). */
  pageSize: number;
  /** Called (and awaited) after each page: the progress line, and the tests' hook between pages. */
  onPage?: (progress: PageProgress) => void | Promise<void>;
}

export interface PageProgress {
  /** "nodes", "deployments.apps", … */
  resource: string;
  pages: number;
  items: number;
  restarted: boolean;
}

export interface ScanSummary {
  pages: number;
  items: number;
  /** The list was restarted once after its continue token expired (410). */
  restarted: boolean;
}

export interface ScanOptions {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** PartialObjectMetadataList: only apiVersion, kind and metadata of each item. */
  metadataOnly?: boolean;
}

export class ClusterApi {
  readonly requests: ApiRequest[];
  readonly client: KubeClient;
  readonly paging: Paging;
  /** The client's rate limit in requests per second, when the caller set one (reported in the JSON). */
  qps: number | undefined;
  /** Lists restarted after an expired continue token, by resource. */
  readonly restarts: string[] = [];

  /** With the kubeconfig's credentials, or the pod's service account when undefined; throws KubeConfigError. */
  static fromKubeconfig(kubeconfig: string | undefined, env: NodeJS.ProcessEnv = process.env, opts: ClientOptions = {}, paging: Paging = { pageSize: DEFAULT_PAGE_SIZE }): ClusterApi {
    return ClusterApi.fromSource(configSource(kubeconfig, env), opts, paging);
  }

  /** From a config source (a kubeconfig file, maybe one of its contexts; the service account); throws KubeConfigError. */
  static fromSource(source: ConfigSource, opts: ClientOptions = {}, paging: Paging = { pageSize: DEFAULT_PAGE_SIZE }): ClusterApi {
    const requests: ApiRequest[] = [];
    const client = KubeClient.fromSource(source, {
      ...opts,
      onRequest: (r) => {
        requests.push({ verb: r.verb === 'log' ? 'get' : r.verb, resource: r.resource, code: r.code, bytes: r.bytes });
        opts.onRequest?.(r);
      },
    });
    return new ClusterApi(client, requests, paging);
  }

  /** `requests` is filled by whoever records the client's requests (fromKubeconfig does). */
  constructor(client: KubeClient, requests: ApiRequest[] = [], paging: Paging = { pageSize: DEFAULT_PAGE_SIZE }) {
    this.client = client;
    this.requests = requests;
    this.paging = paging;
  }

  /** Closes the connections. */
  close(): Promise<void> {
    return this.client.stop();
  }

  private async attempt<T>(send: () => Promise<T>): Promise<ApiResult<T>> {
    try {
      return { ok: true, value: await send() };
    } catch (err) {
      return failure(err);
    }
  }

  /**
   * A whole list, page by page (`limit` + `continue`, one request at a time): each page's items go to
   * `onItems` and are dropped before the next page is asked for. No resourceVersion: a consistent
   * read, which current API servers serve from their watch cache. When a continue token has expired
   * (410) the list starts again from the first page, once, skipping the items already handed over
   * (lists come in key order): each object is seen exactly once.
   */
  async scan(ref: ResourceRef, opts: ScanOptions, onItems: (items: Obj[]) => void | Promise<void>): Promise<ApiResult<ScanSummary>> {
    const resource = resourceName(ref);
    const summary: ScanSummary = { pages: 0, items: 0, restarted: false };
    let lastKey: string | undefined;
    let skipThrough: string | undefined;
    const list: ListOptions = { ...opts, ...(this.paging.pageSize > 0 ? { limit: this.paging.pageSize, pageBytes: PAGE_BYTES } : {}) };
    for (;;) {
      try {
        await this.client.listPages<KubeObject>(ref, list, async (page) => {
          summary.pages += 1;
          const fresh = skipThrough === undefined ? page.items : page.items.filter((item) => objectKey(item) > (skipThrough as string));
          for (const item of fresh) {
            const key = objectKey(item);
            if (lastKey === undefined || key > lastKey) lastKey = key;
          }
          summary.items += fresh.length;
          if (fresh.length > 0) await onItems(fresh);
          await this.paging.onPage?.({ resource, pages: summary.pages, items: summary.items, restarted: summary.restarted });
        });
        return { ok: true, value: summary };
      } catch (err) {
        if (!(err instanceof ContinueExpired) || summary.restarted) return failure(err);
        summary.restarted = true;
        this.restarts.push(resource);
        skipThrough = lastKey;
      }
    }
  }

  /** The first `limit` items of a list (one request, `continue` not followed). */
  async firstItems(ref: ResourceRef, opts: ScanOptions, limit: number): Promise<ApiResult<Obj[]>> {
    return this.attempt(async () => {
      const items: Obj[] = [];
      await this.client.listPages<KubeObject>(ref, { ...opts, limit }, (page) => {
        items.push(...page.items.slice(0, limit));
        return false;
      });
      return items;
    });
  }

  get(ref: ResourceRef, namespace: string | undefined, name: string): Promise<ApiResult<Obj>> {
    return this.attempt(() => this.client.get<KubeObject>(ref, name, namespace === undefined ? {} : { namespace }));
  }

  /** One Node (`describe NODE`). */
  getNode(name: string): Promise<ApiResult<Obj>> {
    return this.get(NODES, undefined, name);
  }

  /** Events of one namespace matching a field selector (paged), e.g. those our agent wrote about one Node. */
  async listEvents(namespace: string, fieldSelector: string): Promise<ApiResult<Obj[]>> {
    const items: Obj[] = [];
    const scanned = await this.scan(EVENTS, { namespace, fieldSelector }, (page) => { items.push(...page); });
    return scanned.ok ? { ok: true, value: items } : scanned;
  }

  readLog(namespace: string, pod: string, container: string, bounds: LogBounds = DEFAULT_LOG_BOUNDS): Promise<ApiResult<string>> {
    return this.attempt(() => this.client.readLog(namespace, pod, { container, ...bounds }));
  }
}

function failure(err: unknown): { ok: false; code: string; reason: string } {
  if (err instanceof KubeError) return { ok: false, code: err.code, reason: err.summary };
  return { ok: false, code: 'error', reason: describeError(err) };
}

