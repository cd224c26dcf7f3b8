// Writes each rule's short fix into the alert rules as a static series (a recording rule per rule:
// node_tuning_advisor:rule_fix:info{rule, fix} = 1), which the alerts look up by rule id: the fix
// lives in the rule files, not in a metric label that changes with the node. The group goes at the
// end of manifests/prometheus/alerts.yaml and of the PrometheusRule, after a marker line.
// Run after changing a rule's summary: npm run alerts:fixes. test/prometheus/alerts.test.ts fails while they differ.
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadRules, type LoadedRule } from '../src/rules/load.ts';
import { staticFix } from '../src/rules/static-fix.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const FIX_TARGETS = [
  { file: path.join(ROOT, 'manifests/prometheus/alerts.yaml'), indent: '  ' },
  { file: path.join(ROOT, 'manifests/components/prometheus-operator/prometheusrule.yaml'), indent: '    ' },
];
export const FIX_RECORD = 'node_tuning_advisor:rule_fix:info';
const MARKER = '# Generated from rules/*.yaml by scripts/alert-fixes.ts (npm run alerts:fixes); do not edit below.';

export function fixGroup(rules: LoadedRule[], indent: string): string {
  const lines = [
    MARKER,
    '# Each rule\'s short fix as a static series; the alerts read it by rule id (no free text in metric labels).',
    '- name: node-tuning-advisor-rule-fixes',
    '  rules:',
    ...[...rules].sort((a, b) => (a.id < b.id ? -1 : 1)).flatMap((rule) => [
      `    - record: ${FIX_RECORD}`,
      '      expr: vector(1)',
      `      labels: { rule: ${rule.id}, fix: ${JSON.stringify(staticFix(rule))} }`,
    ]),
  ];
  return lines.map((line) => `${indent}${line}`).join('\n') + '\n';
}

/** The file's text with its generated group replaced (or appended). */
export function withFixGroup(text: string, rules: LoadedRule[], indent: string): string {
  const at = text.indexOf(MARKER);
  const head = at < 0 ? text : text.slice(0, text.lastIndexOf('\n', at) + 1);
  return head + fixGroup(rules, indent);
}

export async function bundledRules(): Promise<LoadedRule[]> {
  const loaded = await loadRules([path.join(ROOT, 'rules')]);
  if (loaded.errors.length > 0) throw new Error('rules/ has errors: run rules lint');
  return loaded.rules;
}

export async function main(): Promise<void> {
  const rules = await bundledRules();
  for (const target of FIX_TARGETS) {
    await writeFile(target.file, withFixGroup(await readFile(target.file, 'utf8'), rules, target.indent));
  }
  process.stdout.write(`${FIX_RECORD}: ${rules.length} rules in ${FIX_TARGETS.map((t) => path.relative(ROOT, t.file)).join(', ')}\n`);
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
