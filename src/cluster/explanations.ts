// What a rule is about, for the rules a cluster report names: its title, what it expects, its fix
// and references, with the rule's params filled in and a node's facts left as <fact.key> (the page
// shows the rule, not one node's finding). The page links every mention of a rule here.
import type { EffectiveRule } from '../rules/engine.ts';
import { staticFix, staticText } from '../rules/static-fix.ts';
import type { Reference, Severity } from '../report/types.ts';
import { byCodePoint } from '../order.ts';

export interface RuleExplanation {
  id: string;
  title: string;
  scope: 'node' | 'cluster';
  severity: Severity;
  category: string;
  expected: string;
  /** The short fix, without node-specific values. */
  fix: string;
  /** The fix in full, and its commands. */
  text: string;
  commands: string[];
  references: Reference[];
}

export function explainRule(rule: EffectiveRule): RuleExplanation {
  return {
    id: rule.id, title: rule.title, scope: rule.scope ?? 'node', severity: rule.severity, category: rule.category,
    expected: staticText(rule.expected, rule), fix: staticFix(rule), text: staticText(rule.remediation.text, rule),
    commands: (rule.remediation.commands ?? []).map((command) => staticText(command, rule)), references: rule.references,
  };
}

/** The explanations of the rules among `ids` the rule set has, by id. */
export function explanationsFor(rules: readonly EffectiveRule[], ids: Iterable<string>): RuleExplanation[] {
  const wanted = new Set(ids);
  return rules.filter((rule) => wanted.has(rule.id)).map(explainRule).sort((a, b) => byCodePoint(a.id, b.id));
}
