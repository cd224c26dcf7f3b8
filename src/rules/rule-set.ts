// The rules in effect: the bundled rule files and any given, overrides applied, filtered by scope
// and --only. Bad files and unknown ids are an InputError (exit 2). Apart from the pipeline
// (src/scan.ts) so that `rules` and `explain` load no collector.
import { InputError } from '../input-error.ts';
import { didYouMeanName } from '../text/suggest.ts';
import { applyOverrides, type EffectiveRule } from './engine.ts';
import { BUNDLED_RULES_DIR, formatRuleError, loadRules } from './load.ts';
import type { RuleScope } from './schema.ts';

export interface RuleSelection {
  /** Extra rule directories or files, after the bundled ones. */
  ruleLocations?: string[];
  /** False to load only ruleLocations. */
  bundledRules?: boolean;
  /** Evaluate only these rule ids. */
  only?: string[];
  /** Keep only rules of this scope (node: scan/agent, cluster: report); all scopes when unset. */
  scope?: RuleScope;
  /** Rules not evaluated here (the agent: the Node's silence annotation); unknown ids are ignored. */
  silenced?: string[];
}

export async function loadRuleSet(selection: RuleSelection): Promise<EffectiveRule[]> {
  const locations = [...(selection.bundledRules === false ? [] : [BUNDLED_RULES_DIR]), ...(selection.ruleLocations ?? [])];
  const loaded = await loadRules(locations);
  if (loaded.errors.length > 0) {
    throw new InputError(`invalid rules:\n${loaded.errors.map((error) => `  ${formatRuleError(error)}`).join('\n')}`);
  }
  const inScope = (rule: { scope?: RuleScope }) => selection.scope === undefined || (rule.scope ?? 'node') === selection.scope;
  const silenced = new Set(selection.silenced ?? []);
  let rules = applyOverrides(loaded.rules, loaded.overrides).filter((rule) => inScope(rule) && !silenced.has(rule.id));
  if (selection.only && selection.only.length > 0) {
    const unknown = selection.only.filter((id) => !loaded.rules.some((rule) => rule.id === id && inScope(rule)));
    if (unknown.length > 0) {
      const otherScope = unknown.filter((id) => loaded.rules.some((rule) => rule.id === id));
      const hint = otherScope.length > 0 ? `; ${otherScope.join(', ')} ${otherScope.length > 1 ? 'are not' : 'is not a'} ${selection.scope}-scope rule${otherScope.length > 1 ? 's' : ''}` : '';
      const ids = loaded.rules.filter(inScope).map((rule) => rule.id);
      const hints = unknown.map((id) => [id, didYouMeanName(id, ids)] as const).filter(([, said]) => said !== '');
      const close = hints.length === 1 && unknown.length === 1 ? (hints[0] as readonly [string, string])[1]
        : hints.length > 0 ? ` (${hints.map(([id, said]) => `${id}: ${said.replace(/^ \(|\)$/g, '')}`).join('; ')})` : '';
      throw new InputError(`--only names unknown rule ids: ${unknown.join(', ')}${hint}${close} (see: node-tuning-advisor rules list)`);
    }
    rules = rules.filter((rule) => selection.only?.includes(rule.id));
  }
  return rules;
}
