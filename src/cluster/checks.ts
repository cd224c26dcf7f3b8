// The cluster-scope facts (Tekton, CSI sidecars), asking for no more than the checks use: the
// feature-flags ConfigMaps by name; PipelineRuns as metadata, then the newest 50 in full; PVCs one
// GET per claim workspace; workloads (not pods) to find Tekton's controller and the CSI sidecars,
// then a few of their running pods by the workload's selector; their log tails, bounded. Which
// workloads are the components' is decided by what a tenant cannot have (identity.ts): the
// ClusterRoleBindings are listed first, for the ServiceAccounts they name.
// Every list is paged through ClusterApi.scan; each page keeps only what matches.
import type { FactSet } from '../facts/fact-set.ts';
import { objectKey, type KubeObject, type Obj } from '../kube/objects.ts';
import {
  CLUSTERROLEBINDINGS, CONFIGMAPS, CSIDRIVERS, DAEMONSETS, DEPLOYMENTS, PERSISTENTVOLUMECLAIMS, PIPELINERUNS, PODS, resourceName, STATEFULSETS, STORAGECLASSES, type ResourceRef,
} from '../kube/resources.ts';
import { DEFAULT_LOG_BOUNDS, type ApiResult, type ClusterApi } from './api.ts';
import { MAX_PODS_PER_SIDECAR, sidecarFacts, throttleFacts, type LabelledLog } from './csi.ts';
import { addBindings, type ClusterBound } from './identity.ts';
import { controllerLimitFacts, RECENT_PIPELINERUNS, tektonInstalledFacts, trustedController, workspaceClaims, workspaceFacts } from './tekton.ts';
import { TopN } from './top.ts';
import { containersOf, SIDECAR_NAMES, sidecarsIn, TEKTON_NAMESPACES, WorkloadFinder, workloadLabel, type Found, type Sidecar, type Workload } from './workloads.ts';

/** PVCs read for claim workspaces, at most. */
const MAX_CLAIMS = 50;
/** Requests in flight at once for single GETs and log tails (lists are paged one request at a time). */
const POOL = 4;
const WINDOW = `last ${DEFAULT_LOG_BOUNDS.sinceSeconds / 60} min, ≤ ${DEFAULT_LOG_BOUNDS.tailLines} lines`;

const notRead = (why: string): ApiResult<Obj[]> => ({ ok: false, code: 'skipped', reason: why });

/** Runs `fn` over `items`, `POOL` at a time, results in order. */
async function pooled<T, R>(items: T[], fn: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => { while (next < items.length) { const i = next++; results[i] = await fn(items[i] as T); } };
  await Promise.all(Array.from({ length: Math.min(POOL, items.length) }, worker));
  return results;
}

/** A whole (small) list, each page reduced by `keep` as it arrives. */
async function collect(api: ClusterApi, ref: ResourceRef, opts: { fieldSelector?: string }, keep: (item: Obj) => Obj | undefined): Promise<ApiResult<Obj[]>> {
  const kept: Obj[] = [];
  const scanned = await api.scan(ref, opts, (items) => { for (const item of items) { const k = keep(item); if (k) kept.push(k); } });
  return scanned.ok ? { ok: true, value: kept } : scanned;
}

/** Tekton's feature-flags ConfigMaps (by name), only in its namespaces and the trusted controller's: a tenant's copy is not kept. */
function featureFlags(api: ClusterApi, controllerNamespace: string | undefined): Promise<ApiResult<Obj[]>> {
  const homes = controllerNamespace === undefined ? TEKTON_NAMESPACES : [...TEKTON_NAMESPACES, controllerNamespace];
  return collect(api, CONFIGMAPS, { fieldSelector: 'metadata.name=feature-flags' }, (cm) => (homes.includes(cm.metadata?.namespace) ? cm : undefined));
}

const newestFirst = (a: Obj, b: Obj): number => {
  const at = String(a.metadata?.creationTimestamp ?? '');
  const bt = String(b.metadata?.creationTimestamp ?? '');
  return at > bt ? -1 : at < bt ? 1 : objectKey(a as KubeObject) < objectKey(b as KubeObject) ? -1 : 1;
};

