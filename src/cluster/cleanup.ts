// `cleanup`: removes what the agents wrote, and nothing else: on every Node the annotations under
// node-tuning-advisor.io/ and the two labels (src/wire/node-labels.ts), each Node with one merge
// patch of nulls (a Node without them is not written); the heartbeat Leases in the agents'
// namespace (those labelled as heartbeats, with one delete-collection). Idempotent. Events are
// left to expire (kube-apiserver's --event-ttl, 1 h by default): they are history, and deleting
// them would need delete on every Event in "default". The operator's own silence annotation
// (silence.node-tuning-advisor.io/rules) is not under the prefix and stays.
// `revokeAgentAccess` (helm uninstall's hook, while the agents still run): first delete the
// bindings that let the agents write (their ClusterRoleBinding, their heartbeat RoleBinding), wait
// for that to take effect, then clean, then look once more and clean what a write in flight left.
import { KubeError, describeError } from '../kube/errors.ts';
import { CLUSTERROLEBINDINGS, LEASES, NODES, ROLEBINDINGS } from '../kube/resources.ts';
import type { Obj } from '../kube/objects.ts';
import { ANNOTATION_PREFIX } from '../wire/annotations.ts';
import { HEARTBEAT_SELECTOR } from '../wire/heartbeat.ts';
import { ADVISOR_LABELS } from '../wire/node-labels.ts';
import { InputError } from '../input-error.ts';
import type { ClusterApi } from './api.ts';

/** The agent's bindings that `revokeAgentAccess` deletes (manifests/base/rbac.yaml). */
export const AGENT_CLUSTER_ROLE_BINDING = 'node-tuning-advisor';
export const AGENT_HEARTBEAT_ROLE_BINDING = 'node-tuning-advisor-heartbeat';
/** After the bindings are deleted, the API servers' RBAC caches catch up within about a second. */
export const REVOKE_SETTLE_MS = 2_000;
/** Failures named in the result; the rest are counted. */
const MAX_FAILURES_NAMED = 10;

export interface CleanupOptions {
  agentNamespace: string;
  revokeAgentAccess: boolean;
  /** Count what would be removed; write nothing. */
  dryRun: boolean;
  /** Waits REVOKE_SETTLE_MS (tests pass a shorter one). */
  settle?: (ms: number) => Promise<void>;
}

export interface CleanupResult {
  nodesListed: number;
  /** Nodes that carried our keys (cleaned, or with --dry-run would be). */
  nodesCleaned: number;
  annotations: number;
  labels: number;
  leases: number;
  /** Bindings deleted (or already gone) by revokeAgentAccess. */
  revoked: string[];
  /** What could not be done, the first few named. */
  failures: string[];
  failureCount: number;
}

/** The merge patch that removes our keys from a Node's metadata, and how many; undefined when it has none. */
export function removalPatch(node: Obj): { patch: Record<string, unknown>; annotations: number; labels: number } | undefined {
  const annotations = Object.keys(isMap(node.metadata?.annotations) ? node.metadata.annotations : {}).filter((k) => k.startsWith(ANNOTATION_PREFIX));
  const labels = Object.keys(isMap(node.metadata?.labels) ? node.metadata.labels : {}).filter((k) => ADVISOR_LABELS.includes(k));
  if (annotations.length + labels.length === 0) return undefined;
  const nulls = (keys: string[]) => Object.fromEntries(keys.map((k) => [k, null]));
  const metadata = { ...(annotations.length > 0 ? { annotations: nulls(annotations) } : {}), ...(labels.length > 0 ? { labels: nulls(labels) } : {}) };
  return { patch: { metadata }, annotations: annotations.length, labels: labels.length };
}

