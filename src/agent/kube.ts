// The agent's only door to kube-apiserver: its Node, the pods on it, CSIDriver objects and its
// CSINode (each read through one ListWatch), merge patches of our annotations, Event creation. Every request passes a small client-side token bucket and is
// counted by verb and code.
import {
  ApiException, CoreV1Api, KubeConfig, ListWatch, PatchStrategy, StorageV1Api, Watch,
  setHeaderOptions, type CoreV1Event, type KubernetesListObject, type KubernetesObject,
  type V1CSIDriver, type V1CSINode, type V1Node, type V1NodeList, type V1Pod,
} from '@kubernetes/client-node';
import type { AnnotationPatch } from '../publish/annotations.ts';
import { TokenBucket } from './backoff.ts';

/** Documented default: 1 request/s with a burst of 5, far below kubelet's own 50/100. */
export const CLIENT_QPS = 1;
export const CLIENT_BURST = 5;
/** Watch inactivity timeout: a quiet Node sends nothing for long stretches; apiserver closes watches after 30–60 min anyway. */
export const WATCH_IDLE_TIMEOUT_MS = 60 * 60 * 1000;

/** A request (other than the watch) that has not answered by then counts as failed and is retried later. */
export const REQUEST_TIMEOUT_MS = 30_000;

export type CountRequest = (verb: string, code: string) => void;

/**
 * Our own managedFields entry on the Node. Without it the server names the entry after the client
 * library's User-Agent, which another tool may share: the admission policy lets the agent change
 * only entries that own nothing but our annotations, so a shared entry would get its writes refused.
 */
export const FIELD_MANAGER = 'node-tuning-advisor';

export function loadKubeConfig(kubeconfigPath: string | undefined): KubeConfig {
  const kc = new KubeConfig();
  if (!kubeconfigPath && !process.env.KUBERNETES_SERVICE_HOST) {
    throw new Error('not running in a pod (KUBERNETES_SERVICE_HOST is not set): pass --kubeconfig FILE');
  }
  try {
    if (kubeconfigPath) kc.loadFromFile(kubeconfigPath);
    else kc.loadFromCluster();
  } catch (err) {
    const where = kubeconfigPath ? `--kubeconfig ${kubeconfigPath}` : 'in-cluster config (service account)';
    throw new Error(`cannot load ${where}: ${(err as Error).message}; pass --kubeconfig FILE outside a pod`);
  }
  if (!kc.getCurrentCluster()) {
    const hint = kubeconfigPath ? `--kubeconfig ${kubeconfigPath} has no current cluster; set current-context` : 'KUBERNETES_SERVICE_HOST is not set; outside a pod pass --kubeconfig FILE';
    throw new Error(hint);
  }
  return kc;
}

export function statusCodeOf(err: unknown): string {
  if (err instanceof ApiException) return String(err.code);
  const status = (err as { statusCode?: unknown } | null)?.statusCode;
  return typeof status === 'number' ? String(status) : 'error';
}

export class NodeApi {
  private readonly api: CoreV1Api;
  private readonly storage: StorageV1Api;
  private readonly kc: KubeConfig;
  private readonly limiter: TokenBucket;
  private readonly count: CountRequest;

  private readonly timeoutMs: number;

  constructor(kc: KubeConfig, count: CountRequest, limiter = new TokenBucket(CLIENT_QPS, CLIENT_BURST), timeoutMs = REQUEST_TIMEOUT_MS) {
    this.kc = kc;
    this.timeoutMs = timeoutMs;
    this.api = kc.makeApiClient(CoreV1Api);
    this.storage = kc.makeApiClient(StorageV1Api);
    this.count = count;
    this.limiter = limiter;
  }

