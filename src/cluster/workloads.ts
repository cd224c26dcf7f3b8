// Tekton's controller and the CSI sidecars, found through their workloads instead of every pod:
// Deployments, StatefulSets and DaemonSets are far fewer objects, and their pod templates name the
// containers and images. Only the matching workloads are kept from each page, the ones `report` can
// trust first (identity.ts: the component's namespace, else a ServiceAccount an admin bound
// cluster-wide), so tenants' look-alikes neither fill the slots nor decide a fact; their running pods
// are then read with the workload's own label selector, a handful at most.
import { IDENTITY_RANK, identify, type ClusterBound, type Identity } from './identity.ts';
import { containerArgs, imageParts } from './logs.ts';
import { TopN } from './top.ts';
import type { Obj } from '../kube/objects.ts';

export const TEKTON_CONTROLLER_CONTAINERS = ['tekton-pipelines-controller', 'openshift-pipelines-controller'];
/** Where Tekton's release (tekton-pipelines) and OpenShift Pipelines (openshift-pipelines) install it. */
export const TEKTON_NAMESPACES = ['tekton-pipelines', 'openshift-pipelines'];
/** CSI controllers elsewhere are trusted by their ServiceAccount's ClusterRoleBinding. */
export const CSI_NAMESPACES = ['kube-system'];

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
  /** Its pod template's ServiceAccount. */
  serviceAccount: string;
  /** Whether it is the component's, and why. */
  identity: Identity;
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

/** The workloads of one component: the trusted ones kept (best first), tenants' look-alikes only counted. */
export interface Found {
  trusted: Workload[];
  untrusted: { count: number; examples: string[] };
}

const MAX_UNTRUSTED_EXAMPLES = 3;
const byStanding = (a: Workload, b: Workload): number => IDENTITY_RANK[a.identity.level] - IDENTITY_RANK[b.identity.level]
  || (a.namespace < b.namespace ? -1 : a.namespace > b.namespace ? 1 : a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

class Candidates {
  private readonly kept = new TopN<Workload>(MAX_WORKLOADS, byStanding);
  private readonly untrusted: Found['untrusted'] = { count: 0, examples: [] };

  offer(workload: Workload): void {
    if (workload.identity.level !== 'untrusted') {
      this.kept.offer(workload);
      return;
    }
    this.untrusted.count += 1;
    if (this.untrusted.examples.length < MAX_UNTRUSTED_EXAMPLES) this.untrusted.examples.push(`${workloadLabel(workload)}: ${workload.identity.why}`);
  }

  found(): Found {
    return { trusted: this.kept.sorted(), untrusted: this.untrusted };
  }
}

/** "3 workloads run …, none of them …: e.g. a (why); b (why)": why look-alikes decide nothing. */
export function untrustedText(untrusted: Found['untrusted'], what: string): string {
  return `${untrusted.count} workload(s) run ${what} but none is the component's for sure, so none is used: ${untrusted.examples.join('; ')}${untrusted.count > untrusted.examples.length ? '; …' : ''}`;
}

/** Folds pages of Deployments, StatefulSets and DaemonSets into the few workloads `report` reads. */
export class WorkloadFinder {
  private readonly tektonCandidates = new Candidates();
  private readonly csiCandidates = new Candidates();
  private readonly bound: ClusterBound;

  /** `bound`: the ServiceAccounts ClusterRoleBindings name (or why they could not be listed). */
  constructor(bound: ClusterBound) {
    this.bound = bound;
  }

  get tekton(): Found {
    return this.tektonCandidates.found();
  }

  get csi(): Found {
    return this.csiCandidates.found();
  }

  add(kind: string, items: Obj[]): void {
    for (const item of items) {
      const template = item.spec?.template?.spec;
      const containers = containersOf(template);
      const isTekton = tektonControllerIn(containers) !== undefined;
      const isCsi = sidecarsIn(containers).length > 0;
      if (!isTekton && !isCsi) continue;
      const selected = selectorString(item.spec?.selector);
      const namespace = String(item.metadata?.namespace ?? '');
      const serviceAccount = String(template?.serviceAccountName ?? template?.serviceAccount ?? 'default');
      const base = {
        kind, namespace, name: String(item.metadata?.name ?? ''), serviceAccount, containers,
        ...('selector' in selected ? { selector: selected.selector } : { problem: selected.problem }),
      };
      if (isTekton) this.tektonCandidates.offer({ ...base, identity: identify(namespace, serviceAccount, TEKTON_NAMESPACES, this.bound) });
      if (isCsi) this.csiCandidates.offer({ ...base, identity: identify(namespace, serviceAccount, CSI_NAMESPACES, this.bound) });
    }
  }
}
