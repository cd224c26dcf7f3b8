// The pipeline in one place: host root → collectors → facts → rules → report.
import os from 'node:os';
import { collectFacts, type CollectOptions } from './collectors/run.ts';
import { HostRoot } from './host/host-root.ts';
import { evaluateRules, type EffectiveRule } from './rules/engine.ts';
import { loadRuleSet, type RuleSelection } from './rules/rule-set.ts';
import { judge } from './report/score.ts';
import { REPORT_SCHEMA_VERSION, type Finding, type FindingStatus, type Report } from './report/types.ts';
import type { FactSet } from './facts/fact-set.ts';
import { InputError } from './input-error.ts';

export interface ScanOptions extends RuleSelection, CollectOptions {
  hostRoot: string;
  nodeName?: string;
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
  const { score, grade, coverage } = judge(findings);
  return {
    schemaVersion: REPORT_SCHEMA_VERSION,
    node: nodeName,
    generatedAt: new Date().toISOString(),
    hostRoot: host.root,
    score,
    grade,
    counts,
    coverage,
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