/** The newest PipelineRuns: names and times from a metadata-only list, then each of them in full. */
async function recentPipelineRuns(api: ClusterApi): Promise<ApiResult<Obj[]>> {
  const newest = new TopN<Obj>(RECENT_PIPELINERUNS, newestFirst);
  const scanned = await api.scan(PIPELINERUNS, { metadataOnly: true }, (items) => {
    for (const item of items) newest.offer({ metadata: { name: item.metadata.name, namespace: item.metadata.namespace, creationTimestamp: item.metadata.creationTimestamp } });
  });
  if (!scanned.ok) return scanned;
  const got = await pooled(newest.sorted(), (run) => api.get(PIPELINERUNS, run.metadata.namespace, run.metadata.name));
  // A run deleted since the list is simply gone; any other failure is the answer.
  const failed = got.find((g) => !g.ok && g.code !== '404');
  if (failed && !failed.ok) return failed;
  return { ok: true, value: got.flatMap((g) => (g.ok ? [{ metadata: g.value.metadata, spec: { workspaces: g.value.spec?.workspaces } }] : [])) };
}

/** One GET per distinct claim workspace's PVC. */
async function claimedPvcs(api: ClusterApi, runs: Obj[]): Promise<Map<string, ApiResult<Obj>>> {
  const keys = [...new Set(workspaceClaims(runs).filter((c) => c.shape === 'claim').map((c) => `${c.namespace}/${c.claimName}`))].slice(0, MAX_CLAIMS);
  const got = await pooled(keys, (key) => {
    const [namespace, name] = key.split('/') as [string, string];
    return api.get(PERSISTENTVOLUMECLAIMS, namespace, name);
  });
  return new Map(keys.map((key, i) => [key, got[i] as ApiResult<Obj>]));
}

async function tektonFacts(api: ClusterApi, facts: FactSet, controllerNamespace: string | undefined): Promise<void> {
  const flags = await featureFlags(api, controllerNamespace);
  const runs = await recentPipelineRuns(api);
  tektonInstalledFacts(facts, flags, runs, controllerNamespace);
  const claims = runs.ok ? workspaceClaims(runs.value) : [];
  const pvcs = runs.ok && claims.some((c) => c.shape === 'claim') ? await claimedPvcs(api, runs.value) : new Map<string, ApiResult<Obj>>();
  const needClasses = claims.some((c) => c.shape === 'template' || pvcs.get(`${c.namespace}/${c.claimName}`)?.ok);
  const classes = needClasses ? await collect(api, STORAGECLASSES, {}, (sc) => ({ metadata: sc.metadata, provisioner: sc.provisioner })) : notRead('no PVC workspaces');
  const drivers = needClasses ? await collect(api, CSIDRIVERS, {}, (d) => ({ metadata: { name: d.metadata?.name }, spec: { attachRequired: d.spec?.attachRequired } })) : notRead('no PVC workspaces');
  workspaceFacts(facts, runs, (namespace, name) => pvcs.get(`${namespace}/${name}`), { classes, drivers });
}

/** The ServiceAccounts ClusterRoleBindings name (only cluster admins create those), or why they could not be listed. */
async function clusterBound(api: ClusterApi): Promise<ClusterBound> {
  const bound = new Map<string, string>();
  const scanned = await api.scan(CLUSTERROLEBINDINGS, {}, (items) => addBindings(bound, items));
  return scanned.ok ? { ok: true, value: bound } : scanned;
}

/** Deployments, StatefulSets and DaemonSets of all namespaces, keeping Tekton's controller and CSI sidecar workloads. */
async function findWorkloads(api: ClusterApi): Promise<{ finder: WorkloadFinder; failures: string[] }> {
  const finder = new WorkloadFinder(await clusterBound(api));
  const failures: string[] = [];
  for (const ref of [DEPLOYMENTS, STATEFULSETS, DAEMONSETS]) {
    const scanned = await api.scan(ref, {}, (items) => finder.add(ref.kind, items));
    if (!scanned.ok) failures.push(`${resourceName(ref)}: ${scanned.reason}`);
  }
  return { finder, failures };
}

