// Nodes whose kubelet runs something its files or binary no longer say (rule kubelet-restart-pending
// failing in their agent's report): the count `report` puts in its head line and summary. Each node
// counts once however many entries its annotation lists, and what the rule is (severity, category)
// comes from `report`'s rule set, never from an annotation anyone may have written.
import type { Severity } from '../report/types.ts';
import { failingRules, type NodeRow } from './nodes.ts';

export const RESTART_PENDING_RULE = 'kubelet-restart-pending';
const MAX_EXAMPLES = 5;

export interface RestartPending {
  rule: string;
  severity: Severity;
  category: string;
  /** Nodes whose agent reports the rule failing. */
  nodes: number;
  /** The first few of them, in list order. */
  examples: string[];
}

/** What report's rule set says about a rule; undefined: it has no such rule (disabled, or other rule files). */
export type RuleLookup = (rule: string) => { severity: Severity; category: string } | undefined;

/** The tally for the summary; null when report's rule set has no kubelet-restart-pending (nothing to count by). */
export function restartPendingTally(ruleOf: RuleLookup): RestartPending | null {
  const rule = ruleOf(RESTART_PENDING_RULE);
  return rule ? { rule: RESTART_PENDING_RULE, severity: rule.severity, category: rule.category, nodes: 0, examples: [] } : null;
}

/** Counts the node once when its readable report has the rule failing. */
export function countRestartPending(tally: RestartPending | null, row: NodeRow): void {
  if (!tally || row.agent !== 'ok' || !failingRules(row).some((entry) => entry.rule === RESTART_PENDING_RULE)) return;
  tally.nodes += 1;
  if (tally.examples.length < MAX_EXAMPLES) tally.examples.push(row.name);
}
