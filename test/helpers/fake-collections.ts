// Read-only collections for the kube-apiserver stand-in: what `report` reads (ConfigMaps, Pods and
// their logs, PVCs, StorageClasses, CSIDrivers, Tekton PipelineRuns, workloads, ClusterRoleBindings), listed or by name. Real paths, real list shapes,
// real field/label selector semantics for the forms used here; logs honour tailLines, limitBytes and
// sinceSeconds. Stored log lines start with their RFC 3339 time, which is sent only with timestamps=true.
import type { ServerResponse } from 'node:http';
import { tailLog } from './kubelet-logs.ts';

type Obj = Record<string, any>;

interface Kind {
  kind: string;
  apiVersion: string;
  /** List path for all namespaces (or the cluster-scoped list). */
  path: string;
  namespaced: boolean;
}

export const KINDS: Record<string, Kind> = {
  configmaps: { kind: 'ConfigMap', apiVersion: 'v1', path: '/api/v1/configmaps', namespaced: true },
  pods: { kind: 'Pod', apiVersion: 'v1', path: '/api/v1/pods', namespaced: true },
  persistentvolumeclaims: { kind: 'PersistentVolumeClaim', apiVersion: 'v1', path: '/api/v1/persistentvolumeclaims', namespaced: true },
  storageclasses: { kind: 'StorageClass', apiVersion: 'storage.k8s.io/v1', path: '/apis/storage.k8s.io/v1/storageclasses', namespaced: false },
  csidrivers: { kind: 'CSIDriver', apiVersion: 'storage.k8s.io/v1', path: '/apis/storage.k8s.io/v1/csidrivers', namespaced: false },
  pipelineruns: { kind: 'PipelineRun', apiVersion: 'tekton.dev/v1', path: '/apis/tekton.dev/v1/pipelineruns', namespaced: true },
  deployments: { kind: 'Deployment', apiVersion: 'apps/v1', path: '/apis/apps/v1/deployments', namespaced: true },
  statefulsets: { kind: 'StatefulSet', apiVersion: 'apps/v1', path: '/apis/apps/v1/statefulsets', namespaced: true },
  daemonsets: { kind: 'DaemonSet', apiVersion: 'apps/v1', path: '/apis/apps/v1/daemonsets', namespaced: true },
  clusterrolebindings: { kind: 'ClusterRoleBinding', apiVersion: 'rbac.authorization.k8s.io/v1', path: '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', namespaced: false },
};

export class FakeCollections {
  private readonly objects = new Map<string, Obj[]>();
  private readonly logs = new Map<string, string>();
  /** Tekton's CRDs: without them /apis/tekton.dev/v1/… answers 404, as on a cluster without Tekton. */
  tektonInstalled = false;

  add(plural: keyof typeof KINDS, object: Obj): Obj {
    const kind = KINDS[plural] as Kind;
    if (plural === 'pipelineruns') this.tektonInstalled = true;
    const stored: Obj = { apiVersion: kind.apiVersion, kind: kind.kind, ...apiDefaults(plural, object) };
    stored.metadata = { uid: `uid-${plural}-${this.count(plural)}`, creationTimestamp: '2026-11-30T10:00:00Z', ...object.metadata };
    this.objects.set(plural, [...(this.objects.get(plural) ?? []), stored]);
    return stored;
  }

  setLog(namespace: string, pod: string, container: string, text: string): void {
    this.logs.set(`${namespace}/${pod}/${container}`, text);
  }

  count(plural: string): number {
    return this.objects.get(plural)?.length ?? 0;
  }