/** Found workloads; when none was found and a list failed, why absence cannot be told. */
function found(workloads: Found, failures: string[]): ApiResult<Found> {
  const any = workloads.trusted.length > 0 || workloads.untrusted.count > 0;
  return any || failures.length === 0 ? { ok: true, value: workloads } : { ok: false, code: 'list', reason: failures.join('; ') };
}

/** Up to `limit` running pods of a workload, by its own selector. */
async function runningPods(api: ClusterApi, workload: Workload, limit: number): Promise<ApiResult<Obj[]>> {
  if (workload.selector === undefined) return { ok: false, code: 'selector', reason: `its pods cannot be selected: ${workload.problem ?? 'no selector'}` };
  const listed = await api.firstItems(PODS, { namespace: workload.namespace, labelSelector: workload.selector, fieldSelector: 'status.phase=Running' }, limit);
  if (!listed.ok) return listed;
  if (listed.value.length === 0) return { ok: false, code: 'none', reason: 'no running pod' };
  return listed;
}

/** The log tails of ≤ MAX_PODS_PER_SIDECAR running pods per sidecar; workloads whose pods cannot be read count as failed reads. */
async function sidecarLogs(api: ClusterApi, workloads: Workload[]): Promise<Record<Sidecar, LabelledLog[]>> {
  const reads = Object.fromEntries(SIDECAR_NAMES.map((s) => [s, [] as LabelledLog[]])) as Record<Sidecar, LabelledLog[]>;
  const jobs: { sidecar: Sidecar; label: string; read: () => Promise<ApiResult<string>> }[] = [];
  for (const workload of workloads) {
    const wanted = sidecarsIn(workload.containers).filter((s) => jobs.filter((j) => j.sidecar === s).length < MAX_PODS_PER_SIDECAR);
    if (wanted.length === 0) continue;
    const pods = await runningPods(api, workload, MAX_PODS_PER_SIDECAR);
    for (const sidecar of wanted) {
      if (!pods.ok) {
        reads[sidecar].push({ label: workloadLabel(workload), log: pods });
        continue;
      }
      const room = MAX_PODS_PER_SIDECAR - jobs.filter((j) => j.sidecar === sidecar).length;
      for (const pod of pods.value.slice(0, room)) {
        const container = containersOf(pod.spec).find((c) => sidecarsIn([c]).includes(sidecar));
        if (!container) continue;
        const { namespace, name } = pod.metadata;
        jobs.push({ sidecar, label: `${namespace}/${name} ${container.name}`, read: () => api.readLog(namespace, name, container.name) });
      }
    }
  }
  const logs = await pooled(jobs, (job) => job.read());
  jobs.forEach((job, i) => reads[job.sidecar].push({ label: job.label, log: logs[i] as ApiResult<string> }));
  return reads;
}

async function controllerLog(api: ClusterApi, facts: FactSet, workloads: ApiResult<Found>): Promise<void> {
  const controller = controllerLimitFacts(facts, workloads);
  if (!controller) return;
  const pods = await runningPods(api, controller.workload, 1);
  const pod = pods.ok ? pods.value[0] : undefined;
  const read: LabelledLog = pod
    ? { label: `${pod.metadata.namespace}/${pod.metadata.name} ${controller.container.name}`, log: await api.readLog(pod.metadata.namespace, pod.metadata.name, controller.container.name) }
    : { label: workloadLabel(controller.workload), log: pods.ok ? { ok: false, code: 'none', reason: 'no running pod' } : pods };
  throttleFacts(facts, 'cluster.tekton.controller', [read], WINDOW);
}

export async function clusterCheckFacts(api: ClusterApi, facts: FactSet): Promise<void> {
  const { finder, failures } = await findWorkloads(api);
  const tekton = found(finder.tekton, failures);
  await tektonFacts(api, facts, trustedController(tekton)?.workload.namespace);
  await controllerLog(api, facts, tekton);
  const csi = found(finder.csi, failures);
  sidecarFacts(facts, csi, { reads: await sidecarLogs(api, csi.ok ? csi.value.trusted : []) }, WINDOW);
}
