// Renders `report`: nodes worst first, failing rules grouped across nodes, then the cluster checks.
// The table fits `width` columns (default 80): every line is cut, never left to the terminal to wrap.
import type { ClusterReport } from '../cluster/report.ts';
import { spaced } from '../cluster/fleet.ts';
import { failingRules, type NodeRow } from '../cluster/nodes.ts';
import type { Finding, Severity } from '../report/types.ts';
import { wrap } from './table.ts';
import { describeEvidence, STATUS_LABEL, summaryLine } from './text.ts';

const TAG: Record<Severity, string> = { critical: 'CRIT', warning: 'WARN', info: 'INFO' };

/** Cut to `width` characters (code points), ending with "…" when cut. */
export function fit(text: string, width: number): string {
  const chars = [...text];
  return chars.length <= width ? text : `${chars.slice(0, Math.max(0, width - 1)).join('')}…`;
}

function nodeCells(row: NodeRow): [string, string, string, string] {
  if (row.agent === 'none') return ['—', '—', 'no agent', ''];
  if (row.agent === 'unreadable') return ['?', '?', `unreadable: ${row.problem ?? ''}`, ''];
  const failing = failingRules(row).map((f) => f.rule);
  const report = row.report as NonNullable<NodeRow['report']>;
  return [String(report.score), report.grade, failing.length > 0 ? failing.join(', ') : 'nothing failing', ''];
}

function nodeSection(report: ClusterReport, width: number): string[] {
  const cols = [20, 13, 5, 5];
  const rest = width - cols.reduce((a, b) => a + b + 1, 0);
  const line = (cells: string[]) => cells.map((cell, i) => (i < cols.length ? fit(cell, cols[i] as number).padEnd(cols[i] as number) : fit(cell, rest)))
    .join(' ').trimEnd();
  const rows = report.nodes.map((row) => {
    const [score, grade, failing] = nodeCells(row);
    return line([row.name, row.roles.join(','), score.padStart(5), grade, failing]);
  });
  const header = rows.length > 0 || report.rest.length === 0 ? [line(['NODE', 'ROLE', 'SCORE', 'GRADE', 'FAILING RULES'])] : [];
  return [...header, ...rows, ...restLines(report).map((l) => fit(l, width))];
}

/** Groups shown for the nodes outside the worst N; the JSON and --all have every node. */
const MAX_REST_GROUPS = 10;

/** The nodes not listed one by one, as groups ("4 812 nodes grade A, no failing rule"). */
export function restLines(report: ClusterReport): string[] {
  if (report.rest.length === 0) return [];
  const shown = report.rest.slice(0, MAX_REST_GROUPS);
  const hidden = report.rest.slice(MAX_REST_GROUPS);
  const others = hidden.reduce((n, g) => n + g.count, 0);
  const more = hidden.length > 0 ? [`  and ${spaced(others)} more in ${hidden.length} other groups`] : [];
  return [report.nodes.length > 0 ? 'Other nodes (--all lists each one)' : 'Nodes (--limit N lists the worst one by one)', ...shown.map((g) => `  ${g.text}`), ...more];
}

function headLines(report: ClusterReport, width: number): string[] {
  const { nodes, withAgent, noAgent, unreadable } = report.summary;
  const scope = report.selector ? ` matching ${report.selector}` : '';
  const counts = [`${spaced(withAgent)} with agent`, ...(noAgent > 0 ? [`${spaced(noAgent)} no agent`] : []), ...(unreadable > 0 ? [`${spaced(unreadable)} unreadable`] : [])];
  return [fit(`node-tuning-advisor report · ${spaced(nodes)} nodes${scope} (${counts.join(', ')})`, width)];
}