  /** Answers the request when it is one of ours; false lets the caller route it. */
  route(method: string, url: URL, rv: number, res: ServerResponse): boolean {
    if (method !== 'GET') return false;
    const log = /^\/api\/v1\/namespaces\/([^/]+)\/pods\/([^/]+)\/log$/.exec(url.pathname);
    if (log) return this.sendLog(log[1] as string, log[2] as string, url, res);
    for (const [plural, kind] of Object.entries(KINDS)) {
      const prefix = kind.path.replace(new RegExp(`/${plural}$`), '');
      const named = new RegExp(`^${prefix}${kind.namespaced ? '/namespaces/([^/]+)' : '()'}/${plural}/([^/]+)$`).exec(url.pathname);
      if (named) {
        if (plural === 'pipelineruns' && !this.tektonInstalled) return reply(res, 404, status(404, 'NotFound', 'the server could not find the requested resource'));
        const found = (this.objects.get(plural) ?? []).find((o) => o.metadata.name === named[2] && (!kind.namespaced || o.metadata.namespace === named[1]));
        return found ? reply(res, 200, found) : reply(res, 404, status(404, 'NotFound', `${plural} "${named[2]}" not found`));
      }
      const namespaced = kind.namespaced ? new RegExp(`^${kind.path.replace(new RegExp(`/${plural}$`), '')}/namespaces/([^/]+)/${plural}$`).exec(url.pathname) : null;
      if (url.pathname !== kind.path && !namespaced) continue;
      if (plural === 'pipelineruns' && !this.tektonInstalled) {
        return reply(res, 404, status(404, 'NotFound', 'the server could not find the requested resource'));
      }
      const selected = selectObjects(this.objects.get(plural) ?? [], url, namespaced?.[1]);
      if (typeof selected === 'string') return reply(res, 400, status(400, 'BadRequest', selected));
      return reply(res, 200, { apiVersion: kind.apiVersion, kind: `${kind.kind}List`, metadata: { resourceVersion: String(rv) }, items: selected });
    }
    return false;
  }

  private sendLog(namespace: string, pod: string, url: URL, res: ServerResponse): boolean {
    const podObj = (this.objects.get('pods') ?? []).find((p) => p.metadata.namespace === namespace && p.metadata.name === pod);
    if (!podObj) return reply(res, 404, status(404, 'NotFound', `pods "${pod}" not found`));
    const containers: Obj[] = podObj.spec?.containers ?? [];
    const container = url.searchParams.get('container') ?? (containers.length === 1 ? containers[0]?.name : undefined);
    if (!container) {
      return reply(res, 400, status(400, 'BadRequest', `a container name must be specified for pod ${pod}, choose one of: [${containers.map((c) => c.name).join(' ')}]`));
    }
    const text = tailLog(this.logs.get(`${namespace}/${pod}/${container}`) ?? '', url.searchParams);
    res.writeHead(200, { 'content-type': 'text/plain' }).end(text);
    return true;
  }
}

/**
 * What kube-apiserver fills in on create: CSIDriver.spec.attachRequired defaults to true, so a real
 * server never returns it unset (the code reads unset as true all the same).
 */
export function apiDefaults(plural: string, object: Obj): Obj {
  if (plural !== 'csidrivers' || object.spec?.attachRequired !== undefined) return object;
  return { ...object, spec: { ...object.spec, attachRequired: true } };
}

function selectObjects(objects: Obj[], url: URL, namespace: string | undefined): Obj[] | string {
  const fields = parseSelector(url.searchParams.get('fieldSelector') ?? '');
  const labels = parseSelector(url.searchParams.get('labelSelector') ?? '');
  if (typeof fields === 'string') return fields;
  if (typeof labels === 'string') return labels;
  const field = (o: Obj, path: string): string => path.split('.').reduce((v: any, k) => v?.[k], o) ?? '';
  let items = objects.filter((o) => namespace === undefined || o.metadata.namespace === namespace)
    .filter((o) => fields.every((t) => t.matches(field(o, t.key))))
    .filter((o) => labels.every((t) => t.matches(o.metadata.labels?.[t.key])));
  const limit = Number(url.searchParams.get('limit') ?? '0');
  if (limit > 0) items = items.slice(0, limit);
  return items;
}

interface Term {
  key: string;
  matches(value: string | undefined): boolean;
}

/** k=v, k==v, k!=v, k, !k joined by commas (the selector forms kubectl and client-go send most). */
export function parseSelector(selector: string): Term[] | string {
  const terms: Term[] = [];
  for (const part of selector.split(',').map((p) => p.trim()).filter(Boolean)) {
    const m = /^(!?)([A-Za-z0-9._/-]+)(?:\s*(==|=|!=)\s*([A-Za-z0-9._-]*))?$/.exec(part);
    if (!m) return `unable to parse requirement: ${part}`;
    const [, not, key, op, want] = m as unknown as [string, string, string, string | undefined, string | undefined];
    if (not && op) return `unable to parse requirement: ${part}`;
    if (op === '!=') terms.push({ key, matches: (v) => v !== want });
    else if (op) terms.push({ key, matches: (v) => v === want });
    else terms.push({ key, matches: (v) => (not ? v === undefined : v !== undefined) });
  }
  return terms;
}

function status(code: number, reason: string, message: string): Obj {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code };
}

function reply(res: ServerResponse, code: number, body: unknown): true {
  res.writeHead(code, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  return true;
}
