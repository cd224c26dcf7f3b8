// The fleet, folded one node at a time as the Node list is paged: counts by agent state and grade,
// the worst N nodes (a bounded heap), the others grouped ("4 812 nodes grade A, no failing rule"),
// and each failing rule with its count by role. Memory holds N rows and the tallies, never the
// fleet: 5 000 nodes cost what 500 do.
import type { Report, Severity } from '../report/types.ts';
import { agentRank, failingRules, isStale, slimRow, worstFirst, type NodeRow } from './nodes.ts';
import type { HeartbeatSummary } from './heartbeats.ts';
import type { RuleEntry } from '../wire/annotations.ts';
import { TopN } from './top.ts';
import { countRestartPending, restartPendingTally, type RestartPending } from './restart-pending.ts';

type Grade = Report['grade'];

export interface FleetSummary {
  nodes: number;
  /** Nodes whose agent's report is current (or whose heartbeat could not be read): what the grades and failing rules count. */
  withAgent: number;
  /** Nodes whose annotations no heartbeat vouches for any more: counted apart, in nothing below. */
  stale: number;
  noAgent: number;
  unreadable: number;
  grades: Record<Grade, number>;
  /** Nodes on which at least one rule of that severity fails (rules of the rule set only). */
  failing: Record<Severity, number>;
  /** Failing rule ids the rule set does not know, tallied apart: never in `fleet` or the groups. */
  unknownRules: UnknownRules;
  /** Current nodes with kubelet-restart-pending failing, each once; null when the rule set has no such rule. */
  restartPending: RestartPending | null;
  /** The heartbeat Leases read (report sets it). */
  heartbeats?: HeartbeatSummary;
}

/**
 * Ids an agent reports failing that `report`'s rule set has no rule for: agents run with other rule
 * files (run `report --rules` with theirs), or annotations written by someone else. A compromised
 * agent can name 500 such ids; they must not push real failing rules out of the fleet's tally.
 */
export interface UnknownRules {
  /** Nodes reporting at least one. */
  nodes: number;
  /** Distinct ids, counted up to MAX_RULES; `more`: there were more. */
  ids: number;
  more: boolean;
  /** The first few ids, in the order seen. */
  examples: string[];
}

/** Nodes outside the worst N that look alike: same agent state, grade and failing rules. */
export interface NodeGroup {
  count: number;
  agent: NodeRow['agent'];
  /** Reports no heartbeat vouches for. */
  stale?: true;
  grade?: Grade;
  /** The failing rules they share; ["*"] for the catch-all group of a grade. */
  failing: string[];
  text: string;
}

export interface FleetGroup {
  rule: string;
  /** The rule set's (what an agent's annotation claims is not used where the rule set knows the rule). */
  severity: Severity;
  /** The rule set's, else the first agent's annotation that gives one; absent when neither knows the rule. */
  category?: string;
  /** Nodes whose agent reports the rule failing. */
  count: number;
  /** Nodes with a readable report, the denominator. */
  of: number;
  roles: { role: string; count: number; of: number }[];
  /** The first few of those nodes, in name order. */
  examples: string[];
  /** "etcd-fsync-latency on 3/3 control-plane nodes". */
  text: string;
}

/** What the rule set `report` loaded says of a rule. */
export interface RuleFacts {
  severity: Severity;
  category: string;
}

export interface FleetOptions {
  /** Rows kept for the table, worst first; Infinity keeps every node (--all). */
  limit: number;
  /**
   * The rule set's severity and category of a rule; undefined: it has no such rule, and failing ids
   * it has not are tallied apart. Default: every id known, as its annotation describes it.
   */
  ruleOf?: (rule: string) => RuleFacts | undefined;
}

/** Bounds against hostile annotations and labels: distinct rules, roles and groups tallied. */
export const MAX_RULES = 500;
export const MAX_ROLES = 64;
export const MAX_GROUPS = 256;
export const MAX_EXAMPLES = 5;
/** An unknown id shown as an example is cut there (annotations written by hand may hold anything). */
const MAX_EXAMPLE_CHARS = 64;
const OTHER_ROLE = 'other';
const GRADES: Grade[] = ['F', 'D', 'C', 'B', 'A'];
const SEVERITY_RANK: Record<Severity, number> = { critical: 0, warning: 1, info: 2 };

