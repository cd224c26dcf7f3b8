// Before anything is created: the node exists, is Ready (and schedulable, when the scheduler places
// the pods) and has room for them; the caller may do everything the run and its cleanup need (so a
// missing `delete namespaces` is found before a namespace exists that could not be removed); the
// StorageClass exists and can work with the placement. Each problem is one sentence naming the fix.
import { InputError } from '../input-error.ts';
import type { KubeClient } from '../kube/client.ts';
import { KubeError } from '../kube/errors.ts';
import type { KubeObject, Obj } from '../kube/objects.ts';
import { NODES, PODS, resourceName, SELFSUBJECTACCESSREVIEWS, STORAGECLASSES } from '../kube/resources.ts';
import type { Placement } from './objects.ts';

/** A problem that stops the measurement before it starts (the CLI's exit 2, as any bad input), in one sentence. */
export class MeasureError extends InputError {
  override name = 'MeasureError';
}

export const CLUSTER_ROLE = 'node-tuning-advisor-measure';
const ROLE_HINT = `bind the ClusterRole ${CLUSTER_ROLE} (manifests/measure/clusterrole.yaml) to whoever runs the measurement`;

export interface Permission {
  verb: string;
  resource: string;
  group: string;
  /** Why the run needs it, for the error message. */
  why: string;
}

export function requiredPermissions(withClaims: boolean): Permission[] {
  const core = (verb: string, resource: string, why: string): Permission => ({ verb, resource, group: '', why });
  return [
    core('get', 'nodes', 'to check the node'),
    core('list', 'namespaces', 'to find namespaces left by interrupted runs'),
    core('create', 'namespaces', 'for the temporary namespace'),
    core('delete', 'namespaces', 'to clean up'),
    core('watch', 'serviceaccounts', "to wait for the namespace's default ServiceAccount"),
    core('create', 'pods', 'for the pods'),
    core('list', 'pods', 'to count the pods already on the node'),
    core('watch', 'pods', 'to time the pods'),
    ...(withClaims ? [
      core('create', 'persistentvolumeclaims', 'for --pvc-storage-class'),
      core('watch', 'nodes', 'to time attaches (Node.status.volumesAttached)'),
      { verb: 'get', resource: 'storageclasses', group: 'storage.k8s.io', why: 'to check --pvc-storage-class' },
    ] : []),
  ];
}

function describePermission(p: Permission): string {
  return `${p.verb} ${resourceName({ plural: p.resource, group: p.group })}`;
}

/**
 * SelfSubjectAccessReviews (every authenticated user may create them) for each permission; the
 * missing ones in one message. A server that cannot answer leaves the check to the requests themselves.
 */
export async function checkPermissions(client: KubeClient, permissions: Permission[], signal?: AbortSignal): Promise<void> {
  const answers = await Promise.all(permissions.map(async (p) => {
    try {
      const review = await client.create<KubeObject>(SELFSUBJECTACCESSREVIEWS, {
        apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview',
        spec: { resourceAttributes: { verb: p.verb, resource: p.resource, group: p.group } },
      }, signal ? { signal } : {});
      return (review as Obj).status?.allowed === true ? undefined : p;
    } catch (err) {
      if (err instanceof KubeError && (err.code === 'stopped')) throw err;
      return undefined;
    }
  }));
  const missing = answers.filter((p): p is Permission => p !== undefined);
  if (missing.length === 0) return;
  const list = missing.map((p) => `${describePermission(p)} (${p.why})`).join(', ');
  throw new MeasureError(`missing permission${missing.length > 1 ? 's' : ''}: ${list}; ${ROLE_HINT}`);
}

/** A request the run cannot do without, failed: a 403 names the verb and resource; others say what failed. */
export function explainApiFailure(err: unknown): MeasureError {
  if (err instanceof KubeError && err.forbidden) return new MeasureError(`missing permission: ${err.verb} ${err.target} (${err.detail}); ${ROLE_HINT}`);
  if (err instanceof KubeError) return new MeasureError(err.message);
  return new MeasureError(err instanceof Error ? err.message : String(err));
}

