// One Node (its metadata: labels and annotations are all `report` reads) as a row: its roles and
// what its agent published, parsed with the same module that renders the annotations.
import { parseAnnotations, type AnnotatedReport, type RuleEntry } from '../wire/annotations.ts';
import { parseSummaryFacts } from '../wire/summary-facts.ts';
import type { Obj } from '../kube/objects.ts';
import { severityRank, worstSeverity } from '../report/score.ts';
import type { Liveness } from '../wire/heartbeat.ts';

export interface NodeRow {
  name: string;
  roles: string[];
  agent: 'ok' | 'none' | 'unreadable';
  /** Why the annotations could not be read, for agent: unreadable. */
  problem?: string;
  report?: AnnotatedReport;
  /** Whether the node's kube-apiserver keeps Events in their own etcd (`events=` in its summary), where its agent could tell. */
  eventsSplit?: boolean;
  /** For a node with annotations: whether its agent's heartbeat still vouches for them (src/wire/heartbeat.ts). */
  heartbeat?: Liveness;
}

const ROLE_PREFIX = 'node-role.kubernetes.io/';
/** A node carries a few roles; more role labels than this are not listed (hostile labels stay bounded). */
export const MAX_ROLES_PER_NODE = 8;

/** Roles from node-role.kubernetes.io/<role> labels; "master" reads as control-plane; none → worker. */
export function rolesOf(node: Obj): string[] {
  const labels: Record<string, string> = node.metadata?.labels ?? {};
  const roles = Object.keys(labels).filter((key) => key.startsWith(ROLE_PREFIX))
    .map((key) => key.slice(ROLE_PREFIX.length)).map((role) => (role === 'master' ? 'control-plane' : role)).filter(Boolean);
  const unique = [...new Set(roles)].sort().slice(0, MAX_ROLES_PER_NODE);
  return unique.length > 0 ? unique : ['worker'];
}

/**
 * The report with only the fields the advisor writes, each rule once (its first entry: the agent
 * writes one per rule, a forged annotation may repeat one); anything else it carries is dropped.
 */
function ownFields(report: AnnotatedReport): AnnotatedReport {
  const { pass, fail, unknown, 'not-applicable': na } = report.counts;
  const seen = new Set<string>();
  const rules = report.rules.filter(({ rule }) => !seen.has(rule) && seen.add(rule)).map(({ rule, status, severity, category, observed }): RuleEntry => ({
    rule, status, severity, ...(category === undefined ? {} : { category }), ...(observed === undefined ? {} : { observed }),
  }));
  return { schemaVersion: report.schemaVersion, score: report.score, grade: report.grade, counts: { pass, fail, unknown, 'not-applicable': na }, omitted: report.omitted, rules };
}

/** `liveness`: the heartbeat of a node that carries annotations (none asked for a node without). */
export function nodeRow(node: Obj, liveness?: (name: string) => Liveness): NodeRow {
  const name = String(node.metadata?.name ?? '?');
  const roles = rolesOf(node);
  const parsed = parseAnnotations(node.metadata?.annotations);
  const heartbeat = parsed.state === 'none' || liveness === undefined ? {} : { heartbeat: liveness(name) };
  if (parsed.state === 'ok') return { name, roles, agent: 'ok', report: ownFields(parsed.report), ...eventsSplitOf(node), ...heartbeat };
  if (parsed.state === 'unreadable') return { name, roles, agent: 'unreadable', problem: parsed.reason, ...heartbeat };
  return { name, roles, agent: 'none' };
}

/** Annotations its agent no longer vouches for: shown with their grade, never counted as current. */
export function isStale(row: NodeRow): boolean {
  return row.agent === 'ok' && row.heartbeat?.state === 'stale';
}

function eventsSplitOf(node: Obj): { eventsSplit?: boolean } {
  const tokens = parseSummaryFacts(node.metadata?.annotations);
  const split = tokens.state === 'ok' ? tokens.facts['etcd.eventsSplit'] : undefined;
  return split !== undefined && 'value' in split && typeof split.value === 'boolean' ? { eventsSplit: split.value } : {};
}

export function failingRules(row: NodeRow): RuleEntry[] {
  return (row.report?.rules ?? []).filter((entry) => entry.status === 'fail');
}

/** The row as a table keeps it: the report's failing and unknown rules only (passing ones are counts). */
export function slimRow(row: NodeRow): NodeRow {
  if (!row.report) return row;
  return { ...row, report: { ...row.report, rules: row.report.rules.filter((e) => e.status === 'fail' || e.status === 'unknown') } };
}

const AGENT_ORDER = { ok: 0, unreadable: 2, none: 3 } as const;
/** Between the current reports and the unreadable ones. */
const STALE_RANK = 1;

/** The most severe failing rule's rank (3 critical … 0 nothing fails). */
function failingRank(row: NodeRow): number {
  return severityRank(worstSeverity(failingRules(row).map((entry) => entry.severity)));
}

/**
 * Worst first: current reports by their most severe failing rule, then lowest score (what could not
 * be checked never outranks what fails), then stale reports (the same order), unreadable
 * annotations, nodes without an agent; by name within.
 */
export function worstFirst(a: NodeRow, b: NodeRow): number {
  return agentRank(a.agent, isStale(a)) - agentRank(b.agent, isStale(b)) || failingRank(b) - failingRank(a)
    || (a.report?.score ?? 0) - (b.report?.score ?? 0) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
}

export function agentRank(agent: NodeRow['agent'], stale = false): number {
  return stale ? STALE_RANK : AGENT_ORDER[agent];
}