interface RuleTally {
  severity: Severity;
  category: string | undefined;
  count: number;
  byRole: Map<string, number>;
  examples: string[];
}

/** "4812" → "4 812". */
export function spaced(n: number): string {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ' ');
}

/** "1 node", "1 200 nodes". */
export const nodes = (n: number) => `${spaced(n)} ${n === 1 ? 'node' : 'nodes'}`;

export class FleetTally {
  readonly summary: FleetSummary = {
    nodes: 0, withAgent: 0, stale: 0, noAgent: 0, unreadable: 0, grades: { A: 0, B: 0, C: 0, D: 0, F: 0 }, failing: { critical: 0, warning: 0, info: 0 },
    unknownRules: { nodes: 0, ids: 0, more: false, examples: [] }, restartPending: null,
  };
  private readonly worst: TopN<NodeRow>;
  private readonly groups = new Map<string, NodeGroup>();
  private readonly rules = new Map<string, RuleTally>();
  private readonly roleTotals = new Map<string, number>();
  private readonly ruleOf: (entry: RuleEntry) => RuleFacts | undefined;
  private readonly unknownIds = new Set<string>();

  constructor(options: FleetOptions) {
    this.worst = new TopN(options.limit, worstFirst);
    const ruleOf = options.ruleOf;
    this.ruleOf = ruleOf
      ? (entry) => ruleOf(entry.rule)
      : (entry) => ({ severity: entry.severity, category: entry.category as string });
    this.summary.restartPending = restartPendingTally(options.ruleOf ?? (() => undefined));
  }

  add(row: NodeRow): void {
    const s = this.summary;
    s.nodes += 1;
    if (isStale(row)) s.stale += 1;
    else if (row.agent === 'ok' && row.report) {
      s.withAgent += 1;
      s.grades[row.report.grade] += 1;
      this.countRoles(row);
      countRestartPending(s.restartPending, row);
    } else if (row.agent === 'none') s.noAgent += 1;
    else s.unreadable += 1;
    const out = this.worst.offer(slimRow(row));
    if (out) this.group(out);
  }

  /** The worst nodes kept, worst first. */
  worstRows(): NodeRow[] {
    return this.worst.sorted();
  }

  /** The other nodes in groups: worst grade first, bigger groups first within a grade. */
  rest(): NodeGroup[] {
    const grade = (g: NodeGroup) => (g.grade === undefined ? GRADES.length : GRADES.indexOf(g.grade));
    return [...this.groups.values()].sort((a, b) => agentRank(a.agent, a.stale) - agentRank(b.agent, b.stale) || grade(a) - grade(b)
      || b.count - a.count || (a.text < b.text ? -1 : a.text > b.text ? 1 : 0));
  }

