// A rule's short fix without node-specific values, for places that show the rule rather than a
// finding: `rules list` and the alerts' static fix map (scripts/alert-fixes.ts).
import { renderValue } from './conditions.ts';
import type { RuleDefinition } from './schema.ts';
import { substitute } from './template.ts';

/** staticSummary, else the summary; params rendered with the rule's values, any fact placeholder as <fact.key>. */
export function staticFix(rule: Pick<RuleDefinition, 'remediation' | 'params'>): string {
  const text = rule.remediation.staticSummary ?? rule.remediation.summary;
  return substitute(text, (placeholder) => {
    if (placeholder.kind === 'param') return renderValue(rule.params?.[placeholder.name]);
    if (placeholder.kind === 'param-by-fact') return `<params.${placeholder.name}[${placeholder.key}]>`;
    return `<${placeholder.key}>`;
  }).trim();
}
