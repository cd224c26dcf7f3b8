// `measure pod-startup` for people: the verdict first, then the phase table, the slowest pods and
// what the advisor said about the node; a comparison as before → after per phase. Plain text fits
// 80 columns (lines cut with … are complete in --output markdown or json); markdown for reports.
import { MIN_CHANGE_MS, MIN_CHANGE_RATIO, type Comparison, type FactChange, type PhaseChange } from '../measure/compare.ts';
import type { RecordedFact } from '../measure/advisor.ts';
import { TIMED_PARTS, partStats, type Measurement, type PhaseStats } from '../measure/result.ts';
import type { PublishedFact } from '../wire/summary-facts.ts';
import { hang } from './terminal/layout.ts';
import { displayWidth } from '../text/columns.ts';

/** How people name the settings; client QPS and burst read as one pair ("kubelet QPS/burst 50/100"). */
const FACT_GROUPS: { label: string; facts: PublishedFact[] }[] = [
  { label: 'CONFIG_HZ', facts: ['kernel.hz'] },
  { label: 'CPU governor', facts: ['cpu.governor'] },
  { label: 'tuned profile', facts: ['tuned.loadedProfiles'] },
  { label: 'kubelet QPS/burst', facts: ['kubelet.kubeAPIQPS', 'kubelet.kubeAPIBurst'] },
  { label: 'scheduler QPS/burst', facts: ['scheduler.kubeAPIQPS', 'scheduler.kubeAPIBurst'] },
  { label: 'controller-manager QPS/burst', facts: ['controllerManager.kubeAPIQPS', 'controllerManager.kubeAPIBurst'] },
];

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

export function headline(m: Measurement): string[] {
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
  if (m.validity && !m.validity.valid) lines.push(`NOT VALID: ${m.validity.problems.join('; ')}`);
  if (m.throttling) lines.push(`Throttled: ${m.throttling}`);
  return lines;
}

function statsRow(name: string, s: PhaseStats): string[] {
  return [name, formatMs(s.p50Ms), formatMs(s.p90Ms), formatMs(s.p99Ms), formatMs(s.maxMs), String(s.samples)];
}

/**
 * The parts of the total (the kubelet's phases and statusDelay, its Ready stamp → the API showing it:
 * the status write's wait), then the total: the largest phase is one of the rows above the total.
 */
export function phaseRows(m: Measurement): string[][] {
  const parts = TIMED_PARTS.flatMap((part) => { const stats = partStats(m, part); return stats ? [statsRow(part, stats)] : []; });
  return [...parts, statsRow('total', m.phases.total)];
}

/** Attach overlaps the phases (bound → volume attached), so it is timed beside them, not among them. */
export const ATTACH_HEADER = ['VOLUME ATTACH', 'P50', 'P90', 'P99', 'MAX', 'PODS'];

export function attachRows(m: Measurement): string[][] {
  return m.attach ? [statsRow('bound → attached', m.attach)] : [];
}

function table(header: string[], rows: string[][], rightFrom: number): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((c, i) => (i >= rightFrom ? c.padStart(widths[i] as number) : c.padEnd(widths[i] as number))).join('  ').trimEnd();
  return [line(header), ...rows.map(line)];
}

const SLOWEST_HEADER = ['SLOWEST POD', 'TOTAL', 'SCHEDULING', 'INIT', 'CREATION', 'READINESS', 'STATUSDELAY'];

function slowestRows(m: Measurement): string[][] {
  return m.slowest.map((s) => [
    s.pod, formatMs(s.phases.total), formatMs(s.phases.scheduling), formatMs(s.phases.initialization), formatMs(s.phases.creation), formatMs(s.phases.readiness),
    formatMs(s.statusDelayMs ?? null),
  ]);
}

/** A group's values as one text ("50/100"; "?" for an unknown part). */
function groupText(facts: Record<PublishedFact, RecordedFact>, group: PublishedFact[]): string {
  return group.map((k) => ('value' in facts[k] ? factText(facts[k]) : '?')).join('/');
}

