// `measure pod-startup` for people: the verdict first, then the phase table, the slowest pods and
// what the advisor said about the node; a comparison as before → after per phase. Plain text fits
// 80 columns (lines cut with … are complete in --output markdown or json); markdown for reports.
import type { Comparison, FactChange, PhaseChange } from '../measure/compare.ts';
import type { RecordedFact } from '../measure/advisor.ts';
import type { Measurement, PhaseStats } from '../measure/result.ts';
import type { PublishedFact } from './fact-annotation.ts';
import { STARTUP_PHASES } from '../workload/snapshot.ts';
import { displayWidth, hang } from './terminal/layout.ts';

export const FACT_LABELS: Record<PublishedFact, string> = {
  'kernel.hz': 'CONFIG_HZ',
  'cpu.governor': 'CPU governor',
  'tuned.loadedProfiles': 'tuned profile',
  'kubelet.kubeAPIQPS': 'kubelet QPS',
  'kubelet.kubeAPIBurst': 'kubelet burst',
  'scheduler.kubeAPIQPS': 'scheduler QPS',
  'scheduler.kubeAPIBurst': 'scheduler burst',
  'controllerManager.kubeAPIQPS': 'controller-manager QPS',
  'controllerManager.kubeAPIBurst': 'controller-manager burst',
};

/** 340 ms, 1.85 s, 12.3 s, 2m05s. */
export function formatMs(ms: number | null): string {
  if (ms === null) return '–';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 10_000) return `${(ms / 1000).toFixed(2)} s`;
  if (ms < 100_000) return `${(ms / 1000).toFixed(1)} s`;
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
}

function cut(line: string, width: number): string {
  return displayWidth(line) <= width ? line : `${line.slice(0, Math.max(1, width - 1))}…`;
}

export function factText(fact: RecordedFact): string {
  if (!('value' in fact)) return 'unknown';
  const v = fact.value;
  if (v === null) return 'none';
  if (Array.isArray(v)) return v.length === 0 ? 'none' : v.join(', ');
  return String(v);
}

const IMAGE_SOURCE = { flag: '', node: ' (the node\'s own pause image)', fallback: ' (default; the node lists no pause image)' } as const;

function headline(m: Measurement): string[] {
  const placed = m.settings.placement === 'scheduler' ? 'placed by the scheduler' : 'spec.nodeName (scheduler bypassed)';
  const claims = m.settings.pvcStorageClass ? `, a PVC each (${m.settings.pvcStorageClass})` : '';
  const verdict = m.slo.met ? 'MET' : 'MISSED';
  const p99 = m.slo.p99TotalMs === null ? (m.slo.note ?? 'unknown') : `p99 ${(m.slo.p99TotalMs / 1000).toFixed(3)} s`;
  const largest = m.slo.largestPhase ? `; largest phase: ${m.slo.largestPhase}` : '';
  const lines = [
    `Pod start-up on node ${m.node}: ${m.counts.created} pods at once, ${placed}${claims}`,
    `image ${m.settings.image}${IMAGE_SOURCE[m.settings.imageSource]}`,
    `SLO p99 creation → Ready < ${m.slo.thresholdMs / 1000} s: ${verdict} (${p99}${largest})`,
  ];
  if (m.outcome === 'timeout') lines.push(`TIMED OUT after ${formatMs(m.settings.timeoutSeconds * 1000)}: ${m.counts.ready} of ${m.counts.created} pods Ready; the table covers those`);
  return lines;
}

function statsRow(name: string, s: PhaseStats): string[] {
  return [name, formatMs(s.p50Ms), formatMs(s.p90Ms), formatMs(s.p99Ms), formatMs(s.maxMs), String(s.samples)];
}

function phaseRows(m: Measurement): string[][] {
  const rows = STARTUP_PHASES.map((p) => statsRow(p, m.phases[p]));
  if (m.attach) rows.push(statsRow('attach', m.attach));
  return rows;
}

function table(header: string[], rows: string[][], rightFrom: number): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((c, i) => (i >= rightFrom ? c.padStart(widths[i] as number) : c.padEnd(widths[i] as number))).join('  ').trimEnd();
  return [line(header), ...rows.map(line)];
}

const SLOWEST_HEADER = ['SLOWEST POD', 'TOTAL', 'SCHEDULING', 'INIT', 'CREATION', 'READINESS'];

function slowestRows(m: Measurement): string[][] {
  return m.slowest.map((s) => [s.pod, formatMs(s.phases.total), formatMs(s.phases.scheduling), formatMs(s.phases.initialization), formatMs(s.phases.creation), formatMs(s.phases.readiness)]);
}

function factsLines(m: Measurement, width: number): string[] {
  const a = m.advisor;
  const score = a.state === 'ok' ? `advisor score ${a.score}/100 (grade ${a.grade})` : a.state === 'none' ? 'no advisor report on it (agent not running there?)' : `advisor report unreadable: ${a.problem}`;
  const entries = Object.entries(a.facts) as [PublishedFact, RecordedFact][];
  const known = entries.filter(([, f]) => 'value' in f).map(([k, f]) => `${FACT_LABELS[k]} ${factText(f)}`);
  const unknown = entries.filter(([, f]) => !('value' in f));
  const reasons = [...new Set(unknown.map(([, f]) => ('unknown' in f ? f.unknown : '')))];
  const lines = hang('', `Node ${m.node} when measured: ${score}`, width, 2);
  if (known.length > 0) lines.push(...hang('  ', known.join(' · '), width, 4));
  if (unknown.length > 0) lines.push(...hang('  ', `unknown: ${unknown.map(([k]) => FACT_LABELS[k]).join(', ')} (${reasons.join('; ')})`, width, 4));
  return lines;
}

