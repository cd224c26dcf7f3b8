// `report` end to end: the agents' heartbeat Leases (one paged LIST), the Node list as metadata, page by page, each node folded into the fleet
// tallies (and handed to the caller, who may stream it) and dropped; then the cluster-scope facts,
// the cluster-scope rules through the same engine as node scans. No per-node request is ever sent,
// and memory holds the worst N nodes and the tallies, not the fleet.
import { FactSet, type Fact } from '../facts/fact-set.ts';
import { NODES } from '../kube/resources.ts';
import { evaluateRules } from '../rules/engine.ts';
import { judge } from '../report/score.ts';
import type { Coverage, Finding, FindingStatus, Report } from '../report/types.ts';
import { InputError } from '../input-error.ts';
import { loadRuleSet, type RuleSelection } from '../rules/rule-set.ts';
import type { ApiRequest, ClusterApi } from './api.ts';
import { clusterCheckFacts } from './checks.ts';
import { explanationsFor, type RuleExplanation } from './explanations.ts';
import { FleetTally, type FleetGroup, type FleetSummary, type NodeGroup } from './fleet.ts';
import { nodeRow, type NodeRow } from './nodes.ts';
import { HeartbeatBook } from './heartbeats.ts';
import { DEFAULT_AGENT_NAMESPACE } from '../wire/heartbeat.ts';

/**
 * 2: nodes paged and grouped (`summary`, `rest`), fleet groups with `count` and `examples`, `api` with bytes.
 * 3: each node with annotations carries `heartbeat` (current, stale or unknown); `summary.stale` counts
 * the stale ones apart from `withAgent`, `summary.heartbeats` says what was read.
 */
export const CLUSTER_REPORT_SCHEMA_VERSION = 3;
const EVENTS_RULE = 'etcd-events-split';
/** Control-plane nodes named in the events-split detail. */
const MAX_EVENTS_DETAIL = 10;

export interface ApiSummary {
  requests: number;
  bytesReceived: number;
  /** Items per LIST request; 0: no pagination. */
  pageSize: number;
  /** The client's own rate limit (requests per second), when set. */
  qps?: number;
  byResource: Record<string, number>;
  /** Body bytes received per resource. */
  bytesByResource: Record<string, number>;
  failed: ApiRequest[];
  /** Lists restarted from the first page after their continue token expired (410). */
  restarted: string[];
}

export interface ClusterReport {
  schemaVersion: number;
  kind: 'ClusterReport';
  generatedAt: string;
  selector: string | null;
  summary: FleetSummary;
  /** The worst nodes, worst first: `limit` of them (all with --all). `--output json` streams every node instead. */
  nodes: NodeRow[];
  /** The other nodes, grouped. */
  rest: NodeGroup[];
  fleet: FleetGroup[];
  cluster: { score: number; grade: Report['grade']; counts: Record<FindingStatus, number>; coverage: Coverage; findings: Finding[]; facts: Record<string, Fact> };
  api: ApiSummary;
  /** With `explain`: each rule the report names failing (fleet, node rows) or open in the cluster checks, as the rule set has it. */
  explanations?: RuleExplanation[];
}

export interface ReportOptions extends RuleSelection {
  selector?: string;
  /** Nodes kept for the table, worst first; Infinity: every node. */
  limit: number;
  /** When the report was started (default: now). */
  generatedAt?: string;
  /** Every node row as it is read, in list (name) order: the JSON stream. */
  onNode?: (row: NodeRow) => void | Promise<void>;
  /** Add the explanations of the rules the report names (the HTML page links them). */
  explain?: boolean;
  /** Where the agents' heartbeat Leases are (default node-tuning-advisor). */
  agentNamespace?: string;
}

/** Whether kube-apiserver keeps Events in their own etcd, as the control-plane nodes' agents saw it. */
export class EventsSplitTally {
  split = 0;
  notSplit = 0;
  readonly detail: string[] = [];

  /**
   * From the `events=` token of the summary; agents without it: a failing rule entry says "not
   * split", a passing one (version 1 lists passing rules) says "split".
   */
  add(row: NodeRow): void {
    if (!row.roles.includes('control-plane') || row.agent !== 'ok') return;
    const status = row.report?.rules.find((e) => e.rule === EVENTS_RULE)?.status;
    const split = row.eventsSplit ?? (status === 'pass' ? true : status === 'fail' ? false : undefined);
    if (split === undefined) return;
    if (split) this.split += 1;
    else this.notSplit += 1;
    if (this.detail.length < MAX_EVENTS_DETAIL) this.detail.push(`${row.name}: ${split ? 'split' : 'not split'}`);
  }

