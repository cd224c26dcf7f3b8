// A rule's short fix without node-specific values, for places that show the rule rather than a
// finding: `rules list` and the alerts' static fix map (scripts/alert-fixes.ts).
import { renderValue } from './conditions.ts';
import type { RuleDefinition } from './schema.ts';

/** staticSummary, else the summary; params rendered with the rule's values, any fact placeholder as <fact.key>. */
export function staticFix(rule: Pick<RuleDefinition, 'remediation' | 'params'>): string {
  const text = rule.remediation.staticSummary ?? rule.remediation.summary;
  return text
    .replace(/\{\{\s*params\.([A-Za-z0-9_]+)\s*\}\}/g, (_, name: string) => renderValue(rule.params?.[name]))
    .replace(/\{\{\s*([A-Za-z0-9_.\-[\]]+)\s*\}\}/g, (_, key: string) => `<${key}>`)
    .trim();
}
