// `scan`'s terminal view (--output table): the node's score and counts, then what to fix: one
// block per failing rule, unknown rules grouped by reason, passing and not-applicable rules as
// counts. Every line fits `width`; the evidence is one flag away (--verbose), every rule one more (--all).
import type { Finding, Report } from '../../report/types.ts';
import { coverageText } from '../../report/score.ts';
import { countLines, failBlock, idColumn, painter, settledBlock, unknownBlock, unknownGroups, type Layout } from './findings.ts';
import { hang } from './layout.ts';

export interface ViewOptions {
  width: number;
  color: boolean;
  /** Every evidence fact with its source, the full fix and its commands, the references. */
  verbose?: boolean;
  /** Passing and not-applicable rules one by one instead of as counts. */
  all?: boolean;
  /** The host root as the user typed it (relative paths stay relative); default the report's. */
  hostRoot?: string;
}

function header(report: Report, layout: Layout, hostRoot: string): string[] {
  const failing = report.findings.filter((f) => f.status === 'fail');
  const bySeverity = (['critical', 'warning', 'info'] as const)
    .map((s) => [s, failing.filter((f) => f.severity === s).length] as const).filter(([, n]) => n > 0)
    .map(([s, n]) => `${n} ${s}`);
  const { counts } = report;
  const tally = [
    `${counts.fail} failing${bySeverity.length > 0 ? ` (${bySeverity.join(', ')})` : ''}`,
    `${counts.unknown} unknown`, `${counts.pass} pass`, `${counts['not-applicable']} not applicable`, coverageText(report.coverage),
  ].join(' · ');
  return [
    ...hang('', `node ${report.node} · score ${report.score}/100, grade ${report.grade}`, layout.width, 2)
      .map((line, i) => (i === 0 ? layout.paint('bold', line) : line)),
    ...hang('', tally, layout.width, 2),
    ...(report.hostRoot === '/' ? [] : hang('host root ', hostRoot, layout.width)),
  ];
}

function footer(report: Report, options: ViewOptions, width: number, root: string): string[] {
  const first = report.findings.find((f) => f.status === 'fail' || f.status === 'unknown');
  const hostRoot = report.hostRoot === '/' ? '' : ` --host-root ${root}`;
  // --help says what each does; here only what to type.
  const hints = [...(options.verbose ? [] : ['--verbose']), ...(options.all ? [] : ['--all']), ...(first ? [`explain ${first.ruleId}${hostRoot}`] : [])];
  return hints.length > 0 ? hang('More: ', hints.join(' · '), width) : [];
}

export function renderScanView(report: Report, options: ViewOptions): string {
  const layout: Layout = { width: options.width, paint: painter(options.color), verbose: options.verbose === true };
  const settled = report.findings.filter((f) => f.status === 'pass' || f.status === 'not-applicable');
  const shown: Finding[] = report.findings.filter((f) => options.all || (f.status !== 'pass' && f.status !== 'not-applicable'));
  const idWidth = idColumn(shown, options.width);
  const blocks: string[][] = [
    ...report.findings.filter((f) => f.status === 'fail').map((f) => failBlock(f, idWidth, layout)),
    ...unknownGroups(report.findings, layout.verbose).map((g) => unknownBlock(g, idWidth, layout)),
  ];
  if (blocks.length === 0) blocks.push([`Nothing to fix: none of the ${report.findings.length} rules fails or is undecided.`]);
  if (options.all) blocks.push(...settled.map((f) => settledBlock(f, idWidth, layout)));
  else if (settled.length > 0) blocks.push(countLines(settled, options.width));
  const root = options.hostRoot ?? report.hostRoot;
  const more = footer(report, options, options.width, root);
  const lines = [...header(report, layout, root), ...blocks.flatMap((block) => ['', ...block]), ...(more.length > 0 ? ['', ...more] : [])];
  return `${lines.join('\n')}\n`;
}