  /** Failing rules across nodes, most severe and most widespread first. */
  fleet(): FleetGroup[] {
    const of = this.summary.withAgent;
    const groups = [...this.rules].map(([rule, t]): FleetGroup => {
      const roles = [...t.byRole].sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([role, count]) => ({ role, count, of: this.roleTotals.get(role) ?? count }));
      return {
        rule, severity: t.severity, ...(t.category === undefined ? {} : { category: t.category }),
        count: t.count, of, roles, examples: t.examples, text: groupText(rule, t.count, of, roles),
      };
    });
    return groups.sort((a, b) => SEVERITY_RANK[a.severity] - SEVERITY_RANK[b.severity] || b.count - a.count || (a.rule < b.rule ? -1 : 1));
  }

  private roleOf(role: string): string {
    return this.roleTotals.has(role) || this.roleTotals.size < MAX_ROLES ? role : OTHER_ROLE;
  }

  private countRoles(row: NodeRow): void {
    const roles = [...new Set(row.roles.map((r) => this.roleOf(r)))];
    for (const role of roles) this.roleTotals.set(role, (this.roleTotals.get(role) ?? 0) + 1);
    const failing = this.knownFailing(row);
    this.countUnknown(row);
    for (const severity of new Set(failing.map((e) => e.severity))) this.summary.failing[severity] += 1;
    for (const entry of failing) {
      let tally = this.rules.get(entry.rule);
      if (!tally) {
        if (this.rules.size >= MAX_RULES) continue;
        tally = { severity: entry.severity, category: entry.category, count: 0, byRole: new Map(), examples: [] };
        this.rules.set(entry.rule, tally);
      }
      tally.category ??= entry.category;
      tally.count += 1;
      for (const role of roles) tally.byRole.set(role, (tally.byRole.get(role) ?? 0) + 1);
      if (tally.examples.length < MAX_EXAMPLES) tally.examples.push(row.name);
    }
  }

  /**
   * The node's failing rules the rule set knows, each once (an annotation may name a rule many
   * times), with the rule set's severity and category.
   */
  private knownFailing(row: NodeRow): { rule: string; severity: Severity; category: string | undefined }[] {
    const known = new Map<string, { rule: string; severity: Severity; category: string | undefined }>();
    for (const entry of failingRules(row)) {
      const facts = known.has(entry.rule) ? undefined : this.ruleOf(entry);
      if (facts) known.set(entry.rule, { rule: entry.rule, severity: facts.severity, category: facts.category ?? entry.category });
    }
    return [...known.values()];
  }

  private countUnknown(row: NodeRow): void {
    const unknown = failingRules(row).filter((entry) => this.ruleOf(entry) === undefined);
    if (unknown.length === 0) return;
    const tally = this.summary.unknownRules;
    tally.nodes += 1;
    for (const { rule } of unknown) {
      if (this.unknownIds.has(rule)) continue;
      if (this.unknownIds.size >= MAX_RULES) {
        tally.more = true;
        continue;
      }
      this.unknownIds.add(rule);
      tally.ids = this.unknownIds.size;
      if (tally.examples.length < MAX_EXAMPLES) tally.examples.push(rule.slice(0, MAX_EXAMPLE_CHARS));
    }
  }

  private group(row: NodeRow): void {
    const grade = row.agent === 'ok' ? row.report?.grade : undefined;
    const stale = isStale(row);
    // A stale node is grouped by its last grade alone: its failing rules are not current.
    let failing = row.agent === 'ok' && !stale ? this.knownFailing(row).map((e) => e.rule).sort() : [];
    const state = stale ? 'stale' : row.agent;
    let key = `${state}|${grade ?? ''}|${failing.join(',')}`;
    if (!this.groups.has(key) && this.groups.size >= MAX_GROUPS) {
      failing = ['*'];
      key = `${state}|${grade ?? ''}|*`;
    }
    const group = this.groups.get(key) ?? { count: 0, agent: row.agent, ...(stale ? { stale: true as const } : {}), ...(grade ? { grade } : {}), failing, text: '' };
    group.count += 1;
    group.text = groupLabel(group);
    this.groups.set(key, group);
  }
}

function groupLabel(g: NodeGroup): string {
  if (g.agent === 'none') return `${nodes(g.count)} without agent (no report annotation)`;
  if (g.agent === 'unreadable') return `${nodes(g.count)} with an unreadable report annotation`;
  if (g.stale) return `${nodes(g.count)} stale (no heartbeat from the agent), last published grade ${g.grade}`;
  const failing = g.failing[0] === '*' ? 'failing other sets of rules' : g.failing.length > 0 ? `failing ${g.failing.join(', ')}` : 'no failing rule';
  return `${nodes(g.count)} grade ${g.grade}, ${failing}`;
}

function groupText(rule: string, count: number, of: number, roles: FleetGroup['roles']): string {
  const plural = (n: number) => (n === 1 ? 'node' : 'nodes');
  const shared = roles.filter((role) => role.count === count);
  if (shared.length > 0) {
    const role = shared.sort((a, b) => a.of - b.of)[0] as FleetGroup['roles'][number];
    return `${rule} on ${spaced(count)}/${spaced(role.of)} ${role.role} ${plural(role.of)}`;
  }
  return `${rule} on ${spaced(count)}/${spaced(of)} ${plural(of)} (${roles.map((role) => `${spaced(role.count)} ${role.role}`).join(', ')})`;
}
