// `explain RULE`: what a rule checks (conditions, params), its fix and references, wrapped to the
// terminal; with --host-root DIR also its finding on that host with every evidence fact.
import { stringify } from 'yaml';
import { failBlock, idColumn, painter, reasonOf, settledBlock, unknownBlock, type Layout } from '../../publish/terminal/findings.ts';
import { commandLines, hang } from '../../publish/terminal/layout.ts';
import { referenceText } from '../../publish/text.ts';
import type { EffectiveRule } from '../../rules/engine.ts';
import type { Finding } from '../../report/types.ts';
import { loadRuleSet } from '../../rules/rule-set.ts';
import { stripControls, terminalJson, terminalSafe } from '../../text/terminal.ts';
import { terminalYaml } from '../../text/terminal-yaml.ts';
import { didYouMeanName } from '../../text/suggest.ts';
import { runScan } from '../../scan.ts';
import { EXIT_INPUT, EXIT_OK, oneOf, parseFlags, terminalWidth, UsageError, useColor, type Io } from '../io.ts';
import { describeCondition, RULES_USAGE, selectionFlags } from './rules.ts';

/** Each line wrapped under its own indentation. */
function fitted(lines: string[], width: number): string[] {
  return lines.flatMap((line) => {
    if (line === '') return [''];
    const indent = /^ */.exec(line)?.[0] ?? '';
    return hang(indent, line.slice(indent.length), width, indent.length + 2);
  });
}

export function definitionLines(rule: EffectiveRule, width: number): string[] {
  const params = Object.keys(rule.params).length > 0
    ? ['Params (override with kind: RuleOverrides):', ...stringify(rule.params).trimEnd().split('\n').map((line) => `  ${line}`)]
    : [];
  return [
    ...fitted([
      `${rule.id} — ${rule.title}`,
      `scope ${rule.scope ?? 'node'}${rule.scope === 'cluster' ? ' (checked by "report")' : ''}, severity ${rule.severity}, weight ${rule.weight}, category ${rule.category}; defined at ${rule.file}:${rule.line}`,
      '',
      ...(rule.appliesWhen ? ['Applies when:', ...describeCondition(rule.appliesWhen, '  ')] : ['Applies to every host.']),
      ...(rule.enoughDataWhen ? ['Enough to judge when (else not applicable, no Event):', ...describeCondition(rule.enoughDataWhen, '  ')] : []),
      'Fails when:',
      ...describeCondition(rule.failsWhen, '  '),
      ...params,
      `Observed: ${rule.observed}`,
      `Expected: ${rule.expected}`,
      '',
      `Short fix: ${rule.remediation.summary}`,
      `Fix: ${rule.remediation.text.trim()}`,
    ], width),
    ...(rule.remediation.commands ?? []).flatMap((command) => commandLines(command, width - 2).map((line) => `  ${line}`)),
    '',
    'References:',
    ...fitted(rule.references.map((r) => `  ${referenceText(r)}`), width),
  ];
}

function findingLines(finding: Finding, layout: Layout): string[] {
  const idWidth = idColumn([finding], layout.width);
  if (finding.status === 'fail') return failBlock(finding, idWidth, layout);
  if (finding.status === 'unknown') return unknownBlock({ reason: reasonOf(finding), findings: [finding] }, idWidth, layout);
  return settledBlock(finding, idWidth, layout);
}

export async function explainCommand(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parseFlags(args, { ...selectionFlags, 'host-root': { type: 'string' } }, 'explain');
  if (values.help || positionals.length === 0) {
    io.stdout.write(RULES_USAGE);
    return values.help ? EXIT_OK : EXIT_INPUT;
  }
  const selection = { ruleLocations: values.rules ?? [], bundledRules: !values['no-bundled-rules'] };
  const rules = await loadRuleSet(selection);
  const found = rules.find((candidate) => candidate.id === positionals[0]);
  if (!found) throw new UsageError(`no rule "${stripControls(positionals[0] as string)}"${didYouMeanName(positionals[0] as string, rules.map((r) => r.id))}; see: node-tuning-advisor rules list`);
  const rule = terminalSafe(found);
  const output = oneOf('--output', values.output, ['text', 'json', 'yaml'] as const, 'text');
  const width = terminalWidth(io);
  const hostRoot = values['host-root'];
  if (hostRoot !== undefined && rule.scope === 'cluster') {
    throw new UsageError(`${rule.id} is a cluster rule: "report" checks it through the API, not on a host; drop --host-root`);
  }
  const scanned = hostRoot === undefined ? undefined : await runScan({ ...selection, hostRoot, only: [rule.id] });
  if (output !== 'text') {
    const document = { rule: found, ...(scanned ? { node: scanned.node, hostRoot, finding: scanned.findings[0] } : {}) };
    io.stdout.write(output === 'json' ? `${terminalJson(document)}\n` : terminalYaml(document));
    return EXIT_OK;
  }
  const report = scanned && terminalSafe(scanned);
  const lines = definitionLines(rule, width);
  if (report) {
    const layout: Layout = { width, paint: painter(useColor(io)), verbose: true };
    lines.push('', ...hang('', `On node ${report.node} (host root ${hostRoot}):`, width), '', ...findingLines(report.findings[0] as Finding, layout));
  }
  io.stdout.write(`${lines.join('\n')}\n`);
  return EXIT_OK;
}