function condition(node: Obj, type: string): Obj | undefined {
  const list = node?.status?.conditions;
  return Array.isArray(list) ? list.find((c: Obj) => c?.type === type) : undefined;
}

/** The Node, checked: it exists, is Ready, and (scheduler placement) is not cordoned. */
export async function checkedNode(client: KubeClient, name: string, placement: Placement, signal?: AbortSignal): Promise<Obj> {
  let node: Obj;
  try {
    node = await client.get(NODES, name, signal ? { signal } : {});
  } catch (err) {
    if (err instanceof KubeError && err.notFound) throw new MeasureError(`node "${name}" does not exist${await someNodeNames(client)}; --node takes a name from kubectl get nodes`);
    if (err instanceof KubeError && err.code === 'invalid') throw new MeasureError(`--node "${name.slice(0, 64)}" is not a valid node name`);
    throw explainApiFailure(err);
  }
  const ready = condition(node, 'Ready');
  if (ready?.status !== 'True') {
    const since = typeof ready?.lastTransitionTime === 'string' ? ` since ${ready.lastTransitionTime}` : '';
    const why = [ready?.reason, ready?.message].filter((x) => typeof x === 'string' && x).join(': ').slice(0, 200);
    throw new MeasureError(`node "${name}" is not Ready (Ready=${String(ready?.status ?? 'missing')}${since}${why ? `: ${why}` : ''}); pods cannot start there, so there is nothing to measure`);
  }
  if (placement === 'scheduler' && node.spec?.unschedulable === true) {
    throw new MeasureError(`node "${name}" is cordoned (spec.unschedulable): the scheduler will not place pods there; kubectl uncordon ${name}, or measure without the scheduler with --placement node-name`);
  }
  return node;
}

async function someNodeNames(client: KubeClient): Promise<string> {
  try {
    let items: KubeObject[] = [];
    // One page: a few names to choose from, not the whole fleet.
    await client.listPages<KubeObject>(NODES, { limit: 6, metadataOnly: true, timeoutMs: 5_000 }, (page) => { items = page.items; return false; });
    const names = items.slice(0, 5).map((n) => n.metadata.name.slice(0, 63));
    return names.length > 0 ? ` (nodes: ${names.join(', ')}${items.length > 5 ? ', …' : ''})` : '';
  } catch {
    return '';
  }
}

const QUANTITY = /^(\d+)$/;

/** Pods the node can still take: allocatable pods minus the pods not yet finished on it; undefined when not stated. */
export async function roomOnNode(client: KubeClient, node: Obj, signal?: AbortSignal): Promise<{ room: number; allocatable: number; running: number } | undefined> {
  const raw = node.status?.allocatable?.pods;
  const match = typeof raw === 'string' ? QUANTITY.exec(raw) : undefined;
  if (!match) return undefined;
  const allocatable = Number(match[1]);
  let running = 0;
  try {
    await client.listPages(PODS, {
      fieldSelector: `spec.nodeName=${node.metadata.name},status.phase!=Succeeded,status.phase!=Failed`, limit: 500, metadataOnly: true,
      ...(signal ? { signal } : {}),
    }, (page) => { running += page.items.length; });
  } catch (err) {
    throw explainApiFailure(err);
  }
  return { room: Math.max(0, allocatable - running), allocatable, running };
}

/** The StorageClass exists; WaitForFirstConsumer needs the scheduler to pick the node before anything provisions. */
export async function checkStorageClass(client: KubeClient, name: string, placement: Placement, signal?: AbortSignal): Promise<Obj> {
  let sc: Obj;
  try {
    sc = await client.get(STORAGECLASSES, name, signal ? { signal } : {});
  } catch (err) {
    if (err instanceof KubeError && err.notFound) throw new MeasureError(`StorageClass "${name}" does not exist; --pvc-storage-class takes a name from kubectl get storageclass`);
    throw explainApiFailure(err);
  }
  if (placement === 'node-name' && sc.volumeBindingMode === 'WaitForFirstConsumer') {
    throw new MeasureError(`StorageClass "${name}" binds WaitForFirstConsumer: its volumes are provisioned once the scheduler picks a node, and --placement node-name bypasses the scheduler, so they never would; use --placement scheduler`);
  }
  return sc;
}
