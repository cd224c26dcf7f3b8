// What the agent asks of kube-apiserver, through the project's Kubernetes client: one list-watch each
// of its Node (field selector on the name), the pods on the node (spec.nodeName), CSIDriver objects
// and its CSINode; merge patches of its annotations; Event creation; its heartbeat Lease (one GET at
// start, then merge patches; created when missing). Every request passes a small
// token bucket and is counted by verb and code; every watch failure is counted by reason.
import { TokenBucket, type BackoffPolicy } from '../kube/backoff.ts';
import { KubeClient } from '../kube/client.ts';
import { Informer, type InformerOptions } from '../kube/informer.ts';
import type { EventObject, KubeObject, NodeObject } from '../kube/objects.ts';
import { CSIDRIVERS, CSINODES, EVENTS, LEASES, NODES, PODS, type ResourceRef } from '../kube/resources.ts';
import { KubeError } from '../kube/errors.ts';
import type { AnnotationPatch } from '../wire/annotations.ts';
import type { LabelPatch } from '../wire/node-labels.ts';
import { POD_FIELDS } from '../workload/pod-view.ts';
import type { AgentMetrics } from '../publish/metrics.ts';
import type { WorkloadInformers } from './workload-watcher.ts';
import type { LeaseApi } from './heartbeat.ts';

/** Documented default: 1 request/s with a burst of 5, far below kubelet's own 50/100. */
export const CLIENT_QPS = 1;
export const CLIENT_BURST = 5;
/** A request (other than a watch) that has not answered by then is aborted, counts as failed and is retried later. */
export const REQUEST_TIMEOUT_MS = 30_000;
/** On SIGTERM a write in flight (the publish) gets this long to finish before it is aborted. */
export const STOP_GRACE_MS = 500;

export interface AgentApiOptions {
  kubeconfig: string | undefined;
  metrics?: AgentMetrics;
  limiter?: TokenBucket;
  requestTimeoutMs?: number;
  env?: NodeJS.ProcessEnv;
}

export function agentClient(opts: AgentApiOptions): KubeClient {
  return KubeClient.fromKubeconfig(opts.kubeconfig, {
    limiter: opts.limiter ?? new TokenBucket(CLIENT_QPS, CLIENT_BURST),
    timeoutMs: opts.requestTimeoutMs ?? REQUEST_TIMEOUT_MS,
    onRequest: (r) => opts.metrics?.countApiRequest(r.verb, r.code),
  }, opts.env);
}

/** Far above any kubelet's --max-pods (110 by default); pods that never run still count. */
export const MAX_PODS = 2000;
/** A LIST page of pods: ~8 MiB of response bytes (outside the heap), whatever tenants put in their pods. */
const POD_PAGE_BYTES = 8 * 1024 * 1024;

/** One list-watch per watched part (workload/snapshot.ts WATCHED_PARTS); the Node's is typed as one. */
export type AgentInformers = WorkloadInformers & { node: Informer<NodeObject> };

/** The agent's four list-watches; no periodic GET or LIST beyond them. */
export function agentInformers(client: KubeClient, nodeName: string, deps: { backoff: BackoffPolicy; log(line: string): void; metrics?: AgentMetrics }): AgentInformers {
  const informer = <T extends KubeObject>(name: string, what: string, ref: ResourceRef, fieldSelector?: string, bounds: Partial<InformerOptions> = {}): Informer<T> =>
    new Informer<T>(client, ref, {
      name, what, backoff: deps.backoff, log: deps.log, ...(fieldSelector ? { fieldSelector } : {}), ...bounds,
      onError: (reason) => deps.metrics?.countWatchError(name, reason),
    });
  return {
    node: informer<NodeObject>('node', `node ${nodeName}`, NODES, `metadata.name=${nodeName}`),
    // Tenants write pods: only the fields the agent reads are decoded, in pages, and at most MAX_PODS.
    pods: informer('pods', `pods on node ${nodeName}`, PODS, `spec.nodeName=${nodeName}`, { project: POD_FIELDS, pageBytes: POD_PAGE_BYTES, maxObjects: MAX_PODS }),
    csiDrivers: informer('csidrivers', 'CSIDriver objects', CSIDRIVERS),
    csiNode: informer('csinode', `CSINode ${nodeName}`, CSINODES, `metadata.name=${nodeName}`),
  };
}

/** What one PATCH of the Node changes: our annotations, our labels (src/wire/node-labels.ts). */
export interface NodeMetadataPatch {
  annotations?: AnnotationPatch;
  labels?: LabelPatch;
}

export interface WriteApi {
  patchNode(name: string, patch: NodeMetadataPatch): Promise<NodeObject>;
  createEvent(event: EventObject): Promise<EventObject>;
}

export function agentWrites(client: KubeClient): WriteApi {
  return {
    patchNode: (name, metadata) => client.patch<NodeObject>(NODES, name, { metadata }),
    createEvent: (event) => client.create<EventObject>(EVENTS, event, { namespace: event.metadata.namespace ?? 'default' }),
  };
}

/** Its own heartbeat Lease (src/agent/heartbeat.ts), in its namespace. */
export function leaseWrites(client: KubeClient): LeaseApi {
  return {
    getLease: async (namespace, name) => {
      try {
        return await client.get<KubeObject>(LEASES, name, { namespace });
      } catch (err) {
        if (err instanceof KubeError && err.notFound) return undefined;
        throw err;
      }
    },
    patchLease: (namespace, name, patch) => client.patch<KubeObject>(LEASES, name, patch, { namespace }),
    createLease: (namespace, lease) => client.create<KubeObject>(LEASES, lease, { namespace }),
  };
}
