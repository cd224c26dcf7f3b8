// The pipeline in one place: host root → collectors → facts → rules → report.
import os from 'node:os';
import { collectFacts, type CollectOptions } from './facts/collect.ts';
import { HostRoot } from './host/host-root.ts';
import { applyOverrides, evaluateRules, type EffectiveRule } from './rules/engine.ts';
import { BUNDLED_RULES_DIR, formatRuleError, loadRules } from './rules/load.ts';
import { gradeOf, scoreOf } from './report/score.ts';
import { REPORT_SCHEMA_VERSION, type Finding, type FindingStatus, type Report } from './report/types.ts';
import type { FactSet } from './facts/fact-set.ts';
import type { RuleScope } from './rules/schema.ts';
import { InputError } from './input-error.ts';

export { InputError } from './input-error.ts';

export interface RuleSelection {
  /** Extra rule directories or files, after the bundled ones. */
  ruleLocations?: string[];
  /** False to load only ruleLocations. */
  bundledRules?: boolean;
  /** Evaluate only these rule ids. */
  only?: string[];
  /** Keep only rules of this scope (node: scan/agent, cluster: report); all scopes when unset. */
  scope?: RuleScope;
}

export interface ScanOptions extends RuleSelection, CollectOptions {
  hostRoot: string;
  nodeName?: string;
}

export async function loadRuleSet(selection: RuleSelection): Promise<EffectiveRule[]> {
  const locations = [...(selection.bundledRules === false ? [] : [BUNDLED_RULES_DIR]), ...(selection.ruleLocations ?? [])];
  const loaded = await loadRules(locations);
  if (loaded.errors.length > 0) {
    throw new InputError(`invalid rules:\n${loaded.errors.map((error) => `  ${formatRuleError(error)}`).join('\n')}`);
  }
  const inScope = (rule: { scope?: RuleScope }) => selection.scope === undefined || (rule.scope ?? 'node') === selection.scope;
  let rules = applyOverrides(loaded.rules, loaded.overrides).filter(inScope);
  if (selection.only && selection.only.length > 0) {
    const unknown = selection.only.filter((id) => !loaded.rules.some((rule) => rule.id === id && inScope(rule)));
    if (unknown.length > 0) {
      const otherScope = unknown.filter((id) => loaded.rules.some((rule) => rule.id === id));
      const hint = otherScope.length > 0 ? `; ${otherScope.join(', ')} ${otherScope.length > 1 ? 'are not' : 'is not a'} ${selection.scope}-scope rule${otherScope.length > 1 ? 's' : ''}` : '';
      throw new InputError(`--only names unknown rule ids: ${unknown.join(', ')}${hint} (see: node-tuning-advisor rules list)`);
    }
    rules = rules.filter((rule) => selection.only?.includes(rule.id));
  }
  return rules;
}

export async function openHost(hostRoot: string): Promise<HostRoot> {
  const host = new HostRoot(hostRoot);
  const problem = await host.checkRoot();
  if (problem) throw new InputError(problem);
  return host;
}

export function nodeNameOf(facts: FactSet, host: HostRoot, explicit?: string): string {
  if (explicit) return explicit;
  const hostname = facts.value('node.hostname');
  if (typeof hostname === 'string' && hostname !== '') return hostname;
  return host.isRealRoot ? os.hostname() : 'unknown';
}

export function buildReport(findings: Finding[], facts: FactSet, host: HostRoot, nodeName: string): Report {
  const counts: Record<FindingStatus, number> = { fail: 0, unknown: 0, pass: 0, 'not-applicable': 0 };
  for (const finding of findings) counts[finding.status]++;
  const score = scoreOf(findings);
  return {
    schemaVersion: REPORT_SCHEMA_VERSION,
    node: nodeName,
    generatedAt: new Date().toISOString(),
    hostRoot: host.root,
    score,
    grade: gradeOf(score),
    counts,
    findings,
    facts: facts.toJSON(),
  };
}

export async function runScan(options: ScanOptions): Promise<Report> {
  const rules = await loadRuleSet({ ...options, scope: 'node' });
  const host = await openHost(options.hostRoot);
  const facts = await collectFacts(host, options);
  const findings = evaluateRules(rules, facts);
  return buildReport(findings, facts, host, nodeNameOf(facts, host, options.nodeName));
}
