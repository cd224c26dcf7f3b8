// The resources the project reads and writes, and their REST paths. A resource is data (group,
// version, plural, scope), so a caller can name one this file does not list (a CRD) with `resource()`.

export interface ResourceRef {
  /** '' for the core group. */
  group: string;
  version: string;
  plural: string;
  namespaced: boolean;
  kind: string;
}

/** plural[.group] as kubectl and RBAC name it: "pods", "csidrivers.storage.k8s.io". */
export function resourceName(ref: { plural: string; group?: string }): string {
  return ref.group ? `${ref.plural}.${ref.group}` : ref.plural;
}

export function resource(group: string, version: string, plural: string, kind: string, namespaced: boolean): ResourceRef {
  return { group, version, plural, kind, namespaced };
}

export const NODES = resource('', 'v1', 'nodes', 'Node', false);
export const NAMESPACES = resource('', 'v1', 'namespaces', 'Namespace', false);
export const PODS = resource('', 'v1', 'pods', 'Pod', true);
export const EVENTS = resource('', 'v1', 'events', 'Event', true);
export const CONFIGMAPS = resource('', 'v1', 'configmaps', 'ConfigMap', true);
export const SERVICEACCOUNTS = resource('', 'v1', 'serviceaccounts', 'ServiceAccount', true);
export const PERSISTENTVOLUMECLAIMS = resource('', 'v1', 'persistentvolumeclaims', 'PersistentVolumeClaim', true);
export const STORAGECLASSES = resource('storage.k8s.io', 'v1', 'storageclasses', 'StorageClass', false);
export const CSIDRIVERS = resource('storage.k8s.io', 'v1', 'csidrivers', 'CSIDriver', false);
export const CSINODES = resource('storage.k8s.io', 'v1', 'csinodes', 'CSINode', false);
export const SELFSUBJECTACCESSREVIEWS = resource('authorization.k8s.io', 'v1', 'selfsubjectaccessreviews', 'SelfSubjectAccessReview', false);
/** Not a resource: /version, named so that errors and request counts can say what was asked. */
export const VERSION = resource('', 'v1', 'version', 'Version', false);
export const PIPELINERUNS = resource('tekton.dev', 'v1', 'pipelineruns', 'PipelineRun', true);
export const DEPLOYMENTS = resource('apps', 'v1', 'deployments', 'Deployment', true);
export const STATEFULSETS = resource('apps', 'v1', 'statefulsets', 'StatefulSet', true);
export const DAEMONSETS = resource('apps', 'v1', 'daemonsets', 'DaemonSet', true);
export const LEASES = resource('coordination.k8s.io', 'v1', 'leases', 'Lease', true);
export const CLUSTERROLEBINDINGS = resource('rbac.authorization.k8s.io', 'v1', 'clusterrolebindings', 'ClusterRoleBinding', false);
export const ROLEBINDINGS = resource('rbac.authorization.k8s.io', 'v1', 'rolebindings', 'RoleBinding', true);

const SEGMENT = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,252}$/;

/** A name or namespace as one path segment; anything else (a slash, "..", empty) is refused, not escaped. */
export function pathSegment(what: string, value: string): string {
  if (!SEGMENT.test(value) || value.includes('..')) throw new Error(`${what} "${value.slice(0, 64)}" is not a valid Kubernetes name`);
  return value;
}

/**
 * /api/v1/nodes, /api/v1/namespaces/NS/pods/NAME/log, /apis/storage.k8s.io/v1/csidrivers. Without a
 * namespace a namespaced resource is addressed across all namespaces (lists and watches only).
 */
export function resourcePath(ref: ResourceRef, at: { namespace?: string; name?: string; subresource?: string } = {}): string {
  const base = ref.group ? `/apis/${ref.group}/${ref.version}` : `/api/${ref.version}`;
  const scope = ref.namespaced && at.namespace !== undefined ? `/namespaces/${pathSegment('namespace', at.namespace)}` : '';
  const name = at.name !== undefined ? `/${pathSegment('name', at.name)}` : '';
  const sub = at.subresource !== undefined && at.name !== undefined ? `/${pathSegment('subresource', at.subresource)}` : '';
  return `${base}${scope}/${ref.plural}${name}${sub}`;
}
