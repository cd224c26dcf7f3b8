// `describe NODE` in the terminal: the node as its agent published it, in the layout of `scan`'s
// view — score and counts, a block per failing rule (found, want when the line kept it, the short
// fix), unknown rules by reason — then the agent's Events on the Node, newest first.
import type { AdvisorEvent, NodeAdvice } from '../../cluster/node-advice.ts';
import type { Finding, FindingStatus, Severity } from '../../report/types.ts';
import { parseFindingLine, type ParsedFindingLine } from '../../wire/finding-line.ts';
import { oneLine } from '../../text/controls.ts';
import { failBlock, idColumn, painter, unknownBlock, unknownGroups, type Layout } from './findings.ts';
import { hang, row } from './layout.ts';
import { coverageFromCounts, coverageText } from '../../report/score.ts';

/** What the plugin's rule set knows about a rule the annotations only name. */
export type RuleInfo = (ruleId: string) => { title: string; category: string } | undefined;

export interface NodeViewOptions {
  width: number;
  color: boolean;
  /** How long ago an Event was, from its time (now: the caller's clock). */
  now: Date;
  /** The command prefix for hints: "kubectl node-tuning" or "node-tuning-advisor". */
  program: string;
}

/** A finding rebuilt from the report annotation's entry and its findings line. */
function findingOf(entry: { rule: string; status: FindingStatus; severity: Severity; observed?: string }, line: ParsedFindingLine | undefined, info: RuleInfo): Finding {
  const known = info(entry.rule);
  const unknown = entry.status === 'unknown';
  return {
    ruleId: entry.rule, title: known?.title ?? '', category: known?.category ?? '', status: entry.status, severity: entry.severity, weight: 0,
    observed: oneLine(unknown ? '' : entry.observed ?? line?.observed ?? ''),
    expected: oneLine(line?.expected ?? ''),
    message: unknown ? oneLine(line?.observed ?? 'no reason published') : '',
    evidence: [],
    remediation: { summary: oneLine(line?.fix ?? ''), text: '', commands: [] },
    references: [],
    scoreImpact: 0,
  };
}

/**
 * Each findings line shortened its reason to fit beside its own rule id, so one reason can arrive
 * in several lengths: give each the longest version it begins, so they group as in `scan`.
 */
function sameReasons(findings: Finding[]): Finding[] {
  const reasons = findings.filter((f) => f.status === 'unknown').map((f) => f.message).sort((a, b) => b.length - a.length);
  return findings.map((f) => (f.status === 'unknown' ? { ...f, message: reasons.find((r) => r.startsWith(f.message)) ?? f.message } : f));
}

function ago(when: string | null, now: Date): string {
  if (!when) return '?';
  const s = Math.max(0, Math.round((now.getTime() - new Date(when).getTime()) / 1000));
  if (s < 120) return `${s}s`;
  if (s < 7200) return `${Math.round(s / 60)}m`;
  if (s < 172800) return `${Math.round(s / 3600)}h`;
  return `${Math.round(s / 86400)}d`;
}

function eventLines(events: AdvisorEvent[], problem: string | undefined, options: NodeViewOptions): string[] {
  if (problem) return hang('Events: ', `cannot list them (${problem})`, options.width);
  if (events.length === 0) return ['Events: none from node-tuning-advisor'];
  const widths = [5, 7, Math.max(...events.map((e) => e.reason.length))];
  return ['Events (node-tuning-advisor, newest first)', ...events.flatMap((e) =>
    row([ago(e.lastSeen, options.now), e.type, e.reason, `${e.message}${e.count > 1 ? ` (×${e.count})` : ''}`], widths, options.width - 2).map((l) => `  ${l}`))];
}

function header(advice: NodeAdvice, layout: Layout): string[] {
  const roles = advice.roles.join(', ');
  if (!advice.report) {
    const why = advice.agent === 'none'
      ? 'no node-tuning-advisor annotations: no agent runs on this node, or it has not published yet'
      : `its node-tuning-advisor annotations cannot be read: ${advice.problem ?? ''}`;
    return [layout.paint('bold', `node ${advice.node} · ${roles}`), ...hang('', why, layout.width, 2)];
  }
  const { score, grade, counts, omitted, rules } = advice.report;
  const coverage = coverageFromCounts(counts, rules.filter((e) => e.status === 'unknown').map((e) => e.severity));
  const tally = [`${counts.fail} failing`, `${counts.unknown} unknown`, `${counts.pass} pass`, `${counts['not-applicable']} not applicable`, coverageText(coverage)];
  const stale = advice.heartbeat?.state === 'stale';
  return [
    ...hang('', `node ${advice.node} · score ${score}/100, grade ${grade} · ${roles} · as its agent ${stale ? 'last ' : ''}published it`, layout.width, 2)
      .map((line, i) => (i === 0 ? layout.paint('bold', line) : line)),
    ...hang('', `${tally.join(' · ')}${omitted > 0 ? ` · ${omitted} more not published (8 KiB limit)` : ''}`, layout.width, 2),
    ...heartbeatLines(advice, layout),
  ];
}

/** STALE in bold when no heartbeat vouches for the findings any more; otherwise how old the heartbeat is. */
function heartbeatLines(advice: NodeAdvice, layout: Layout): string[] {
  const heartbeat = advice.heartbeat;
  if (!heartbeat) return [];
  if (heartbeat.state !== 'stale') return hang('', `Heartbeat: ${heartbeat.reason}`, layout.width, 2);
  return hang('STALE: ', `${heartbeat.reason}. These findings may no longer be true.`, layout.width, 2)
    .map((line, i) => (i === 0 ? layout.paint('bold', line) : line));
}

export function renderNodeView(advice: NodeAdvice, info: RuleInfo, options: NodeViewOptions): string {
  const layout: Layout = { width: options.width, paint: painter(options.color), verbose: false };
  const lines = new Map(advice.findings.map(parseFindingLine).filter((l) => l !== undefined).map((l) => [l.ruleId, l]));
  const findings = sameReasons((advice.report?.rules ?? []).filter((e) => e.status === 'fail' || e.status === 'unknown')
    .map((entry) => findingOf(entry, lines.get(entry.rule), info)));
  const idWidth = idColumn(findings, options.width);
  const blocks = [
    ...findings.filter((f) => f.status === 'fail').map((f) => failBlock(f, idWidth, layout)),
    ...unknownGroups(findings, false).map((g) => unknownBlock(g, idWidth, layout)),
  ];
  if (advice.report && blocks.length === 0) blocks.push(['Nothing to fix: no rule fails or is undecided on this node.']);
  const first = findings[0]?.ruleId ?? 'RULE';
  const more = `${options.program} explain ${first} for what a rule checks and its full fix · on the node: ${options.program} scan --verbose for all the evidence`;
  const out = [
    ...header(advice, layout),
    ...blocks.flatMap((block) => ['', ...block]),
    '', ...eventLines(advice.events, advice.eventsProblem, options),
    '', ...hang('More: ', more, options.width),
  ];
  return `${out.join('\n')}\n`;
}
