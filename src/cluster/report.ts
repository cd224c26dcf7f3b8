// `report` end to end: one LIST per resource kind (in parallel where independent), bounded log
// tails, cluster facts, the cluster-scope rules through the same engine as node scans, and the
// per-node view from the agents' annotations. No per-node request is ever sent.
import { FactSet, type Fact } from '../facts/fact-set.ts';
import { evaluateRules } from '../rules/engine.ts';
import { gradeOf, scoreOf } from '../report/score.ts';
import type { Finding, FindingStatus, Report } from '../report/types.ts';
import { loadRuleSet, InputError, type RuleSelection } from '../scan.ts';
import { DEFAULT_LOG_BOUNDS, type ApiRequest, type ApiResult, type ClusterApi } from './api.ts';
import { findSidecars, instancesToRead, sidecarFacts, throttleFacts, type LogRead } from './csi.ts';
import { fleetGroups, nodeRows, type FleetGroup, type NodeRow } from './nodes.ts';
import { controllerLimitFacts, tektonInstalledFacts, workspaceClaims, workspaceFacts } from './tekton.ts';

type Obj = Record<string, any>;

export const CLUSTER_REPORT_SCHEMA_VERSION = 1;
/** Listed in one page; the newest RECENT_PIPELINERUNS of them are looked at. */
const PIPELINERUN_PAGE = 500;
const EVENTS_RULE = 'etcd-events-split';

export interface ClusterReport {
  schemaVersion: number;
  kind: 'ClusterReport';
  generatedAt: string;
  selector: string | null;
  nodes: NodeRow[];
  fleet: FleetGroup[];
  cluster: { score: number; grade: Report['grade']; counts: Record<FindingStatus, number>; findings: Finding[]; facts: Record<string, Fact> };
  api: { requests: number; byResource: Record<string, number>; failed: ApiRequest[] };
}

export interface ReportOptions extends RuleSelection {
  selector?: string;
}

/** Whether kube-apiserver keeps Events in their own etcd, as the control-plane nodes' agents saw it. */
export function eventsSplitFacts(facts: FactSet, rows: NodeRow[], selector: string | undefined): void {
  const source = 'api:nodes (annotations)';
  if (selector) facts.unknown('cluster.nodes.count', `--selector ${selector} lists only part of the cluster`, source);
  else facts.set('cluster.nodes.count', rows.length, 'api:nodes');
  facts.set('cluster.nodes.withAgent', rows.filter((r) => r.agent === 'ok').length, source);
  const reports = rows.filter((r) => r.roles.includes('control-plane') && r.agent === 'ok')
    .map((r) => ({ node: r.name, status: r.report?.rules.find((e) => e.rule === EVENTS_RULE)?.status }))
    .filter((r) => r.status === 'pass' || r.status === 'fail');
  const detail = reports.map((r) => `${r.node}: ${r.status === 'pass' ? 'split' : 'not split'}`).join(', ');
  if (reports.length === 0) {
    facts.unknown('cluster.etcd.eventsSplit', `no control-plane node's agent reports ${EVENTS_RULE} (managed control plane, or no agent there)`, source);
  } else facts.set('cluster.etcd.eventsSplit', reports.some((r) => r.status === 'pass'), source, detail);
}

function requestSummary(requests: ApiRequest[]): ClusterReport['api'] {
  const byResource: Record<string, number> = {};
  for (const r of requests) byResource[r.resource] = (byResource[r.resource] ?? 0) + 1;
  return { requests: requests.length, byResource, failed: requests.filter((r) => r.code !== '200') };
}

const notListed = (why: string): ApiResult<Obj[]> => ({ ok: false, code: 'skipped', reason: why });

async function gatherFacts(api: ClusterApi, facts: FactSet, rows: NodeRow[], selector: string | undefined): Promise<void> {
  const [flags, runs, pods] = await Promise.all([
    api.listConfigMaps('metadata.name=feature-flags'),
    api.listPipelineRuns(PIPELINERUN_PAGE),
    api.listPods(),
  ]);
  eventsSplitFacts(facts, rows, selector);
  tektonInstalledFacts(facts, flags, runs);
  const claims = runs.ok ? workspaceClaims(runs.value) : [];
  const needClasses = claims.some((c) => c.shape === 'template' || c.claimName !== undefined);
  const [pvcs, classes, drivers] = needClasses
    ? await Promise.all([
      claims.some((c) => c.shape === 'claim') ? api.listPersistentVolumeClaims() : Promise.resolve(notListed('no claim workspaces')),
      api.listStorageClasses(), api.listCSIDrivers()])
    : [undefined, notListed('no PVC workspaces'), notListed('no PVC workspaces')];
  workspaceFacts(facts, runs, pvcs, { classes, drivers });
  const controller = controllerLimitFacts(facts, pods);
  const window = `last ${DEFAULT_LOG_BOUNDS.sinceSeconds / 60} min, ≤ ${DEFAULT_LOG_BOUNDS.tailLines} lines`;
  const instances = pods.ok ? instancesToRead(findSidecars(pods.value)) : [];
  const [reads, controllerLog] = await Promise.all([
    Promise.all(instances.map(async (instance): Promise<LogRead> => ({ instance, log: await api.readLog(instance.namespace, instance.pod, instance.container) }))),
    controller ? api.readLog(controller.namespace, controller.pod, controller.container) : undefined,
  ]);
  sidecarFacts(facts, pods, reads, window);
  if (controller && controllerLog) {
    throttleFacts(facts, 'cluster.tekton.controller', [{ label: `${controller.namespace}/${controller.pod} ${controller.container}`, log: controllerLog }], window);
  }
}

export async function runClusterReport(api: ClusterApi, options: ReportOptions): Promise<ClusterReport> {
  // Node rules too: version-2 annotations leave out a rule's category, the rule set knows it.
  const everyScope = await loadRuleSet(options);
  const rules = everyScope.filter((rule) => rule.scope === 'cluster');
  const categories = new Map(everyScope.map((rule) => [rule.id, rule.category]));
  const listed = await api.listNodes(options.selector);
  if (!listed.ok) {
    const hint = listed.code === '403' ? '; report needs list on nodes (see README, "Cluster view")' : '';
    throw new InputError(`cannot list nodes: ${listed.reason}${hint}`);
  }
  const rows = nodeRows(listed.value);
  const facts = new FactSet();
  await gatherFacts(api, facts, rows, options.selector);
  const findings = evaluateRules(rules, facts);
  const counts: Record<FindingStatus, number> = { fail: 0, unknown: 0, pass: 0, 'not-applicable': 0 };
  for (const f of findings) counts[f.status]++;
  const score = scoreOf(findings);
  return {
    schemaVersion: CLUSTER_REPORT_SCHEMA_VERSION,
    kind: 'ClusterReport',
    generatedAt: new Date().toISOString(),
    selector: options.selector ?? null,
    nodes: rows,
    fleet: fleetGroups(rows, (rule) => categories.get(rule)),
    cluster: { score, grade: gradeOf(score), counts, findings, facts: facts.toJSON() },
    api: requestSummary(api.requests),
  };
}
