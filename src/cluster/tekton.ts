// Tekton facts (cluster.tekton.*): the affinity-assistant mode from the feature-flags ConfigMap, the
// workspaces of recent PipelineRuns with their access modes and attach requirement, and the
// controller's client limits. Mode logic follows Tekton's GetAffinityAssistantBehavior.
import type { FactSet } from '../facts/fact-set.ts';
import type { ApiResult } from './api.ts';
import { flagValue } from './logs.ts';
import { attachFor, shortModes, singleNode, type StorageView } from './storage.ts';
import { TEKTON_NAMESPACES, tektonControllerIn, untrustedText, workloadLabel, type Container, type Found, type Workload } from './workloads.ts';
import { byCodePoint } from '../order.ts';
import type { Obj } from '../kube/objects.ts';

/** PipelineRuns looked at: the most recent ones. */
export const RECENT_PIPELINERUNS = 50;
const SRC_FLAGS = 'api:configmaps/feature-flags';
const SRC_RUNS = 'api:pipelineruns.tekton.dev';

/**
 * Tekton's feature-flags ConfigMap: the one in Tekton's namespaces, else in the namespace of the
 * controller `report` trusts. A label is anyone's: a tenant's labelled copy elsewhere is not read.
 */
export function tektonFeatureFlags(configMaps: Obj[], controllerNamespace?: string): Obj | undefined {
  const homes = controllerNamespace === undefined ? TEKTON_NAMESPACES : [...TEKTON_NAMESPACES, controllerNamespace];
  for (const home of homes) {
    const cm = configMaps.find((c) => c.metadata?.namespace === home);
    if (cm) return cm;
  }
  return undefined;
}

/** per-workspace | per-pipelinerun | isolate-pipelinerun | disabled, and how it was decided. */
export function affinityMode(data: Record<string, string>): { mode: string; detail: string } {
  const coschedule = data.coschedule ?? 'workspaces';
  const disableRaw = data['disable-affinity-assistant'];
  const shown = `coschedule: ${data.coschedule ?? '(unset: workspaces)'}, disable-affinity-assistant: ${disableRaw ?? '(unset)'}`;
  const byCoschedule: Record<string, string> = { pipelineruns: 'per-pipelinerun', 'isolate-pipelinerun': 'isolate-pipelinerun', workspaces: 'per-workspace', disabled: 'disabled' };
  if (disableRaw === undefined) return { mode: byCoschedule[coschedule] ?? `unknown (${coschedule})`, detail: shown };
  if (disableRaw.trim().toLowerCase() !== 'true') return { mode: 'per-workspace', detail: shown };
  // disable-affinity-assistant: true turns the per-workspace assistant off; coschedule may add a per-run one.
  const mode = coschedule === 'pipelineruns' || coschedule === 'isolate-pipelinerun' ? byCoschedule[coschedule] as string : 'disabled';
  return { mode, detail: shown };
}

export function tektonInstalledFacts(facts: FactSet, flags: ApiResult<Obj[]>, runs: ApiResult<Obj[]>, controllerNamespace?: string): void {
  const cm = flags.ok ? tektonFeatureFlags(flags.value, controllerNamespace) : undefined;
  if (cm || runs.ok) {
    const where = cm ? `feature-flags in ${cm.metadata.namespace}` : 'tekton.dev/v1 PipelineRuns served';
    facts.set('cluster.tekton.installed', true, cm ? SRC_FLAGS : SRC_RUNS, where);
  } else if (flags.ok && !runs.ok && runs.code === '404') {
    facts.set('cluster.tekton.installed', false, SRC_RUNS, 'no Tekton feature-flags ConfigMap; tekton.dev/v1 pipelineruns not served (404)');
  } else {
    facts.unknown('cluster.tekton.installed', `cannot tell: ${[flags, runs].filter((r) => !r.ok).map((r) => (r.ok ? '' : r.reason)).join('; ')}`);
  }
  if (!cm) {
    facts.unknown('cluster.tekton.affinityAssistant', flags.ok ? 'no Tekton feature-flags ConfigMap found' : `cannot list ConfigMaps: ${flags.reason}`);
    return;
  }
  const { mode, detail } = affinityMode(cm.data ?? {});
  facts.set('cluster.tekton.affinityAssistant', mode, `${SRC_FLAGS} (${cm.metadata.namespace})`, detail);
}