  private async call<T>(verb: string, send: () => Promise<T>): Promise<T> {
    await this.limiter.take();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(Object.assign(new Error(`${verb} timed out after ${this.timeoutMs / 1000} s`), { timeout: true })), this.timeoutMs);
    });
    try {
      const result = await Promise.race([send(), timeout]);
      this.count(verb, verb === 'create' ? '201' : '200');
      return result;
    } catch (err) {
      this.count(verb, (err as { timeout?: boolean }).timeout ? 'timeout' : statusCodeOf(err));
      throw err;
    } finally {
      clearTimeout(timer);
    }
  }

  listNode(name: string): Promise<V1NodeList> {
    return this.call('list', () => this.api.listNode({ fieldSelector: `metadata.name=${name}` }));
  }

  patchAnnotations(name: string, annotations: AnnotationPatch): Promise<V1Node> {
    const body = { metadata: { annotations } };
    return this.call('patch', () =>
      this.api.patchNode({ name, body, fieldManager: FIELD_MANAGER }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch)));
  }

  createEvent(event: CoreV1Event): Promise<CoreV1Event> {
    const namespace = event.metadata.namespace ?? 'default';
    return this.call('create', () => this.api.createNamespacedEvent({ namespace, body: event }));
  }

  /** One ListWatch on our own Node (field selector on the name); no periodic GET. */
  watchNode(name: string, onList: (found: boolean) => void): ListWatch<V1Node> {
    const fieldSelector = `metadata.name=${name}`;
    return this.listWatch('/api/v1/nodes', fieldSelector, () => this.listNode(name), (list) => onList(list.items.length > 0));
  }

  /** The pods bound to this node: one ListWatch with fieldSelector spec.nodeName. */
  watchPods(node: string, onList: () => void): ListWatch<V1Pod> {
    const fieldSelector = `spec.nodeName=${node}`;
    return this.listWatch('/api/v1/pods', fieldSelector, () => this.call('list', () => this.api.listPodForAllNamespaces({ fieldSelector })), onList);
  }

  /** All CSIDriver objects (cluster-scoped, a handful): one ListWatch, never a list per scan. */
  watchCsiDrivers(onList: () => void): ListWatch<V1CSIDriver> {
    return this.listWatch('/apis/storage.k8s.io/v1/csidrivers', undefined, () => this.call('list', () => this.storage.listCSIDriver()), onList);
  }

  /** This node's CSINode (same name as the Node). */
  watchCsiNode(node: string, onList: () => void): ListWatch<V1CSINode> {
    const fieldSelector = `metadata.name=${node}`;
    return this.listWatch('/apis/storage.k8s.io/v1/csinodes', fieldSelector, () => this.call('list', () => this.storage.listCSINode({ fieldSelector })), onList);
  }

  private listWatch<T extends KubernetesObject, L extends KubernetesListObject<T>>(
    path: string, fieldSelector: string | undefined, list: () => Promise<L>, onList: (list: L) => void,
  ): ListWatch<T> {
    const watch = new CountingWatch(this.kc, this.count, this.timeoutMs);
    const listed = async (): Promise<L> => {
      const result = await list();
      onList(result);
      return result;
    };
    return new ListWatch<T>(path, watch, listed, false, undefined, fieldSelector);
  }
}

class CountingWatch extends Watch {
  private readonly count: CountRequest;
  private timeoutReads = 0;

  constructor(kc: KubeConfig, count: CountRequest, headersTimeoutMs: number) {
    super(kc);
    this.count = count;
    // client-node arms one timer with requestTimeoutMs before the request (connect and response
    // headers) and re-arms it on the response and on every chunk (inactivity). The stock 30 s would
    // reconnect a quiet Node's watch 120 times an hour, so inactivity gets WATCH_IDLE_TIMEOUT_MS; but
    // the headers get the request timeout (30 s): a watch sent while kube-apiserver restarts can be
    // left without an answer, and must not wait an hour for one (seen on a real server, test/e2e/agent.test.ts).
    Object.defineProperty(this, 'requestTimeoutMs', {
      get: () => (this.timeoutReads++ === 0 ? headersTimeoutMs : WATCH_IDLE_TIMEOUT_MS),
      set: () => {},
      configurable: true,
    });
  }

  override async watch(
    path: string, query: Record<string, string | number | boolean | undefined>,
    callback: (phase: string, apiObj: unknown, watchObj?: unknown) => void, done: (err: unknown) => void,
  ): Promise<AbortController> {
    this.timeoutReads = 0;
    return super.watch(path, query, callback, (err) => {
      this.count('watch', err ? statusCodeOf(err) : '200');
      done(err);
    });
  }
}
