// `report`'s only door to kube-apiserver: read-only LISTs (one per resource kind) and bounded log
// tails, with the caller's credentials. Nothing here throws: every call comes back as a value that
// says what was read or why not, and every request is recorded for the report and the tests.
import {
  ApiException, CoreV1Api, CustomObjectsApi, StorageV1Api, type KubeConfig,
} from '@kubernetes/client-node';
import { REQUEST_TIMEOUT_MS, statusCodeOf } from '../agent/kube.ts';

export type ApiResult<T> = { ok: true; value: T } | { ok: false; code: string; reason: string };

export interface ApiRequest {
  verb: 'list' | 'get';
  resource: string;
  code: string;
}

/** Log reads stay small: the last lines of the last hour, capped in bytes. */
export interface LogBounds {
  tailLines: number;
  limitBytes: number;
  sinceSeconds: number;
}

export const DEFAULT_LOG_BOUNDS: LogBounds = { tailLines: 2000, limitBytes: 512 * 1024, sinceSeconds: 3600 };

type Obj = Record<string, any>;

/** "403 Forbidden: pods is forbidden: User … cannot list …" from whatever the client threw. */
export function describeApiError(err: unknown): string {
  if (err instanceof ApiException) {
    let body: unknown = err.body;
    if (typeof body === 'string') {
      try { body = JSON.parse(body); } catch { /* plain text body */ }
    }
    const message = (body as { message?: unknown } | null)?.message;
    return `HTTP ${err.code}${typeof message === 'string' ? `: ${message}` : ''}`;
  }
  const e = err as { code?: unknown; message?: unknown; cause?: { code?: unknown; message?: unknown } } | null;
  const detail = e?.cause?.code ?? e?.code ?? e?.cause?.message ?? e?.message;
  return typeof detail === 'string' ? detail : String(err);
}

export class ClusterApi {
  readonly requests: ApiRequest[] = [];
  private readonly core: CoreV1Api;
  private readonly storage: StorageV1Api;
  private readonly custom: CustomObjectsApi;
  private readonly timeoutMs: number;

  constructor(kc: KubeConfig, timeoutMs = REQUEST_TIMEOUT_MS) {
    this.core = kc.makeApiClient(CoreV1Api);
    this.storage = kc.makeApiClient(StorageV1Api);
    this.custom = kc.makeApiClient(CustomObjectsApi);
    this.timeoutMs = timeoutMs;
  }

  private async call<T>(verb: ApiRequest['verb'], resource: string, send: () => Promise<T>): Promise<ApiResult<T>> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(Object.assign(new Error(`timed out after ${this.timeoutMs / 1000} s`), { timeout: true })), this.timeoutMs);
    });
    try {
      const value = await Promise.race([send(), timeout]);
      this.requests.push({ verb, resource, code: '200' });
      return { ok: true, value };
    } catch (err) {
      const code = (err as { timeout?: boolean }).timeout ? 'timeout' : statusCodeOf(err);
      this.requests.push({ verb, resource, code });
      return { ok: false, code, reason: (err as { timeout?: boolean }).timeout ? (err as Error).message : describeApiError(err) };
    } finally {
      clearTimeout(timer);
    }
  }

  private async list(resource: string, send: () => Promise<{ items: unknown[] }>): Promise<ApiResult<Obj[]>> {
    const result = await this.call('list', resource, send);
    return result.ok ? { ok: true, value: result.value.items as Obj[] } : result;
  }

  // resourceVersion "0": served from the API server's watch cache, not a quorum read from etcd.
  listNodes(labelSelector?: string): Promise<ApiResult<Obj[]>> {
    return this.list('nodes', () => this.core.listNode({ resourceVersion: '0', ...(labelSelector ? { labelSelector } : {}) }));
  }

  listConfigMaps(fieldSelector: string): Promise<ApiResult<Obj[]>> {
    return this.list('configmaps', () => this.core.listConfigMapForAllNamespaces({ fieldSelector, resourceVersion: '0' }));
  }

  listPods(): Promise<ApiResult<Obj[]>> {
    return this.list('pods', () => this.core.listPodForAllNamespaces({ resourceVersion: '0' }));
  }

  listPersistentVolumeClaims(): Promise<ApiResult<Obj[]>> {
    return this.list('persistentvolumeclaims', () => this.core.listPersistentVolumeClaimForAllNamespaces({ resourceVersion: '0' }));
  }

  listStorageClasses(): Promise<ApiResult<Obj[]>> {
    return this.list('storageclasses.storage.k8s.io', () => this.storage.listStorageClass({ resourceVersion: '0' }));
  }

  listCSIDrivers(): Promise<ApiResult<Obj[]>> {
    return this.list('csidrivers.storage.k8s.io', () => this.storage.listCSIDriver({ resourceVersion: '0' }));
  }

  /** PipelineRuns of all namespaces (tekton.dev/v1); at most `limit` of them in one page. */
  listPipelineRuns(limit: number): Promise<ApiResult<Obj[]>> {
    return this.list('pipelineruns.tekton.dev', () =>
      this.custom.listClusterCustomObject({ group: 'tekton.dev', version: 'v1', plural: 'pipelineruns', limit }) as Promise<{ items: unknown[] }>);
  }

  /** One Node (`describe NODE`). */
  getNode(name: string): Promise<ApiResult<Obj>> {
    return this.call('get', 'nodes', () => this.core.readNode({ name }) as Promise<Obj>);
  }

  /** Events of one namespace matching a field selector, e.g. those our agent wrote about one Node. */
  listEvents(namespace: string, fieldSelector: string): Promise<ApiResult<Obj[]>> {
    return this.list('events', () => this.core.listNamespacedEvent({ namespace, fieldSelector }));
  }

  readLog(namespace: string, pod: string, container: string, bounds: LogBounds = DEFAULT_LOG_BOUNDS): Promise<ApiResult<string>> {
    return this.call('get', 'pods/log', () => this.core.readNamespacedPodLog({ name: pod, namespace, container, ...bounds }));
  }
}