function isMap(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export async function cleanup(api: ClusterApi, opts: CleanupOptions): Promise<CleanupResult> {
  const result: CleanupResult = { nodesListed: 0, nodesCleaned: 0, annotations: 0, labels: 0, leases: 0, revoked: [], failures: [], failureCount: 0 };
  const cleaned = new Set<string>();
  const fail = (text: string) => {
    result.failureCount += 1;
    if (result.failures.length < MAX_FAILURES_NAMED) result.failures.push(text);
  };
  if (opts.revokeAgentAccess && !opts.dryRun) {
    await revoke(api, opts.agentNamespace, result, fail);
    await (opts.settle ?? ((ms) => new Promise((r) => setTimeout(r, ms))))(REVOKE_SETTLE_MS);
  }
  await cleanNodes(api, opts, result, fail, cleaned, true);
  await cleanLeases(api, opts, result, fail);
  // A write of an agent that was already under way when its access went: one more look.
  if (opts.revokeAgentAccess && !opts.dryRun) {
    await cleanNodes(api, opts, result, fail, cleaned, false);
    await cleanLeases(api, opts, result, fail);
  }
  result.nodesCleaned = cleaned.size;
  return result;
}

async function revoke(api: ClusterApi, namespace: string, result: CleanupResult, fail: (text: string) => void): Promise<void> {
  const targets = [
    { ref: CLUSTERROLEBINDINGS, namespace: undefined, name: AGENT_CLUSTER_ROLE_BINDING, what: `ClusterRoleBinding ${AGENT_CLUSTER_ROLE_BINDING}` },
    { ref: ROLEBINDINGS, namespace, name: AGENT_HEARTBEAT_ROLE_BINDING, what: `RoleBinding ${namespace}/${AGENT_HEARTBEAT_ROLE_BINDING}` },
  ];
  for (const target of targets) {
    try {
      await api.client.delete(target.ref, target.name, target.namespace === undefined ? {} : { namespace: target.namespace });
      result.revoked.push(target.what);
    } catch (err) {
      if (err instanceof KubeError && err.notFound) result.revoked.push(target.what);
      else fail(`deleting ${target.what}: ${describeError(err)}`);
    }
  }
}

/** Every Node, page by page; each that carries our keys gets one merge patch. `first`: count the listed Nodes. */
async function cleanNodes(api: ClusterApi, opts: CleanupOptions, result: CleanupResult, fail: (text: string) => void, cleaned: Set<string>, first: boolean): Promise<void> {
  const listed = await api.scan(NODES, { metadataOnly: true }, async (items) => {
    for (const node of items) {
      if (first) result.nodesListed += 1;
      const removal = removalPatch(node);
      if (!removal) continue;
      const name = String(node.metadata?.name);
      if (!opts.dryRun) {
        try {
          await api.client.patch(NODES, name, removal.patch);
        } catch (err) {
          if (!(err instanceof KubeError && err.notFound)) fail(`node ${name}: ${describeError(err)}`);
          continue;
        }
      }
      cleaned.add(name);
      result.annotations += removal.annotations;
      result.labels += removal.labels;
    }
  });
  if (!listed.ok) {
    const hint = listed.code === '403' ? '; cleanup needs list and patch on nodes (docs/deploy.md "Uninstall")' : '';
    throw new InputError(`cannot list nodes: ${listed.reason}${hint}`);
  }
}

/** The heartbeat Leases of the agents' namespace: counted with a LIST, removed with one delete-collection. */
async function cleanLeases(api: ClusterApi, opts: CleanupOptions, result: CleanupResult, fail: (text: string) => void): Promise<void> {
  let count = 0;
  const listed = await api.scan(LEASES, { namespace: opts.agentNamespace, labelSelector: HEARTBEAT_SELECTOR }, (items) => { count += items.length; });
  if (!listed.ok) {
    // A namespace already deleted (kubectl delete -k) took its Leases with it.
    if (listed.code !== '404') fail(`listing the heartbeat Leases in ${opts.agentNamespace}: ${listed.reason}`);
    return;
  }
  if (count === 0) return;
  if (!opts.dryRun) {
    try {
      await api.client.deleteCollection(LEASES, { namespace: opts.agentNamespace, labelSelector: HEARTBEAT_SELECTOR });
    } catch (err) {
      fail(`deleting the heartbeat Leases in ${opts.agentNamespace}: ${describeError(err)}`);
      return;
    }
  }
  result.leases += count;
}
