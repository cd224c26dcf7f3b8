// publish/: renderers of every result; they take data and know no rule (nothing below imports them).
// Renders `report`: nodes worst first, failing rules grouped across nodes, then the cluster checks
// as `scan` shows a node's: what to fix first, the evidence one flag away (--verbose). The table
// fits `width` columns: long cells wrap under themselves, nothing is cut.
import type { ClusterReport } from '../cluster/report.ts';
import { nodes as nodeCount, spaced } from '../cluster/fleet.ts';
import { failingRules, isStale, type NodeRow } from '../cluster/nodes.ts';
import { age } from '../wire/heartbeat.ts';
import type { Severity } from '../report/types.ts';
import { countLines, failBlock, idColumn, painter, unknownBlock, unknownGroups, type Layout } from './terminal/findings.ts';
import { hang, row } from './terminal/layout.ts';
import { displayWidth } from '../text/columns.ts';
import { describeEvidence, referenceText, STATUS_LABEL, summaryLine } from './text.ts';

const TAG: Record<Severity, string> = { critical: 'CRIT', warning: 'WARN', info: 'INFO' };

export interface ClusterViewOptions {
  width: number;
  color?: boolean;
  verbose?: boolean;
}

/** Score, grade, and the failing rules with how many more could not be checked (coverage, not in the score). */
function nodeCells(row: NodeRow): [string, string, string] {
  if (row.agent === 'none') return ['—', '—', 'no agent'];
  if (row.agent === 'unreadable') return ['?', '?', `unreadable: ${row.problem ?? ''}`];
  const failing = failingRules(row).map((f) => f.rule);
  const report = row.report as NonNullable<NodeRow['report']>;
  const failingText = failing.length > 0 ? failing.join(', ') : 'nothing failing';
  if (isStale(row)) return [String(report.score), report.grade, `${staleText(row)}; last published: ${failingText}`];
  const unknown = report.counts.unknown > 0 ? ` · ${report.counts.unknown} unknown` : '';
  return [String(report.score), report.grade, `${failingText}${unknown}`];
}

/** "STALE: last heartbeat 31 min ago" or "STALE: no heartbeat". */
export function staleText(row: NodeRow): string {
  const seconds = row.heartbeat?.ageSeconds;
  return seconds === undefined ? 'STALE: no heartbeat' : `STALE: last heartbeat ${age(Math.abs(seconds))} ${seconds < 0 ? 'ahead' : 'ago'}`;
}

/** One row per node; names and roles wrap inside their columns, the failing rules under theirs. */
export function nodeLines(rows: NodeRow[], width: number): string[] {
  if (rows.length === 0) return [];
  const nameWidth = Math.min(Math.floor(width / 4), Math.max(4, ...rows.map((r) => displayWidth(r.name))));
  const roleWidth = Math.min(16, Math.max(4, ...rows.map((r) => displayWidth(r.roles.join(',')))));
  const widths = [nameWidth, roleWidth, 5, 5];
  const lines = row(['NODE', 'ROLE', 'SCORE', 'GRADE', 'FAILING RULES'], widths, width);
  for (const node of rows) {
    const [score, grade, failing] = nodeCells(node);
    lines.push(...row([node.name, node.roles.join(','), score, grade, failing], widths, width));
  }
  return lines;
}

/** Groups shown for the nodes outside the worst N; --all, JSON and YAML have every node. */
const MAX_REST_GROUPS = 10;

/** The nodes not listed one by one, as groups ("4 812 nodes grade A, no failing rule"): a heading, then one line each. */
export function restLines(report: ClusterReport): { heading: string; groups: string[] } | undefined {
  if (report.rest.length === 0) return undefined;
  const hidden = report.rest.slice(MAX_REST_GROUPS);
  const others = hidden.reduce((n, g) => n + g.count, 0);
  return {
    heading: report.nodes.length > 0 ? 'Other nodes (--all lists each one)' : 'Nodes (--limit N lists the worst one by one)',
    groups: [...report.rest.slice(0, MAX_REST_GROUPS).map((g) => g.text), ...(hidden.length > 0 ? [`and ${spaced(others)} more in ${hidden.length} other groups`] : [])],
  };
}

/** Failing ids the rule set does not know: one line apart from the fleet's tally, which never counts them. */
export function unknownRulesLine(report: ClusterReport): string | undefined {
  const { nodes, ids, more, examples } = report.summary.unknownRules;
  if (nodes === 0) return undefined;
  const count = `${more ? 'over ' : ''}${spaced(ids)} ${ids === 1 && !more ? 'id' : 'ids'}`;
  return `${count} this rule set does not know, failing on ${spaced(nodes)} ${nodes === 1 ? 'node' : 'nodes'} (${examples.join(', ')}${ids > examples.length || more ? ', …' : ''}): `
    + 'not counted above; agents with other rule files (run report with their --rules) or annotations someone else wrote';
}

/** "kubelet restart pending on 3 nodes", from the summary's tally; nothing when none. */
function restartPendingPart(report: ClusterReport): string[] {
  const pending = report.summary.restartPending;
  return pending && pending.nodes > 0 ? [`kubelet restart pending on ${nodeCount(pending.nodes)}`] : [];
}

export function headLine(report: ClusterReport): string {
  const { nodes, withAgent, stale, noAgent, unreadable } = report.summary;
  const scope = report.selector ? ` matching ${report.selector}` : '';
  const counts = [`${spaced(withAgent)} with agent`, ...(stale > 0 ? [`${spaced(stale)} stale`] : []),
    ...(noAgent > 0 ? [`${spaced(noAgent)} no agent`] : []), ...(unreadable > 0 ? [`${spaced(unreadable)} unreadable`] : [])];
  return [`node-tuning-advisor report · ${nodeCount(nodes)}${scope} (${counts.join(', ')})`, ...restartPendingPart(report)].join(' · ');
}