export interface WorkspaceClaim {
  run: string;
  namespace: string;
  workspace: string;
  shape: 'claim' | 'template';
  claimName?: string;
  accessModes?: string[];
  storageClassName?: string;
}

/** PVC-backed workspaces of the most recent PipelineRuns; emptyDir, ConfigMap, Secret and the like are skipped. */
export function workspaceClaims(runs: Obj[]): WorkspaceClaim[] {
  const recent = [...runs].sort((a, b) => byCodePoint(String(b.metadata?.creationTimestamp ?? ''), String(a.metadata?.creationTimestamp ?? '')))
    .slice(0, RECENT_PIPELINERUNS);
  return recent.flatMap((run) => ((run.spec?.workspaces ?? []) as Obj[]).flatMap((ws): WorkspaceClaim[] => {
    const base = { run: `${run.metadata?.namespace}/${run.metadata?.name}`, namespace: String(run.metadata?.namespace), workspace: String(ws.name) };
    if (ws.persistentVolumeClaim?.claimName) return [{ ...base, shape: 'claim', claimName: String(ws.persistentVolumeClaim.claimName) }];
    const spec = ws.volumeClaimTemplate?.spec;
    if (!spec) return [];
    return [{ ...base, shape: 'template', accessModes: (spec.accessModes ?? []).map(String), ...(spec.storageClassName !== undefined ? { storageClassName: String(spec.storageClassName) } : {}) }];
  }));
}

interface Resolved { claim: WorkspaceClaim; accessModes: string[] | null; attach: boolean | null; text: string }

/** A claim workspace's PVC, read with one GET per claim: found, missing (404), or why it could not be read. */
export type ClaimLookup = (namespace: string, name: string) => ApiResult<Obj> | undefined;

function resolve(claim: WorkspaceClaim, pvcOf: ClaimLookup, view: StorageView): Resolved {
  let accessModes = claim.accessModes ?? null;
  let storageClassName = claim.storageClassName;
  let origin = 'volumeClaimTemplate';
  if (claim.shape === 'claim') {
    origin = `claim ${claim.claimName}`;
    const got = pvcOf(claim.namespace, claim.claimName as string);
    const pvc = got?.ok ? got.value : undefined;
    accessModes = pvc ? (pvc.status?.accessModes ?? pvc.spec?.accessModes ?? []).map(String) : null;
    storageClassName = pvc?.spec?.storageClassName ?? undefined;
    if (!pvc) {
      const why = got === undefined ? 'PVC not read' : !got.ok && got.code === '404' ? 'PVC not found' : `cannot read the PVC: ${got.ok ? '' : got.reason}`;
      return { claim, accessModes: null, attach: null, text: `${claim.run} ${claim.workspace}: ${origin}, ${why}` };
    }
  }
  const attach = attachFor(storageClassName, view);
  const sc = attach.storageClass ?? 'no class';
  return { claim, accessModes, attach: attach.attach, text: `${claim.run} ${claim.workspace}: ${origin} ${shortModes(accessModes ?? [])}, ${sc} (${attach.detail})` };
}

/** A count that is decided when something was found, or when nothing was left undecided. */
function setCount(facts: FactSet, key: string, found: number, undecided: number, source: string, detail: string): void {
  if (found === 0 && undecided > 0) facts.unknown(key, `${undecided} workspace(s) could not be resolved: ${detail}`, source);
  else facts.set(key, found, source, detail);
}