function notReadyLines(m: Measurement, width: number): string[] {
  const lines: string[] = [];
  if (m.notReady.length > 0) lines.push('', `Not Ready (${m.counts.notReady})`, ...m.notReady.flatMap((g) => hang('  ', `${g.pods} × ${g.reason}${g.example ? ` (${g.example})` : ''}`, width, 6)));
  if (m.createErrors.length > 0) lines.push('', `Not created (${m.counts.failedToCreate})`, ...m.createErrors.flatMap((g) => hang('  ', `${g.pods} × ${g.reason}`, width, 6)));
  return lines;
}

function footer(m: Measurement): string {
  return `Cluster ${m.clusterVersion ?? 'version unknown'}, kubelet ${m.kubeletVersion ?? 'unknown'}; started ${m.startedAt}; ${m.api.requests} API requests`;
}

export function renderMeasurementText(m: Measurement, width = 80): string {
  const lines = [
    ...headline(m).flatMap((l) => hang('', l, width, 2)), '',
    ...table(['PHASE', 'P50', 'P90', 'P99', 'MAX', 'PODS'], phaseRows(m), 1).map((l) => cut(l, width)),
  ];
  if (m.slowest.length > 0) lines.push('', ...table(SLOWEST_HEADER, slowestRows(m), 1).map((l) => cut(l, width)));
  lines.push(...notReadyLines(m, width), '', ...factsLines(m, width), ...hang('', footer(m), width, 2));
  return `${lines.join('\n')}\n`;
}

function changeCell(before: number | null, after: number | null, pct: number | null): string {
  const sign = pct === null ? '' : pct > 0 ? `+${pct}%` : `${pct}%`;
  return `${formatMs(before)} → ${formatMs(after)}${sign ? `  ${sign}` : ''}`;
}

function changeRows(c: Comparison): string[][] {
  return c.phases.map((p: PhaseChange) => [p.phase, changeCell(p.before.p50Ms, p.after.p50Ms, p.p50ChangePct), changeCell(p.before.p99Ms, p.after.p99Ms, p.p99ChangePct), p.verdict]);
}

function factChangeText(f: FactChange): string {
  return f.changed === true ? `${FACT_LABELS[f.fact]} ${factText(f.before)} → ${factText(f.after)}` : `${FACT_LABELS[f.fact]} ${factText(f.after)}`;
}

function sloSide(side: Comparison['before']): string {
  return `${side.sloMet ? 'met' : 'missed'} (p99 ${formatMs(side.p99TotalMs)})`;
}

function comparisonSummary(c: Comparison): string[] {
  const changed = c.facts.filter((f) => f.changed === true).map(factChangeText);
  const same = c.facts.filter((f) => f.changed === false).map(factChangeText);
  const unknown = c.facts.filter((f) => f.changed === 'unknown').map((f) => FACT_LABELS[f.fact]);
  const lines = [`SLO: ${sloSide(c.before)} → ${sloSide(c.after)}`];
  lines.push(`Changed between the runs: ${changed.length > 0 ? changed.join('; ') : 'none of the recorded settings'}`);
  if (same.length > 0) lines.push(`Unchanged: ${same.join('; ')}`);
  if (unknown.length > 0) lines.push(`Not known for both runs: ${unknown.join(', ')}`);
  for (const caveat of c.caveats) lines.push(`Note: ${caveat}`);
  return lines;
}

export function renderComparisonText(c: Comparison, beforeFile: string, width = 80): string {
  const lines = [
    '', ...hang('', `Before → after (before: ${beforeFile}, ${c.before.startedAt}; after: this run)`, width, 2),
    ...table(['PHASE', 'P50 BEFORE → AFTER', 'P99 BEFORE → AFTER', 'VERDICT'], changeRows(c), 99).map((l) => cut(l, width)),
    ...comparisonSummary(c).flatMap((l) => hang('', l, width, 2)),
  ];
  return `${lines.join('\n')}\n`;
}

const md = (text: string): string => text.replace(/[|\\`*_[\]<>]/g, (ch) => `\\${ch}`);

function mdTable(header: string[], rows: string[][]): string[] {
  return [`| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.map(md).join(' | ')} |`)];
}

export function renderMeasurementMarkdown(m: Measurement): string {
  const lines = [`### Pod start-up on ${md(m.node)}`, '', ...headline(m).map((l) => `${md(l)}  `), '', ...mdTable(['phase', 'p50', 'p90', 'p99', 'max', 'pods'], phaseRows(m))];
  if (m.slowest.length > 0) lines.push('', ...mdTable(SLOWEST_HEADER.map((h) => h.toLowerCase()), slowestRows(m)));
  lines.push(...notReadyLines(m, Infinity).map((l) => (l.startsWith('  ') ? `- ${md(l.trim())}` : md(l))), '', ...factsLines(m, Infinity).map((l) => `${md(l.trim())}  `));
  lines.push(md(footer(m)));
  return `${lines.join('\n')}\n`;
}

export function renderComparisonMarkdown(c: Comparison, beforeFile: string): string {
  return `${['', `### Before → after (before: ${md(beforeFile)})`, '', ...mdTable(['phase', 'p50 before → after', 'p99 before → after', 'verdict'], changeRows(c)), '',
    ...comparisonSummary(c).map((l) => `${md(l)}  `)].join('\n')}\n`;
}
