// A rule's texts without node-specific values, for places that show the rule rather than a
// finding: `rules list`, the alerts' static fix map (scripts/alert-fixes.ts) and the explanations
// on `report`'s page.
import { renderValue } from './conditions.ts';
import type { RuleDefinition } from './schema.ts';
import { substitute } from './template.ts';

/** A rule's template with params rendered with the rule's values, any fact placeholder as <fact.key>. */
export function staticText(template: string, rule: Pick<RuleDefinition, 'params'>): string {
  return substitute(template, (placeholder) => {
    if (placeholder.kind === 'param') return renderValue(rule.params?.[placeholder.name]);
    if (placeholder.kind === 'param-by-fact') return `<params.${placeholder.name}[${placeholder.key}]>`;
    return `<${placeholder.key}>`;
  }).trim();
}

/** staticSummary, else the summary, as staticText renders it. */
export function staticFix(rule: Pick<RuleDefinition, 'remediation' | 'params'>): string {
  return staticText(rule.remediation.staticSummary ?? rule.remediation.summary, rule);
}
