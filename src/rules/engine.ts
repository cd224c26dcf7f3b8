// Turns loaded rules and a fact set into findings. Knows fact keys only, never a collector.
import type { FactSet } from '../facts/fact-set.ts';
import type { Evidence, Finding, FindingStatus } from '../report/types.ts';
import { evaluate, factsIn, renderValue, sharingReasons, type Params } from './conditions.ts';
import type { LoadedOverride, LoadedRule } from './rule-file.ts';
import { ruleConditions } from './schema.ts';
import { scoreImpact } from '../report/score.ts';
import { byCodePoint } from '../order.ts';
import { paramOfKey, substitute } from './template.ts';

export type EffectiveRule = LoadedRule & { params: Params };

/** Applies overrides in load order (later files win) and drops disabled rules. */
export function applyOverrides(rules: LoadedRule[], overrides: LoadedOverride[]): EffectiveRule[] {
  const effective: EffectiveRule[] = [];
  for (const rule of rules) {
    let merged: EffectiveRule = { ...rule, params: { ...(rule.params ?? {}) } };
    let disabled = false;
    for (const override of overrides.filter((candidate) => candidate.id === rule.id)) {
      if (override.disabled !== undefined) disabled = override.disabled;
      merged = {
        ...merged,
        severity: override.severity ?? merged.severity,
        weight: override.weight ?? merged.weight,
        params: { ...merged.params, ...(override.params ?? {}) },
      };
    }
    if (!disabled) effective.push(merged);
  }
  return effective;
}

export function renderTemplate(template: string, facts: FactSet, params: Params): string {
  const factText = (key: string): string | undefined => {
    const fact = facts.get(key);
    return fact === undefined || fact.unknown !== undefined ? undefined : renderValue(fact.value);
  };
  return substitute(template, (placeholder) => {
    if (placeholder.kind === 'param') return renderValue(params[placeholder.name]);
    if (placeholder.kind === 'param-by-fact') {
      // {{params.NAME[fact.key]}}: the param NAME_<value of the fact>, e.g. governedBy_creation.
      const value = factText(placeholder.key);
      return value === undefined ? '?' : renderValue(params[`${placeholder.name}_${value}`]);
    }
    const param = paramOfKey(placeholder.key);
    return param !== undefined ? renderValue(params[param]) : factText(placeholder.key) ?? '?';
  });
}

/** The facts a finding was decided on first: the applicability (or data) facts when it does not apply. */
function evidenceFor(rule: EffectiveRule, facts: FactSet, status: FindingStatus, lacksData: boolean): Evidence[] {
  const decisive = lacksData ? factsIn(rule.enoughDataWhen) : status === 'not-applicable' ? factsIn(rule.appliesWhen) : factsIn(rule.failsWhen);
  const keys = [...new Set([...decisive, ...factsIn(rule.failsWhen), ...(rule.evidence ?? []), ...ruleConditions(rule).flatMap(([, condition]) => factsIn(condition))])];
  return keys.map((key) => {
    const fact = facts.get(key);
    if (!fact) return { fact: key, value: null, source: 'not collected', unknown: 'no collector produced this fact' };
    const evidence: Evidence = { fact: key, value: fact.value, source: fact.source };
    if (fact.detail !== undefined) evidence.detail = fact.detail;
    if (fact.unknown !== undefined) evidence.unknown = fact.unknown;
    return evidence;
  });
}

export function evaluateRule(rule: EffectiveRule, facts: FactSet): Finding {
  const render = (template: string) => renderTemplate(template, facts, rule.params);
  const labels = rule.factLabels ?? {};
  const finish = (status: FindingStatus, message: string, engineReason?: string, lacksData = false): Finding => ({
    ruleId: rule.id,
    title: rule.title,
    category: rule.category,
    status,
    severity: rule.severity,
    weight: rule.weight,
    // Undecided: nothing observed decided it (its facts may be none or unknown); the message says why.
    observed: status === 'pass' || status === 'fail' ? render(rule.observed) : '',
    expected: render(rule.expected),
    message,
    ...(lacksData ? { lacksData: true } : {}),
    evidence: evidenceFor(rule, facts, status, lacksData),
    // Rendered like the message: a fix names the file this host's layout keeps the setting in.
    remediation: { summary: render(rule.remediation.summary).trim(), text: render(rule.remediation.text).trim(), commands: (rule.remediation.commands ?? []).map(render) },
    references: rule.references,
    scoreImpact: scoreImpact(status, rule.severity, rule.weight),
    ...(engineReason === undefined ? {} : { engineReason }),
  });

  if (rule.appliesWhen) {
    const applies = evaluate(rule.appliesWhen, facts, rule.params, labels);
    if (applies.truth === false) return finish('not-applicable', `Not applicable here: ${applies.said.join('; ')}.`, applies.reasons.join('; '));
    if (applies.truth === 'unknown') return finish('unknown', `Cannot tell whether this applies: ${sharingReasons(applies.said).join('; ')}.`, applies.reasons.join('; '));
  }
  if (rule.enoughDataWhen) {
    const enough = evaluate(rule.enoughDataWhen, facts, rule.params, labels);
    if (enough.truth === false) return finish('not-applicable', `Not applicable here: ${render(rule.notEnoughData ?? sharingReasons(enough.said).join('; '))}.`, enough.reasons.join('; '), true);
    if (enough.truth === 'unknown') return finish('unknown', `Cannot decide: ${sharingReasons(enough.said).join('; ')}.`, enough.reasons.join('; '));
  }
  const fails = evaluate(rule.failsWhen, facts, rule.params, labels);
  if (fails.truth === 'unknown') return finish('unknown', `Cannot decide: ${sharingReasons(fails.said).join('; ')}.`, fails.reasons.join('; '));
  if (fails.truth) return finish('fail', render(rule.message));
  return finish('pass', `OK: ${render(rule.observed)}.`);
}

const STATUS_ORDER: Record<FindingStatus, number> = { fail: 0, unknown: 1, pass: 2, 'not-applicable': 3 };
const SEVERITY_ORDER = { critical: 0, warning: 1, info: 2 } as const;

/** Failing first, most severe first; then unknown, pass, not-applicable. */
export function compareFindings(a: Finding, b: Finding): number {
  return (
    STATUS_ORDER[a.status] - STATUS_ORDER[b.status] ||
    SEVERITY_ORDER[a.severity] - SEVERITY_ORDER[b.severity] ||
    b.weight - a.weight ||
    byCodePoint(a.ruleId, b.ruleId)
  );
}

export function evaluateRules(rules: EffectiveRule[], facts: FactSet): Finding[] {
  return rules.map((rule) => evaluateRule(rule, facts)).sort(compareFindings);
}