  facts(facts: FactSet, summary: FleetSummary, selector: string | undefined): void {
    const source = 'api:nodes (annotations)';
    if (selector) facts.unknown('cluster.nodes.count', `--selector ${selector} lists only part of the cluster`, source);
    else facts.set('cluster.nodes.count', summary.nodes, 'api:nodes');
    facts.set('cluster.nodes.withAgent', summary.withAgent, source);
    const seen = this.split + this.notSplit;
    if (seen === 0) {
      facts.unknown('cluster.etcd.eventsSplit', `no control-plane node's agent tells whether Events are split (events= in its summary, or ${EVENTS_RULE}): managed control plane, or no agent there`, source);
      return;
    }
    const more = seen > this.detail.length ? `, and ${seen - this.detail.length} more` : '';
    facts.set('cluster.etcd.eventsSplit', this.split > 0, source, `${this.detail.join(', ')}${more}`);
  }
}

export function apiSummary(api: ClusterApi): ApiSummary {
  const byResource: Record<string, number> = {};
  const bytesByResource: Record<string, number> = {};
  for (const r of api.requests) {
    byResource[r.resource] = (byResource[r.resource] ?? 0) + 1;
    bytesByResource[r.resource] = (bytesByResource[r.resource] ?? 0) + r.bytes;
  }
  const { requests, bytesReceived } = api.client.stats;
  return {
    requests, bytesReceived, pageSize: api.paging.pageSize, ...(api.qps !== undefined ? { qps: api.qps } : {}),
    byResource, bytesByResource, failed: api.requests.filter((r) => r.code !== '200'), restarted: [...api.restarts],
  };
}

/** The Node list (metadata only), folded page by page. */
async function foldNodes(api: ClusterApi, options: ReportOptions, tally: FleetTally, events: EventsSplitTally, heartbeats: HeartbeatBook): Promise<void> {
  const listed = await api.scan(NODES, { metadataOnly: true, ...(options.selector ? { labelSelector: options.selector } : {}) }, async (items) => {
    for (const item of items) {
      const row = nodeRow(item, (name) => heartbeats.livenessOf(name));
      tally.add(row);
      events.add(row);
      await options.onNode?.(row);
    }
  });
  if (!listed.ok) {
    const hint = listed.code === '403' ? '; report needs list on nodes (see README, "Cluster view")'
      : listed.code === 'too-large' ? '; ask for fewer nodes per request with a smaller --page-size' : '';
    throw new InputError(`cannot list nodes: ${listed.reason}${hint}`);
  }
}

export async function runClusterReport(api: ClusterApi, options: ReportOptions): Promise<ClusterReport> {
  const generatedAt = options.generatedAt ?? new Date().toISOString();
  // Node rules too: the fleet's tally takes each rule's severity and category from the rule set.
  const everyScope = await loadRuleSet(options);
  const rules = everyScope.filter((rule) => rule.scope === 'cluster');
  // Severity and category are the rule set's: an agent's annotation may claim anything.
  const ruleFacts = new Map(everyScope.map((rule) => [rule.id, { severity: rule.severity, category: rule.category }]));
  const tally = new FleetTally({ limit: options.limit, ruleOf: (rule) => ruleFacts.get(rule) });
  const events = new EventsSplitTally();
  const heartbeats = await HeartbeatBook.read(api, options.agentNamespace ?? DEFAULT_AGENT_NAMESPACE, Date.parse(generatedAt));
  await foldNodes(api, options, tally, events, heartbeats);
  tally.summary.heartbeats = heartbeats.summary;
  const facts = new FactSet();
  events.facts(facts, tally.summary, options.selector);
  await clusterCheckFacts(api, facts);
  const findings = evaluateRules(rules, facts);
  const counts: Record<FindingStatus, number> = { fail: 0, unknown: 0, pass: 0, 'not-applicable': 0 };
  for (const f of findings) counts[f.status]++;
  const { score, grade, coverage } = judge(findings);
  const nodes = tally.worstRows();
  const fleet = tally.fleet();
  const named = [...fleet.map((g) => g.rule), ...nodes.flatMap((row) => row.report?.rules.filter((e) => e.status === 'fail').map((e) => e.rule) ?? []),
    ...findings.filter((f) => f.status === 'fail' || f.status === 'unknown').map((f) => f.ruleId)];
  return {
    schemaVersion: CLUSTER_REPORT_SCHEMA_VERSION,
    kind: 'ClusterReport',
    generatedAt,
    selector: options.selector ?? null,
    summary: tally.summary,
    nodes,
    rest: tally.rest(),
    fleet,
    cluster: { score, grade, counts, coverage, findings, facts: facts.toJSON() },
    api: apiSummary(api),
    ...(options.explain ? { explanations: explanationsFor(everyScope, named) } : {}),
  };
}