export function workspaceFacts(facts: FactSet, runs: ApiResult<Obj[]>, pvcOf: ClaimLookup, view: StorageView): void {
  const keys = ['cluster.tekton.workspaces.singleNode', 'cluster.tekton.workspaces.attach', 'cluster.tekton.workspaces.pvc'];
  if (!runs.ok) {
    const reason = runs.code === '404' ? 'tekton.dev/v1 PipelineRuns are not served (Tekton absent or older than v0.44)' : `cannot list PipelineRuns: ${runs.reason}`;
    for (const key of keys) facts.unknown(key, reason, SRC_RUNS);
    return;
  }
  const resolved = workspaceClaims(runs.value).map((claim) => resolve(claim, pvcOf, view));
  const seen = Math.min(runs.value.length, RECENT_PIPELINERUNS);
  const source = `${SRC_RUNS} (${seen} most recent)`;
  facts.set('cluster.tekton.pipelineRuns', seen, source);
  facts.set('cluster.tekton.workspaces.pvc', resolved.length, source, resolved.map((r) => r.text).join('; ') || 'no PVC-backed workspaces');
  facts.set('cluster.tekton.workspaces.accessModes', [...new Set(resolved.flatMap((r) => r.accessModes ?? []))].sort(), source);
  const single = resolved.filter((r) => r.accessModes !== null && singleNode(r.accessModes));
  setCount(facts, 'cluster.tekton.workspaces.singleNode', single.length, resolved.filter((r) => r.accessModes === null).length, source,
    (single.length > 0 ? single : resolved.filter((r) => r.accessModes === null)).map((r) => r.text).join('; '));
  const attached = resolved.filter((r) => r.attach === true);
  setCount(facts, 'cluster.tekton.workspaces.attach', attached.length, resolved.filter((r) => r.attach === null).length, source,
    (attached.length > 0 ? attached : resolved.filter((r) => r.attach === null)).map((r) => r.text).join('; '));
}

export interface TektonController { workload: Workload; container: Container }

const WORKLOADS = 'api:deployments,statefulsets,daemonsets';
const LIMIT_KEYS = ['cluster.tekton.controller.kubeAPIQPS', 'cluster.tekton.controller.kubeAPIBurst'];

/** The controller `report` trusts (Tekton's namespace first, then a cluster-wide bound ServiceAccount), if any. */
export function trustedController(found: ApiResult<Found>): TektonController | undefined {
  const workload = found.ok ? found.value.trusted[0] : undefined;
  const container = workload ? tektonControllerIn(workload.containers) : undefined;
  return workload && container ? { workload, container } : undefined;
}

/**
 * Tekton's controller doubles its configured client limits (one client for two controllers); unset,
 * QPS is 2 × 5 and burst 10 before doubling: effective 20/20. The operator's default 5/10 gives 10/20.
 * `found`: the workloads running tekton-pipelines-controller; only a trusted one decides (identity.ts),
 * and how sure that is goes into the facts (`verified`: its namespace; `inferred`: its binding).
 */
export function controllerLimitFacts(facts: FactSet, found: ApiResult<Found>): TektonController | undefined {
  if (!found.ok) {
    facts.unknown('cluster.tekton.controller.present', `cannot list workloads: ${found.reason}`);
    return undefined;
  }
  const controller = trustedController(found);
  if (!controller) {
    const { untrusted } = found.value;
    if (untrusted.count === 0) {
      facts.set('cluster.tekton.controller.present', false, WORKLOADS, 'no workload runs tekton-pipelines-controller');
      return undefined;
    }
    const why = untrustedText(untrusted, 'a container named tekton-pipelines-controller');
    for (const key of ['cluster.tekton.controller.present', ...LIMIT_KEYS]) facts.unknown(key, why, WORKLOADS);
    return undefined;
  }
  const { workload, container } = controller;
  const identity = `${workload.identity.level}: ${workload.identity.why}`;
  facts.set('cluster.tekton.controller.present', true, workload.identity.level === 'verified' ? WORKLOADS : 'inferred', `${workloadLabel(workload)} (${identity})`);
  const qps = Number(flagValue(container.args, 'kube-api-qps') ?? 0);
  const burst = Number(flagValue(container.args, 'kube-api-burst') ?? 0);
  const from = `api:${workload.kind.toLowerCase()}s/${workload.namespace}/${workload.name}`;
  const set = (key: string, configured: number, unset: number, flag: string) => {
    if (!Number.isFinite(configured)) return facts.unknown(key, `-${flag} is not a number`, from);
    const effective = 2 * (configured > 0 ? configured : unset);
    facts.set(key, effective, from, `-${flag} ${configured > 0 ? configured : `unset (${unset})`}, doubled by the controller (${identity})`);
  };
  set(LIMIT_KEYS[0] as string, qps, 10, 'kube-api-qps');
  set(LIMIT_KEYS[1] as string, burst, 10, 'kube-api-burst');
  return controller;
}
