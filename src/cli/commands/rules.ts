import { BUNDLED_RULES_DIR, formatRuleError, loadRules, type LoadedRule, type RuleFileError } from '../../rules/load.ts';
import { loadRuleSet } from '../../rules/rule-set.ts';
import type { Condition } from '../../rules/schema.ts';
import { isLeaf } from '../../rules/validate.ts';
import { factsIn, renderValue } from '../../rules/conditions.ts';
import { hang, row } from '../../publish/terminal/layout.ts';
import type { EffectiveRule } from '../../rules/engine.ts';
import { terminalJson, terminalSafe } from '../../text/terminal.ts';
import { EXIT_INPUT, EXIT_OK, oneOf, parseFlags, terminalWidth, UsageError, type Io } from '../io.ts';

export const RULES_USAGE = `Usage:
  node-tuning-advisor rules lint [PATH...]      check rule files (the bundled ones plus PATHs)
  node-tuning-advisor rules list [flags]        list the rules in effect, each with its short fix
  node-tuning-advisor explain RULE-ID [flags]   show one rule: conditions, params, fix, references
  node-tuning-advisor explain RULE-ID --host-root DIR   … and its finding on that host, with all evidence

Flags (list, explain):
  --rules PATH          extra rule directory or file, repeatable
  --no-bundled-rules    only the --rules given
  --output FORMAT       list: table (default), json
`;

export const selectionFlags = {
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
  if (result.errors.length === 0) result.errors.push(...unlabelledFacts(result.rules));
  for (const error of result.errors) io.stderr.write(`${formatRuleError(error)}\n`);
  if (result.errors.length > 0) {
    io.stderr.write(`${result.errors.length} problem(s) in rule files\n`);
    return EXIT_INPUT;
  }
  io.stdout.write(`ok: ${result.rules.length} rules, ${result.overrides.length} overrides in ${result.files.length} files\n`);
  return EXIT_OK;
}

/** Lint only (a rule file without labels still loads: its reasons then name the keys). */
function unlabelledFacts(rules: LoadedRule[]): RuleFileError[] {
  return rules.flatMap((rule) => {
    const missing = [...new Set([...factsIn(rule.appliesWhen), ...factsIn(rule.failsWhen)])].filter((key) => !Object.hasOwn(rule.factLabels ?? {}, key));
    return missing.map((key) => ({
      file: rule.file, line: rule.line, col: 1, key: rule.id,
      message: `fact "${key}" has no label; add it to the file's top-level "facts:" map (a few words that reasons show instead of the key)`,
    }));
  });
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
    io.stdout.write(`${terminalJson(rules)}\n`);
    return EXIT_OK;
  }
  io.stdout.write(`${listLines(terminalSafe(rules), terminalWidth(io)).join('\n')}\n`);
  return EXIT_OK;
}

/** One line of columns per rule, then its title and short fix under it, wrapped to the width. */
export function listLines(rules: EffectiveRule[], width: number): string[] {
  const categoryWidth = Math.max(8, ...rules.map((rule) => rule.category.length));
  // The id column takes what the other columns leave, up to the longest id.
  const idWidth = Math.max(8, Math.min(width - (5 + 8 + 6 + categoryWidth + 4 * 2), Math.max(...rules.map((rule) => rule.id.length))));
  const widths = [idWidth, 5, 8, 6, categoryWidth];
  const lines = row(['ID', 'SCOPE', 'SEVERITY', 'WEIGHT', 'CATEGORY'], widths, width);
  for (const rule of rules) {
    lines.push(...row([rule.id, rule.scope ?? 'node', rule.severity, String(rule.weight), rule.category], widths, width));
    lines.push(...hang('    ', `${rule.title} — fix: ${rule.remediation.summary}`, width));
  }
  return lines;
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
