import { stringify } from 'yaml';
import { BUNDLED_RULES_DIR, formatRuleError, loadRules } from '../../rules/load.ts';
import { loadRuleSet } from '../../rules/rule-set.ts';
import type { Condition } from '../../rules/schema.ts';
import { isLeaf } from '../../rules/validate.ts';
import { renderValue } from '../../rules/conditions.ts';
import { EXIT_INPUT, EXIT_OK, oneOf, parseFlags, UsageError, type Io } from '../io.ts';

export const RULES_USAGE = `Usage:
  node-tuning-advisor rules lint [PATH...]      check rule files (the bundled ones plus PATHs)
  node-tuning-advisor rules list [flags]        list the rules in effect
  node-tuning-advisor explain RULE-ID [flags]   show one rule: conditions, params, fix, references

Flags (list, explain):
  --rules PATH          extra rule directory or file, repeatable
  --no-bundled-rules    only the --rules given
  --output FORMAT       list: table (default), json
`;

const selectionFlags = {
  rules: { type: 'string', multiple: true },
  'no-bundled-rules': { type: 'boolean' },
  output: { type: 'string', short: 'o' },
} as const;

export async function rulesCommand(args: string[], io: Io): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === 'lint') return lint(rest, io);
  if (sub === 'list') return list(rest, io);
  if (sub === undefined || sub === '--help' || sub === '-h') {
    io.stdout.write(RULES_USAGE);
    return EXIT_OK;
  }
  throw new UsageError(`unknown rules subcommand "${sub}": use lint or list`);
}

async function lint(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parseFlags(args, { 'no-bundled-rules': { type: 'boolean' } }, 'rules lint');
  if (values.help) {
    io.stdout.write(RULES_USAGE);
    return EXIT_OK;
  }
  const locations = [...(values['no-bundled-rules'] ? [] : [BUNDLED_RULES_DIR]), ...positionals];
  const result = await loadRules(locations);
  for (const error of result.errors) io.stderr.write(`${formatRuleError(error)}\n`);
  if (result.errors.length > 0) {
    io.stderr.write(`${result.errors.length} problem(s) in rule files\n`);
    return EXIT_INPUT;
  }
  io.stdout.write(`ok: ${result.rules.length} rules, ${result.overrides.length} overrides in ${result.files.length} files\n`);
  return EXIT_OK;
}

async function list(args: string[], io: Io): Promise<number> {
  const { values } = parseFlags(args, selectionFlags, 'rules list');
  if (values.help) {
    io.stdout.write(RULES_USAGE);
    return EXIT_OK;
  }
  const rules = await loadRuleSet({ ruleLocations: values.rules ?? [], bundledRules: !values['no-bundled-rules'] });
  const output = oneOf('--output', values.output, ['table', 'json'] as const, 'table');
  if (output === 'json') {
    io.stdout.write(`${JSON.stringify(rules, null, 2)}\n`);
    return EXIT_OK;
  }
  const rows = [['ID', 'SCOPE', 'SEVERITY', 'WEIGHT', 'CATEGORY', 'TITLE'], ...rules.map((rule) => [rule.id, rule.scope ?? 'node', rule.severity, String(rule.weight), rule.category, rule.title])];
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  for (const row of rows) io.stdout.write(`${row.map((cell, column) => cell.padEnd(widths[column]!)).join('  ').trimEnd()}\n`);
  return EXIT_OK;
}

export function describeCondition(condition: Condition, indent = ''): string[] {
  if (isLeaf(condition)) {
    const operand = condition.param !== undefined ? `params.${condition.param}` : condition.values !== undefined ? `[${renderValue(condition.values)}]` : condition.value !== undefined ? String(condition.value) : '';
    return [`${indent}${condition.fact} ${condition.op}${operand ? ` ${operand}` : ''}`];
  }
  if ('not' in condition) return [`${indent}not:`, ...describeCondition(condition.not, `${indent}  `)];
  const [key, parts] = 'all' in condition ? ['all of', condition.all] : ['any of', condition.any];
  return [`${indent}${key}:`, ...parts.flatMap((part) => describeCondition(part, `${indent}  `))];
}

export async function explainCommand(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parseFlags(args, selectionFlags, 'explain');
  if (values.help || positionals.length === 0) {
    io.stdout.write(RULES_USAGE);
    return values.help ? EXIT_OK : EXIT_INPUT;
  }
  const rules = await loadRuleSet({ ruleLocations: values.rules ?? [], bundledRules: !values['no-bundled-rules'] });
  const rule = rules.find((candidate) => candidate.id === positionals[0]);
  if (!rule) throw new UsageError(`no rule "${positionals[0]}"; see: node-tuning-advisor rules list`);
  const lines = [
    `${rule.id} — ${rule.title}`,
    `scope ${rule.scope ?? 'node'}${rule.scope === 'cluster' ? ' (checked by "report")' : ''}, severity ${rule.severity}, weight ${rule.weight}, category ${rule.category}; defined at ${rule.file}:${rule.line}`,
    '',
    ...(rule.appliesWhen ? ['Applies when:', ...describeCondition(rule.appliesWhen, '  ')] : ['Applies to every host.']),
    'Fails when:',
    ...describeCondition(rule.failsWhen, '  '),
    ...(Object.keys(rule.params).length > 0 ? ['Params (override with kind: RuleOverrides):', ...stringify(rule.params).trimEnd().split('\n').map((line) => `  ${line}`)] : []),
    `Observed: ${rule.observed}`,
    `Expected: ${rule.expected}`,
    '',
    `Fix: ${rule.remediation.text.trim()}`,
    ...(rule.remediation.commands ?? []).map((command) => `  $ ${command}`),
    '',
    'References:',
    ...rule.references.map((reference) => `  ${[reference.seed ? `seed ${reference.seed}` : reference.url, reference.note].filter(Boolean).join(' — ')}`),
  ];
  io.stdout.write(`${lines.join('\n')}\n`);
  return EXIT_OK;
}
