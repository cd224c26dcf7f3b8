// What `report` reads from kube-apiserver, through the project's Kubernetes client: read-only LISTs
// (one per resource kind) and bounded log tails, with the caller's credentials. Nothing here throws:
// every call comes back as a value that says what was read or why not, and every request is
// recorded for the report and the tests.
import { KubeClient, type ClientOptions } from '../kube/client.ts';
import { configSource, type ConfigSource } from '../kube/config.ts';
import { describeError, KubeError } from '../kube/errors.ts';
import type { KubeObject } from '../kube/objects.ts';
import {
  CONFIGMAPS, CSIDRIVERS, EVENTS, NODES, PERSISTENTVOLUMECLAIMS, PIPELINERUNS, PODS, STORAGECLASSES, type ResourceRef,
} from '../kube/resources.ts';

export type ApiResult<T> = { ok: true; value: T } | { ok: false; code: string; reason: string };

export interface ApiRequest {
  verb: string;
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

export class ClusterApi {
  readonly requests: ApiRequest[];
  readonly client: KubeClient;

  /** With the kubeconfig's credentials, or the pod's service account when undefined; throws KubeConfigError. */
  static fromKubeconfig(kubeconfig: string | undefined, env: NodeJS.ProcessEnv = process.env, opts: ClientOptions = {}): ClusterApi {
    return ClusterApi.fromSource(configSource(kubeconfig, env), opts);
  }

  /** From a config source (a kubeconfig file, maybe one of its contexts; the service account); throws KubeConfigError. */
  static fromSource(source: ConfigSource, opts: ClientOptions = {}): ClusterApi {
    const requests: ApiRequest[] = [];
    const client = KubeClient.fromSource(source, {
      ...opts,
      onRequest: (r) => {
        requests.push({ verb: r.verb === 'log' ? 'get' : r.verb, resource: r.resource, code: r.code });
        opts.onRequest?.(r);
      },
    });
    return new ClusterApi(client, requests);
  }

  /** `requests` is filled by whoever records the client's requests (fromKubeconfig does). */
  constructor(client: KubeClient, requests: ApiRequest[] = []) {
    this.client = client;
    this.requests = requests;
  }

  /** Closes the connections. */
  close(): Promise<void> {
    return this.client.stop();
  }

  private async attempt<T>(send: () => Promise<T>): Promise<ApiResult<T>> {
    try {
      return { ok: true, value: await send() };
    } catch (err) {
      if (err instanceof KubeError) return { ok: false, code: err.code, reason: err.summary };
      return { ok: false, code: 'error', reason: describeError(err) };
    }
  }

  // resourceVersion "0": served from the API server's watch cache, not a quorum read from etcd.
  private list(ref: ResourceRef, opts: { namespace?: string; labelSelector?: string; fieldSelector?: string; limit?: number; fromCache?: boolean } = {}): Promise<ApiResult<Obj[]>> {
    const { fromCache = true, ...rest } = opts;
    return this.attempt(async () => (await this.client.list<KubeObject>(ref, { ...rest, ...(fromCache ? { resourceVersion: '0' } : {}) })).items);
  }

  listNodes(labelSelector?: string): Promise<ApiResult<Obj[]>> {
    return this.list(NODES, labelSelector ? { labelSelector } : {});
  }

  listConfigMaps(fieldSelector: string): Promise<ApiResult<Obj[]>> {
    return this.list(CONFIGMAPS, { fieldSelector });
  }

  listPods(): Promise<ApiResult<Obj[]>> {
    return this.list(PODS);
  }

  listPersistentVolumeClaims(): Promise<ApiResult<Obj[]>> {
    return this.list(PERSISTENTVOLUMECLAIMS);
  }

  listStorageClasses(): Promise<ApiResult<Obj[]>> {
    return this.list(STORAGECLASSES);
  }

  listCSIDrivers(): Promise<ApiResult<Obj[]>> {
    return this.list(CSIDRIVERS);
  }

  /** PipelineRuns of all namespaces (tekton.dev/v1); at most `limit` of them (one page, not followed). */
  async listPipelineRuns(limit: number): Promise<ApiResult<Obj[]>> {
    return this.attempt(async () => {
      const items: Obj[] = [];
      await this.client.listPages<KubeObject>(PIPELINERUNS, { limit }, (page) => {
        items.push(...page.items.slice(0, limit - items.length));
        if (items.length >= limit) throw new EnoughItems();
      }).catch((err) => { if (!(err instanceof EnoughItems)) throw err; });
      return items;
    });
  }

  /** One Node (`describe NODE`). */
  getNode(name: string): Promise<ApiResult<Obj>> {
    return this.attempt(() => this.client.get<KubeObject>(NODES, name));
  }

  /** Events of one namespace matching a field selector, e.g. those our agent wrote about one Node. */
  listEvents(namespace: string, fieldSelector: string): Promise<ApiResult<Obj[]>> {
    return this.list(EVENTS, { namespace, fieldSelector, fromCache: false });
  }

  readLog(namespace: string, pod: string, container: string, bounds: LogBounds = DEFAULT_LOG_BOUNDS): Promise<ApiResult<string>> {
    return this.attempt(() => this.client.readLog(namespace, pod, { container, ...bounds }));
  }
}

/** Ends a paged list early, once enough items were read. */
class EnoughItems extends Error {}