function detail(finding: Finding, width: number): string[] {
  const indent = (text: string, pad: string) => wrap(text, width - pad.length).map((l) => fit(`${pad}${l}`, width));
  const lines = [fit(`${STATUS_LABEL[finding.status]} ${finding.ruleId} (${finding.severity}) — ${finding.title}`, width), ...indent(finding.message, '  ')];
  lines.push('  Evidence:', ...finding.evidence.flatMap((e) => indent(describeEvidence(e), '    ')));
  if (finding.status === 'fail') {
    lines.push('  Fix:', ...indent(finding.remediation.text, '    '));
    for (const command of finding.remediation.commands) lines.push(fit(`    $ ${command}`, width));
    lines.push(...indent(`References: ${finding.references.map((r) => r.seed ?? r.url ?? r.note ?? '').join(', ')}`, '  '));
  }
  return lines;
}

export function renderClusterTable(report: ClusterReport, width = 80): string {
  const lines = [...headLines(report, width), '', ...nodeSection(report, width)];
  if (report.fleet.length > 0) {
    lines.push('', 'Failing across nodes');
    for (const group of report.fleet) lines.push(fit(`  ${TAG[group.severity]} ${group.text}`, width));
  }
  const { cluster } = report;
  lines.push('', fit(`Cluster checks · score ${cluster.score}/100 (grade ${cluster.grade}) · ${summaryLine(cluster.counts)}`, width));
  for (const f of cluster.findings) {
    lines.push(fit(`  ${STATUS_LABEL[f.status].padEnd(7)} ${f.severity.padEnd(8)} ${f.ruleId}`, width));
    const said = f.status === 'fail' ? `${f.observed} → want ${f.expected}` : f.message;
    lines.push(...wrap(said, width - 4).slice(0, 2).map((l) => fit(`    ${l}`, width)));
  }
  const undecided = cluster.findings.filter((f) => f.status === 'fail' || f.status === 'unknown');
  if (undecided.length > 0) lines.push('', 'What to do');
  for (const f of undecided) lines.push('', ...detail(f, width));
  if (lines.some((l) => l.endsWith('…'))) lines.push('', fit('Lines cut with … are complete in --output markdown or json.', width));
  return `${lines.join('\n')}\n`;
}

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

export function renderClusterMarkdown(report: ClusterReport): string {
  const lines = [`# node-tuning-advisor report`, '', ...headLines(report, 1000), '', '| Node | Roles | Score | Grade | Failing rules |', '|---|---|---:|---|---|'];
  for (const row of report.nodes) {
    const [score, grade, failing] = nodeCells(row);
    lines.push(`| ${cell(row.name)} | ${row.roles.join(', ')} | ${score} | ${grade} | ${cell(failing)} |`);
  }
  const rest = restLines(report);
  if (rest.length > 0) lines.push('', `**${rest[0]}**`, '', ...rest.slice(1).map((l) => `- ${cell(l.trim())}`));
  if (report.fleet.length > 0) lines.push('', '## Failing across nodes', '', ...report.fleet.map((g) => `- **${g.severity}** \`${g.rule}\`: ${g.text.slice(g.rule.length + 1)}`));
  lines.push('', `## Cluster checks: score ${report.cluster.score}/100 (grade ${report.cluster.grade})`, '', '| Status | Severity | Rule | Observed | Expected |', '|---|---|---|---|---|');
  for (const f of report.cluster.findings) lines.push(`| ${STATUS_LABEL[f.status]} | ${f.severity} | \`${f.ruleId}\` | ${cell(f.observed)} | ${cell(f.expected)} |`);
  for (const f of report.cluster.findings.filter((x) => x.status === 'fail' || x.status === 'unknown')) {
    lines.push('', `### ${STATUS_LABEL[f.status]} \`${f.ruleId}\` — ${f.title}`, '', f.message, '', '**Evidence**', '', ...f.evidence.map((e) => `- ${cell(describeEvidence(e))}`));
    if (f.status === 'fail') {
      lines.push('', `**Fix**: ${f.remediation.text}`, ...(f.remediation.commands.length > 0 ? ['', '```sh', ...f.remediation.commands, '```'] : []));
      lines.push('', `References: ${f.references.map((r) => r.seed ?? r.url ?? r.note ?? '').join(', ')}`);
    }
  }
  return `${lines.join('\n')}\n`;
}
