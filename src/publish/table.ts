// The human report for a terminal: header, one row per rule, then what to do about each failure.
import type { Finding, Report } from '../report/types.ts';
import { describeEvidence, evidenceSources, findingSummary, STATUS_LABEL, summaryLine } from './text.ts';

export interface TableOptions {
  color: boolean;
  /** Wrap the summary column to fit this many characters per line. */
  width?: number;
}

const COLORS = { red: '31', yellow: '33', green: '32', dim: '2', bold: '1' } as const;

function paint(options: TableOptions, color: keyof typeof COLORS, text: string): string {
  return options.color ? `\u001b[${COLORS[color]}m${text}\u001b[0m` : text;
}

function statusColor(finding: Finding): keyof typeof COLORS {
  if (finding.status === 'fail') return finding.severity === 'info' ? 'yellow' : 'red';
  if (finding.status === 'unknown') return 'yellow';
  return finding.status === 'pass' ? 'green' : 'dim';
}

export function renderTable(report: Report, options: TableOptions): string {
  const lines: string[] = [];
  lines.push(paint(options, 'bold', `node-tuning-advisor · node ${report.node} · score ${report.score}/100 (grade ${report.grade})`));
  lines.push(`${summaryLine(report.counts)} · host root ${report.hostRoot}`);
  lines.push('');
  const header = ['STATUS', 'SEVERITY', 'RULE', 'OBSERVED → EXPECTED', 'EVIDENCE'];
  const rows = report.findings.map((finding) => [
    STATUS_LABEL[finding.status],
    finding.severity,
    finding.ruleId,
    findingSummary(finding),
    evidenceSources(finding),
  ]);
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] as string).length)));
  const summaryWidth = Math.max(30, Math.min(widths[3] as number, (options.width ?? 160) - 60));
  widths[3] = summaryWidth;
  const format = (cells: string[]) => cells.map((cell, column) => cell.padEnd(widths[column] as number)).join('  ').trimEnd();
  lines.push(format(header));
  report.findings.forEach((finding, index) => {
    const row = rows[index] as string[];
    // Reasons for unknown / not-applicable can be long: two lines here, the whole text below the table.
    const wrapped = clip(wrap(row[3] as string, summaryWidth), finding.status === 'fail' || finding.status === 'pass' ? 4 : 2);
    const first = format([row[0] as string, row[1] as string, row[2] as string, wrapped[0] ?? '', row[4] as string]);
    lines.push(paint(options, statusColor(finding), first.slice(0, row[0]?.length)) + first.slice(row[0]?.length));
    for (const more of wrapped.slice(1)) lines.push(format(['', '', '', more, '']));
  });
  const failing = report.findings.filter((finding) => finding.status === 'fail');
  const undecided = report.findings.filter((finding) => finding.status === 'unknown');
  if (failing.length > 0) lines.push('', paint(options, 'bold', 'What to do'));
  for (const finding of failing) lines.push('', ...renderDetail(finding, options));
  if (undecided.length > 0) lines.push('', paint(options, 'bold', 'Could not decide'));
  for (const finding of undecided) lines.push('', ...renderDetail(finding, options));
  return `${lines.join('\n')}\n`;
}

function renderDetail(finding: Finding, options: TableOptions): string[] {
  const lines = [paint(options, statusColor(finding), `${STATUS_LABEL[finding.status]} ${finding.ruleId} (${finding.severity}) — ${finding.title}`)];
  lines.push(...wrap(finding.message, 100).map((line) => `  ${line}`));
  lines.push('  Evidence:');
  for (const evidence of finding.evidence) lines.push(`    ${describeEvidence(evidence)}`);
  if (finding.status === 'fail') {
    lines.push('  Fix:');
    lines.push(...wrap(finding.remediation.text, 100).map((line) => `    ${line}`));
    for (const command of finding.remediation.commands) lines.push(`    $ ${command}`);
    const references = finding.references.map((reference) => reference.seed ?? reference.url ?? reference.note ?? '');
    lines.push(`  References: ${references.join(', ')}`);
  }
  return lines;
}

function clip(lines: string[], max: number): string[] {
  if (lines.length <= max) return lines;
  return [...lines.slice(0, max - 1), `${lines[max - 1]} …`];
}

export function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let current = '';
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (current && current.length + 1 + word.length > width) {
      lines.push(current);
      current = word;
    } else current = current ? `${current} ${word}` : word;
  }
  if (current) lines.push(current);
  return lines;
}
