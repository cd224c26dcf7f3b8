import { stringify } from 'yaml';
import { BUNDLED_RULES_DIR, formatRuleError, loadRules } from '../../rules/load.ts';
import type { LoadedRule, RuleFileError } from '../../rules/rule-file.ts';
import { loadRuleSet } from '../../rules/rule-set.ts';
import type { Condition } from '../../rules/schema.ts';
import { isLeaf, ruleConditions } from '../../rules/schema.ts';
import { factsIn, renderValue } from '../../rules/conditions.ts';
import { hang, padEnd } from '../../publish/terminal/layout.ts';
import { displayWidth } from '../../text/columns.ts';
import { staticFix } from '../../rules/static-fix.ts';
import { didYouMean } from '../../text/suggest.ts';
import type { EffectiveRule } from '../../rules/engine.ts';
import { terminalJson, terminalSafe } from '../../text/terminal.ts';
import { terminalYaml } from '../../text/terminal-yaml.ts';
import { EXIT_INPUT, EXIT_OK, oneOf, parseFlags, terminalWidth, UsageError, type Io } from '../io.ts';

export const RULES_USAGE = `Usage:
  node-tuning-advisor rules lint [PATH...]      check rule files (the bundled ones plus PATHs)
  node-tuning-advisor rules list [flags]        list the rules in effect, each with its short fix
  node-tuning-advisor explain RULE-ID [flags]   show one rule: conditions, params, fix, references
  node-tuning-advisor explain RULE-ID --host-root DIR   … and its finding on that host, with all evidence

Flags (list, explain):
  --rules PATH          extra rule directory or file, repeatable
  --no-bundled-rules    only the --rules given
  -o, --output FORMAT   list: table (default), json, yaml; explain: text (default), json, yaml
  --host-root DIR       explain: also the rule's finding on the host tree at DIR
  -h, --help            this help
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
  throw new UsageError(`unknown rules subcommand "${sub}"${didYouMean(sub, ['lint', 'list'])}: use lint or list`);
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
    const missing = [...new Set(ruleConditions(rule).flatMap(([, condition]) => factsIn(condition)))].filter((key) => !Object.hasOwn(rule.factLabels ?? {}, key));
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
  const output = oneOf('--output', values.output, ['table', 'json', 'yaml'] as const, 'table');
  if (output !== 'table') {
    io.stdout.write(output === 'json' ? `${terminalJson(rules)}\n` : terminalYaml(rules));
    return EXIT_OK;
  }
  io.stdout.write(`${listLines(terminalSafe(rules), terminalWidth(io)).join('\n')}\n`);
  return EXIT_OK;
}

/**
 * One line of columns per rule, then its title and short fix (templates rendered) under it.
 * Columns are as wide as their widest cell, so no id or word is ever split: when the row does not
 * fit the width, the id stands on its own line and the other columns go under it.
 */
export function listLines(rules: EffectiveRule[], width: number): string[] {
  const cells = rules.map((rule) => [rule.scope ?? 'node', rule.severity, String(rule.weight), rule.category]);
  const header = ['SCOPE', 'SEVERITY', 'WEIGHT', 'CATEGORY'];
  const widths = header.map((h, i) => Math.max(displayWidth(h), ...cells.map((c) => displayWidth(c[i] as string))));
  const idWidth = Math.max(2, ...rules.map((rule) => displayWidth(rule.id)));
  const restWidth = widths.reduce((sum, w) => sum + w + 2, 0);
  const wide = idWidth + 2 + restWidth <= width;
  const columns = (first: string, rest: string[]): string => (wide ? [padEnd(first, idWidth), ...rest.map((c, i) => padEnd(c, widths[i] as number))] : ['  ', ...rest.map((c, i) => padEnd(c, widths[i] as number))]).join('  ').trimEnd();
  const lines = wide ? [columns('ID', header)] : ['ID', columns('', header)];
  rules.forEach((rule, n) => {
    if (!wide) lines.push(rule.id);
    lines.push(columns(rule.id, cells[n] as string[]));
    lines.push(...hang('    ', `${rule.title} — fix: ${staticFix(rule)}`, width));
  });
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