export function factsLines(m: Measurement, width: number): string[] {
  const a = m.advisor;
  const score = a.state === 'ok' ? `advisor score ${a.score}/100 (grade ${a.grade})` : a.state === 'none' ? 'no advisor report on it (agent not running there?)' : `advisor report unreadable: ${a.problem}`;
  const known = FACT_GROUPS.filter((g) => g.facts.some((k) => 'value' in a.facts[k])).map((g) => `${g.label} ${groupText(a.facts, g.facts)}`);
  const unknown = FACT_GROUPS.filter((g) => g.facts.every((k) => !('value' in a.facts[k])));
  const reasons = [...new Set(unknown.flatMap((g) => g.facts.map((k) => { const f = a.facts[k]; return 'unknown' in f ? f.unknown : ''; })))];
  const lines = hang('', `Node ${m.node} when measured: ${score}`, width, 2);
  if (known.length > 0) lines.push(...hang('  ', known.join(' · '), width, 4));
  if (unknown.length > 0) lines.push(...hang('  ', `unknown: ${unknown.map((g) => g.label).join(', ')} (${reasons.join('; ')})`, width, 4));
  return lines;
}

export function notReadyLines(m: Measurement, width: number): string[] {
  const lines: string[] = [];
  if (m.notReady.length > 0) lines.push('', `Not Ready (${m.counts.notReady})`, ...m.notReady.flatMap((g) => hang('  ', `${g.pods} × ${g.reason}${g.example ? ` (${g.example})` : ''}`, width, 6)));
  if (m.createErrors.length > 0) lines.push('', `Not created (${m.counts.failedToCreate})`, ...m.createErrors.flatMap((g) => hang('  ', `${g.pods} × ${g.reason}`, width, 6)));
  return lines;
}

export function footer(m: Measurement): string {
  return `Cluster ${m.clusterVersion ?? 'version unknown'}, kubelet ${m.kubeletVersion ?? 'unknown'}; started ${m.startedAt}; ${m.api.requests} API requests`;
}

export function renderMeasurementText(m: Measurement, width = 80): string {
  const lines = [
    ...headline(m).flatMap((l) => hang('', l, width, 2)), '',
    ...table(['PHASE', 'P50', 'P90', 'P99', 'MAX', 'PODS'], phaseRows(m), 1).map((l) => cut(l, width)),
  ];
  if (m.attach) lines.push('', ...table(ATTACH_HEADER, attachRows(m), 1).map((l) => cut(l, width)));
  if (m.slowest.length > 0) lines.push('', ...table(SLOWEST_HEADER, slowestRows(m), 1).map((l) => cut(l, width)));
  lines.push(...notReadyLines(m, width), '', ...factsLines(m, width), ...hang('', footer(m), width, 2));
  return `${lines.join('\n')}\n`;
}

/** "-6.99 s -93%", "+100 ms +1431% (noise)": the absolute change, the relative one, and whether it is under the floor. */
function changeText(ms: number | null, pct: number | null, noise: boolean): string {
  if (ms === null) return '–';
  const signed = `${ms > 0 ? '+' : ms < 0 ? '-' : '±'}${formatMs(Math.abs(ms))}`;
  const relative = pct === null ? '' : ` ${pct > 0 ? '+' : ''}${pct}%`;
  return `${signed}${relative}${noise ? ' (noise)' : ''}`;
}

/** Two rows per phase: its p50, then its p99, each before → after and the change; the verdict on the first. */
export function changeRows(c: Comparison): string[][] {
  return c.phases.flatMap((p: PhaseChange) => [
    [p.phase, 'p50', `${formatMs(p.before.p50Ms)} → ${formatMs(p.after.p50Ms)}`, changeText(p.p50ChangeMs, p.p50ChangePct, p.withinNoise.p50), p.verdict],
    ['', 'p99', `${formatMs(p.before.p99Ms)} → ${formatMs(p.after.p99Ms)}`, changeText(p.p99ChangeMs, p.p99ChangePct, p.withinNoise.p99), ''],
  ]);
}

