// Tekton's controller and the CSI sidecars, found through their workloads instead of every pod:
// Deployments, StatefulSets and DaemonSets are far fewer objects, and their pod templates name the
// containers and images. Only the matching workloads are kept from each page; their running pods
// are then read with the workload's own label selector, a handful at most.
import { containerArgs, imageParts } from './logs.ts';
import type { Obj } from '../kube/objects.ts';

export const TEKTON_CONTROLLER_CONTAINERS = ['tekton-pipelines-controller', 'openshift-pipelines-controller'];

/** CSI sidecar → its image name. */
export const SIDECARS = {
  'external-provisioner': 'csi-provisioner',
  'external-attacher': 'csi-attacher',
  'external-resizer': 'csi-resizer',
} as const;
export type Sidecar = keyof typeof SIDECARS;
export const SIDECAR_NAMES = Object.keys(SIDECARS) as Sidecar[];

/** Workloads kept per target: a cluster runs one Tekton and a few CSI drivers. */
export const MAX_WORKLOADS = 20;

export interface Container {
  name: string;
  image: string;
  args: string[];
}

export interface Workload {
  /** Deployment, StatefulSet or DaemonSet. */
  kind: string;
  namespace: string;
  name: string;
  /** The workload's pod selector as a label selector; undefined when it has none usable (see problem). */
  selector?: string;
  problem?: string;
  containers: Container[];
}

export function workloadLabel(w: Pick<Workload, 'kind' | 'namespace' | 'name'>): string {
  return `${w.namespace}/${w.name} (${w.kind})`;
}

const KEY = /^([a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
const VALUE = /^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$/;

/** A LabelSelector (matchLabels, matchExpressions) as the `labelSelector` query string; a string saying why not otherwise. */
export function selectorString(selector: unknown): { selector: string } | { problem: string } {
  const sel = (selector ?? {}) as Obj;
  const terms: string[] = [];
  for (const [key, value] of Object.entries((sel.matchLabels ?? {}) as Obj)) {
    if (!KEY.test(key) || typeof value !== 'string' || !VALUE.test(value)) return { problem: 'matchLabels is not a valid label selector' };
    terms.push(`${key}=${value}`);
  }
  for (const expr of Array.isArray(sel.matchExpressions) ? sel.matchExpressions as Obj[] : []) {
    const key = String(expr?.key ?? '');
    const values: unknown[] = Array.isArray(expr?.values) ? expr.values : [];
    if (!KEY.test(key) || !values.every((v) => typeof v === 'string' && VALUE.test(v))) return { problem: 'matchExpressions is not a valid label selector' };
    const term = { In: `${key} in (${values.join(',')})`, NotIn: `${key} notin (${values.join(',')})`, Exists: key, DoesNotExist: `!${key}` }[String(expr?.operator)];
    if (term === undefined) return { problem: `matchExpressions operator ${String(expr?.operator).slice(0, 20)} is not one of In, NotIn, Exists, DoesNotExist` };
    terms.push(term);
  }
  return terms.length > 0 ? { selector: terms.join(',') } : { problem: 'its selector is empty' };
}

export function containersOf(spec: Obj | undefined): Container[] {
  const containers: unknown = spec?.containers;
  return (Array.isArray(containers) ? containers as Obj[] : [])
    .map((c) => ({ name: String(c?.name ?? ''), image: String(c?.image ?? ''), args: containerArgs(c ?? {}) }));
}

export function sidecarsIn(containers: Container[]): Sidecar[] {
  return SIDECAR_NAMES.filter((s) => containers.some((c) => imageParts(c.image).name === SIDECARS[s]));
}

export function tektonControllerIn(containers: Container[]): Container | undefined {
  return containers.find((c) => TEKTON_CONTROLLER_CONTAINERS.includes(c.name));
}

/** Folds pages of Deployments, StatefulSets and DaemonSets into the few workloads `report` reads. */
export class WorkloadFinder {
  readonly tekton: Workload[] = [];
  readonly csi: Workload[] = [];

  add(kind: string, items: Obj[]): void {
    for (const item of items) {
      const containers = containersOf(item.spec?.template?.spec);
      const isTekton = tektonControllerIn(containers) !== undefined;
      const isCsi = sidecarsIn(containers).length > 0;
      if (!isTekton && !isCsi) continue;
      const selected = selectorString(item.spec?.selector);
      const workload: Workload = {
        kind, namespace: String(item.metadata?.namespace ?? ''), name: String(item.metadata?.name ?? ''), containers,
        ...('selector' in selected ? { selector: selected.selector } : { problem: selected.problem }),
      };
      if (isTekton && this.tekton.length < MAX_WORKLOADS) this.tekton.push(workload);
      if (isCsi && this.csi.length < MAX_WORKLOADS) this.csi.push(workload);
    }
  }
}
