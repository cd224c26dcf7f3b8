// Whether a workload is the component it looks like (Tekton's controller, a CSI driver's controller)
// or a tenant's look-alike. A container name or an image name is anyone's: a tenant who may create
// Deployments in its own namespace can run a container named tekton-pipelines-controller with any
// flags, or twenty images named csi-provisioner. What a tenant cannot have is the namespace the
// component's installer deploys into (only cluster admins write kube-system or tekton-pipelines) or
// a ServiceAccount a ClusterRoleBinding names (only cluster admins grant those, and every CSI
// controller and Tekton's controller needs one for its cluster-wide reads and writes).
import type { Obj } from '../kube/objects.ts';
import type { ApiResult } from './api.ts';

/** How sure `report` is that a workload is the component: its namespace, or an admin's binding of its ServiceAccount. */
export type Identity = { level: 'verified' | 'inferred'; why: string } | { level: 'untrusted'; why: string };

/** ServiceAccounts ("namespace/name") named by a ClusterRoleBinding, with that binding's name. */
export type ClusterBound = ApiResult<Map<string, string>>;

/** ServiceAccounts remembered at most (a cluster's ClusterRoleBindings name some hundreds). */
export const MAX_BOUND_ACCOUNTS = 20_000;

/** Folds a page of ClusterRoleBindings into the ServiceAccounts they name. */
export function addBindings(bound: Map<string, string>, items: Obj[]): void {
  for (const binding of items) {
    const subjects: unknown = binding.subjects;
    for (const subject of Array.isArray(subjects) ? subjects as Obj[] : []) {
      if (subject?.kind !== 'ServiceAccount' || typeof subject.name !== 'string' || typeof subject.namespace !== 'string') continue;
      const key = `${subject.namespace}/${subject.name}`;
      if (!bound.has(key) && bound.size < MAX_BOUND_ACCOUNTS) bound.set(key, String(binding.metadata?.name ?? '?'));
    }
  }
}

/** A workload's standing, from its namespace and its pod template's ServiceAccount. */
export function identify(namespace: string, serviceAccount: string, homes: readonly string[], bound: ClusterBound): Identity {
  if (homes.includes(namespace)) return { level: 'verified', why: `in ${namespace}, where only cluster admins deploy` };
  const account = `${namespace}/${serviceAccount}`;
  if (!bound.ok) return { level: 'untrusted', why: `in ${namespace}, and whether a ClusterRoleBinding names its ServiceAccount ${account} is unknown (cannot list clusterrolebindings: ${bound.reason}; manifests/readers grants it)` };
  const binding = bound.value.get(account);
  if (binding !== undefined) return { level: 'inferred', why: `its ServiceAccount ${account} is bound cluster-wide by ClusterRoleBinding ${binding}, which only cluster admins create` };
  return { level: 'untrusted', why: `in ${namespace} with ServiceAccount ${account}, which no ClusterRoleBinding names: any tenant can run such a workload` };
}

export const IDENTITY_RANK = { verified: 0, inferred: 1, untrusted: 2 } as const;