/** Below the head line: why no node could be called current or stale, or what stale means. */
export function heartbeatNote(report: ClusterReport): string | undefined {
  const read = report.summary.heartbeats;
  if (read?.problem) return `${read.problem}: no node is marked stale`;
  if (report.summary.stale === 0) return undefined;
  return `stale: no heartbeat from the node's agent for over 3 periods (Leases in ${read?.namespace ?? '?'}); its grade is the last it published and is not counted above`;
}

function clusterCheckLines(report: ClusterReport, layout: Layout): string[] {
  const { cluster } = report;
  const settled = cluster.findings.filter((f) => f.status === 'pass' || f.status === 'not-applicable');
  const idWidth = idColumn(cluster.findings.filter((f) => f.status === 'fail' || f.status === 'unknown'), layout.width);
  const blocks = [
    ...cluster.findings.filter((f) => f.status === 'fail').map((f) => failBlock(f, idWidth, layout)),
    ...unknownGroups(cluster.findings, layout.verbose).map((g) => unknownBlock(g, idWidth, layout)),
    ...(settled.length > 0 ? [countLines(settled, layout.width)] : []),
  ];
  return [
    ...hang('', `Cluster checks · score ${cluster.score}/100 (grade ${cluster.grade}) · ${summaryLine(cluster.counts)}`, layout.width, 2)
      .map((line, i) => (i === 0 ? layout.paint('bold', line) : line)),
    ...blocks.flatMap((block) => ['', ...block]),
  ];
}

export function renderClusterTable(report: ClusterReport, options: ClusterViewOptions): string {
  const layout: Layout = { width: options.width, paint: painter(options.color === true), verbose: options.verbose === true };
  const lines = [
    ...hang('', headLine(report), layout.width, 2).map((line, i) => (i === 0 ? layout.paint('bold', line) : line)),
    ...hang('', heartbeatNote(report) ?? '', layout.width, 2).filter(Boolean),
    '',
    ...nodeLines(report.nodes, layout.width),
  ];
  const rest = restLines(report);
  if (rest) lines.push(...(report.nodes.length > 0 ? [''] : []), rest.heading, ...rest.groups.flatMap((g) => hang('  ', g, layout.width, 4)));
  if (report.fleet.length > 0) {
    lines.push('', 'Failing across nodes');
    for (const group of report.fleet) lines.push(...hang(`  ${TAG[group.severity]} `, group.text, layout.width));
  }
  const unknown = unknownRulesLine(report);
  if (unknown) lines.push('', ...hang('Unknown rules: ', unknown, layout.width, 2));
  lines.push('', ...clusterCheckLines(report, layout));
  const hints = [...(layout.verbose ? [] : ['--verbose for the evidence and the full fix']), '-o json or markdown for every field'];
  lines.push('', ...hang('More: ', hints.join(' · '), layout.width));
  return `${lines.join('\n')}\n`;
}

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

export function renderClusterMarkdown(report: ClusterReport): string {
  const header = report.nodes.length > 0 ? ['| Node | Roles | Score | Grade | Failing rules |', '|---|---|---:|---|---|'] : [];
  const note = heartbeatNote(report);
  const lines = [`# node-tuning-advisor report`, '', headLine(report), ...(note ? ['', cell(note)] : []), '', ...header];
  for (const row of report.nodes) {
    const [score, grade, failing] = nodeCells(row);
    lines.push(`| ${cell(row.name)} | ${row.roles.join(', ')} | ${score} | ${grade} | ${cell(failing)} |`);
  }
  const rest = restLines(report);
  if (rest) lines.push('', `**${rest.heading}**`, '', ...rest.groups.map((g) => `- ${cell(g)}`));
  if (report.fleet.length > 0) lines.push('', '## Failing across nodes', '', ...report.fleet.map((g) => `- **${g.severity}** \`${g.rule}\`: ${g.text.slice(g.rule.length + 1)}`));
  const unknown = unknownRulesLine(report);
  if (unknown) lines.push('', `**Unknown rules**: ${cell(unknown)}`);
  lines.push('', `## Cluster checks: score ${report.cluster.score}/100 (grade ${report.cluster.grade})`, '', '| Status | Severity | Rule | Observed | Expected |', '|---|---|---|---|---|');
  for (const f of report.cluster.findings) lines.push(`| ${STATUS_LABEL[f.status]} | ${f.severity} | \`${f.ruleId}\` | ${cell(f.observed)} | ${cell(f.expected)} |`);
  for (const f of report.cluster.findings.filter((x) => x.status === 'fail' || x.status === 'unknown')) {
    lines.push('', `### ${STATUS_LABEL[f.status]} \`${f.ruleId}\` — ${f.title}`, '', f.message, '', '**Evidence**', '', ...f.evidence.map((e) => `- ${cell(describeEvidence(e))}`));
    if (f.status === 'fail') {
      lines.push('', `**Fix**: ${f.remediation.summary}. ${f.remediation.text}`, ...(f.remediation.commands.length > 0 ? ['', '```sh', ...f.remediation.commands, '```'] : []));
      lines.push('', `References: ${f.references.map(referenceText).join(', ')}`);
    }
  }
  return `${lines.join('\n')}\n`;
}
