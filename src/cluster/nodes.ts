// The fleet from one Node LIST: each node's roles and what its agent published (parsed with the
// same module that renders the annotations), worst first; then failing rules grouped across nodes.
import { parseAnnotations, type AnnotatedReport, type RuleEntry } from '../publish/annotations.ts';
import type { Severity } from '../report/types.ts';

type Obj = Record<string, any>;

export interface NodeRow {
  name: string;
  roles: string[];
  agent: 'ok' | 'none' | 'unreadable';
  /** Why the annotations could not be read, for agent: unreadable. */
  problem?: string;
  report?: AnnotatedReport;
}

export interface FleetGroup {
  rule: string;
  severity: Severity;
  /** From the agents' annotations (version 1) or the rule set `report` loaded; absent when neither knows the rule. */
  category?: string;
  /** Nodes whose agent reports the rule failing. */
  nodes: string[];
  /** Nodes with a readable report, the denominator. */
  of: number;
  roles: { role: string; count: number; of: number }[];
  /** "etcd-fsync-latency on 3/3 control-plane nodes". */
  text: string;
}

const ROLE_PREFIX = 'node-role.kubernetes.io/';

/** Roles from node-role.kubernetes.io/<role> labels; "master" reads as control-plane; none → worker. */
export function rolesOf(node: Obj): string[] {
  const labels: Record<string, string> = node.metadata?.labels ?? {};
  const roles = Object.keys(labels).filter((key) => key.startsWith(ROLE_PREFIX))
    .map((key) => key.slice(ROLE_PREFIX.length)).map((role) => (role === 'master' ? 'control-plane' : role)).filter(Boolean);
  const unique = [...new Set(roles)].sort();
  return unique.length > 0 ? unique : ['worker'];
}

const AGENT_ORDER = { ok: 0, unreadable: 1, none: 2 } as const;

/** Worst first: lowest score, then unreadable annotations, then nodes without an agent; by name within. */
export function nodeRows(nodes: Obj[]): NodeRow[] {
  const rows = nodes.map((node): NodeRow => {
    const name = String(node.metadata?.name ?? '?');
    const roles = rolesOf(node);
    const parsed = parseAnnotations(node.metadata?.annotations);
    if (parsed.state === 'ok') return { name, roles, agent: 'ok', report: parsed.report };
    if (parsed.state === 'unreadable') return { name, roles, agent: 'unreadable', problem: parsed.reason };
    return { name, roles, agent: 'none' };
  });
  return rows.sort((a, b) => AGENT_ORDER[a.agent] - AGENT_ORDER[b.agent]
    || (a.report?.score ?? 0) - (b.report?.score ?? 0) || a.name.localeCompare(b.name));
}

export function failingRules(row: NodeRow): RuleEntry[] {
  return (row.report?.rules ?? []).filter((entry) => entry.status === 'fail');
}

const SEVERITY_RANK: Record<Severity, number> = { critical: 0, warning: 1, info: 2 };

/** Failing rules across nodes, most severe and most widespread first; `categoryOf` names rules the annotations do not. */
export function fleetGroups(rows: NodeRow[], categoryOf: (rule: string) => string | undefined = () => undefined): FleetGroup[] {
  const reporting = rows.filter((row) => row.agent === 'ok');
  const byRule = new Map<string, { severity: Severity; category: string | undefined; rows: NodeRow[] }>();
  for (const row of reporting) {
    for (const entry of failingRules(row)) {
      const group = byRule.get(entry.rule) ?? { severity: entry.severity, category: entry.category ?? categoryOf(entry.rule), rows: [] };
      group.rows.push(row);
      byRule.set(entry.rule, group);
    }
  }
  const groups = [...byRule].map(([rule, group]): FleetGroup => {
    const roleNames = [...new Set(group.rows.flatMap((row) => row.roles))].sort();
    const roles = roleNames.map((role) => ({
      role,
      count: group.rows.filter((row) => row.roles.includes(role)).length,
      of: reporting.filter((row) => row.roles.includes(role)).length,
    }));
    const nodes = group.rows.map((row) => row.name);
    const category = group.category === undefined ? {} : { category: group.category };
    return { rule, severity: group.severity, ...category, nodes, of: reporting.length, roles, text: groupText(rule, nodes.length, reporting.length, roles) };
  });
  return groups.sort((a, b) => SEVERITY_RANK[a.severity] - SEVERITY_RANK[b.severity] || b.nodes.length - a.nodes.length || a.rule.localeCompare(b.rule));
}

function groupText(rule: string, count: number, of: number, roles: FleetGroup['roles']): string {
  const plural = (n: number) => (n === 1 ? 'node' : 'nodes');
  const shared = roles.filter((role) => role.count === count);
  if (shared.length > 0) {
    const role = shared.sort((a, b) => a.of - b.of)[0] as FleetGroup['roles'][number];
    return `${rule} on ${count}/${role.of} ${role.role} ${plural(role.of)}`;
  }
  return `${rule} on ${count}/${of} ${plural(of)} (${roles.map((role) => `${role.count} ${role.role}`).join(', ')})`;
}