export const CHANGE_HEADER = ['PHASE', '', 'BEFORE → AFTER', 'CHANGE', 'VERDICT'];

/** Which floor the verdicts used: under 100 ms, or under 10 % of the total, is noise. */
export function noiseLine(c: Comparison): string {
  return `Noise: a change under ${formatMs(MIN_CHANGE_MS)} or under ${MIN_CHANGE_RATIO * 100} % of the total (p50 ${formatMs(c.noiseFloor.p50Ms)}, `
    + `p99 ${formatMs(c.noiseFloor.p99Ms)} here) counts as unchanged, whatever its percentage`;
}

/** Per group: changed when any part changed, unknown when no part is known on both sides. */
function groupChanges(c: Comparison): { label: string; state: 'changed' | 'same' | 'unknown'; text: string }[] {
  return FACT_GROUPS.map((g) => {
    const changes = g.facts.map((k) => c.facts.find((f) => f.fact === k) as FactChange);
    const side = (which: 'before' | 'after') => changes.map((f) => ('value' in f[which] ? factText(f[which]) : '?')).join('/');
    const state = changes.some((f) => f.changed === true) ? 'changed' : changes.every((f) => f.changed === 'unknown') ? 'unknown' : 'same';
    return { label: g.label, state, text: state === 'changed' ? `${g.label} ${side('before')} → ${side('after')}` : `${g.label} ${side('after')}` };
  });
}

function sloSide(side: Comparison['before']): string {
  return `${side.sloMet ? 'met' : 'missed'} (p99 ${formatMs(side.p99TotalMs)})`;
}

export function comparisonSummary(c: Comparison): string[] {
  const groups = groupChanges(c);
  const changed = groups.filter((g) => g.state === 'changed').map((g) => g.text);
  const same = groups.filter((g) => g.state === 'same').map((g) => g.text);
  const unknown = groups.filter((g) => g.state === 'unknown').map((g) => g.label);
  const lines = [noiseLine(c), `SLO: ${sloSide(c.before)} → ${sloSide(c.after)}`];
  lines.push(`Changed between the runs: ${changed.length > 0 ? changed.join('; ') : 'none of the recorded settings'}`);
  if (same.length > 0) lines.push(`Unchanged: ${same.join('; ')}`);
  if (unknown.length > 0) lines.push(`Not known for both runs: ${unknown.join(', ')}`);
  if (c.credit) lines.push(`Credit: ${c.credit}`);
  for (const caveat of c.caveats) lines.push(`Note: ${caveat}`);
  return lines;
}

export function renderComparisonText(c: Comparison, beforeFile: string, width = 80): string {
  const lines = [
    '', ...hang('', `Before → after (before: ${beforeFile}, ${c.before.startedAt}; after: this run)`, width, 2),
    ...table(CHANGE_HEADER, changeRows(c), 99).map((l) => cut(l, width)),
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
  if (m.attach) lines.push('', ...mdTable(ATTACH_HEADER.map((h) => h.toLowerCase()), attachRows(m)));
  if (m.slowest.length > 0) lines.push('', ...mdTable(SLOWEST_HEADER.map((h) => h.toLowerCase()), slowestRows(m)));
  lines.push(...notReadyLines(m, Infinity).map((l) => (l.startsWith('  ') ? `- ${md(l.trim())}` : md(l))), '', ...factsLines(m, Infinity).map((l) => `${md(l.trim())}  `));
  lines.push(md(footer(m)));
  return `${lines.join('\n')}\n`;
}

export function renderComparisonMarkdown(c: Comparison, beforeFile: string): string {
  return `${['', `### Before → after (before: ${md(beforeFile)})`, '', ...mdTable(['phase', 'percentile', 'before → after', 'change', 'verdict'], changeRows(c)), '',
    ...comparisonSummary(c).map((l) => `${md(l)}  `)].join('\n')}\n`;
}
