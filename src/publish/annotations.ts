// Report → the annotations we own on the Node, and the merge patch that brings the Node there.
// Pure: no I/O. Limits come from `kubectl describe node`, which prints `key: value` when
// key+value+2 ≤ 140 bytes and otherwise prints each `\n`-separated line cut to 138 bytes.
import { SEVERITIES, type Finding, type FindingStatus, type Report, type Severity } from '../report/types.ts';
import { FACTS_KEY, renderFactsAnnotation } from './fact-annotation.ts';
import { byteLength, oneLine, truncateBytes } from './text-bytes.ts';

export const ANNOTATION_PREFIX = 'node-tuning-advisor.io/';
export const SUMMARY_KEY = `${ANNOTATION_PREFIX}summary`;
export const FINDINGS_KEY = `${ANNOTATION_PREFIX}findings`;
export const REPORT_KEY = `${ANNOTATION_PREFIX}report`;

/** kubectl describe keeps a value on the key's line while key + value ≤ 138 bytes. */
export const MAX_SINGLE_LINE_BYTES = 138;
/** kubectl describe cuts each line of a multi-line value after 138 bytes. */
export const MAX_LINE_BYTES = 138;
/** Our share of the Node's 256 KiB annotation budget: all our keys plus values. */
export const MAX_TOTAL_BYTES = 8 * 1024;

export type AnnotationMap = Record<string, string>;
/** A JSON merge patch (RFC 7386) of metadata.annotations: null deletes a key. */
export type AnnotationPatch = Record<string, string | null>;

const SEVERITY_TAG: Record<Severity, string> = { critical: 'CRIT', warning: 'WARN', info: 'INFO' };
const SEVERITY_RANK: Record<Severity, number> = { critical: 0, warning: 1, info: 2 };

/** Failing rules first, then unknown; within each, most severe, biggest score impact, then id. */
export function nonPassingInOrder(findings: readonly Finding[]): Finding[] {
  const statusRank = (f: Finding): number => (f.status === 'fail' ? 0 : 1);
  return findings
    .filter((f) => f.status === 'fail' || f.status === 'unknown')
    .sort(
      (a, b) =>
        statusRank(a) - statusRank(b) ||
        SEVERITY_RANK[a.severity] - SEVERITY_RANK[b.severity] ||
        b.scoreImpact - a.scoreImpact ||
        a.ruleId.localeCompare(b.ruleId),
    );
}

export function renderSummary(report: Report): string {
  const failing = { critical: 0, warning: 0, info: 0 };
  for (const f of report.findings) if (f.status === 'fail') failing[f.severity] += 1;
  const text =
    `score ${report.score}/100 grade ${report.grade}: ${failing.critical} critical, ${failing.warning} warning, ` +
    `${failing.info} info failing; ${report.counts.unknown} unknown, ${report.counts.pass} pass`;
  return truncateBytes(text, MAX_SINGLE_LINE_BYTES - byteLength(SUMMARY_KEY));
}

/** One line per non-passing rule: "CRIT rule-id: observed; want expected — fix". */
export function renderFindingLine(finding: Finding): string {
  if (finding.status === 'unknown') {
    return truncateBytes(oneLine(`UNKN ${finding.ruleId}: ${finding.message}`), MAX_LINE_BYTES);
  }
  const observed = oneLine(finding.observed) || oneLine(finding.message);
  const want = finding.expected ? `; want ${oneLine(finding.expected)}` : '';
  const fix = finding.remediation.text ? ` — ${oneLine(finding.remediation.text)}` : '';
  return truncateBytes(`${SEVERITY_TAG[finding.severity]} ${finding.ruleId}: ${observed}${want}${fix}`, MAX_LINE_BYTES);
}

/** One rule in the `report` annotation; the reader below (`parseAnnotations`) checks the same shape. */
export interface RuleEntry {
  rule: string;
  status: Finding['status'];
  severity: Severity;
  category: string;
  observed?: string;
}

/** Version of the `report` annotation's JSON; bump it when a reader could misread the new shape. */
export const ANNOTATION_SCHEMA_VERSION = 1;

/** One JSON object per line, each line ≤ 138 bytes; JSON allows the newlines between tokens. */
function renderReportJson(report: Report, entries: RuleEntry[], omitted: number): string {
  const head = { schemaVersion: ANNOTATION_SCHEMA_VERSION, score: report.score, grade: report.grade, counts: report.counts, omitted };
  const headJson = JSON.stringify(head);
  const lines = entries.map((entry, i) => fitEntryLine(entry) + (i < entries.length - 1 ? ',' : ''));
  return [`${headJson.slice(0, -1)},"rules":[`, ...lines, ']}'].join('\n');
}

function fitEntryLine(entry: RuleEntry): string {
  const budget = MAX_LINE_BYTES - 1; // room for the trailing comma
  let line = JSON.stringify(entry);
  if (byteLength(line) <= budget || entry.observed === undefined) return line;
  const spare = budget - byteLength(JSON.stringify({ ...entry, observed: '' }));
  // JSON escaping can grow a string, so shrink until the encoded line fits.
  for (let keep = spare; keep > 0; keep -= 8) {
    line = JSON.stringify({ ...entry, observed: truncateBytes(entry.observed, keep) });
    if (byteLength(line) <= budget) return line;
  }
  const { observed: _dropped, ...rest } = entry;
  return JSON.stringify(rest);
}

function ruleEntries(report: Report): RuleEntry[] {
  const nonPassing = nonPassingInOrder(report.findings).map((f) => ({
    rule: f.ruleId,
    status: f.status,
    severity: f.severity,
    category: f.category,
    observed: oneLine(f.observed),
  }));
  const rest = report.findings
    .filter((f) => f.status === 'pass' || f.status === 'not-applicable')
    .sort((a, b) => a.ruleId.localeCompare(b.ruleId))
    .map((f) => ({ rule: f.ruleId, status: f.status, severity: f.severity, category: f.category }));
  return [...nonPassing, ...rest];
}

export function totalBytes(annotations: AnnotationMap): number {
  let total = 0;
  for (const [key, value] of Object.entries(annotations)) total += byteLength(key) + byteLength(value);
  return total;
}

/**
 * The annotations we want on the Node. Nothing here changes while the findings don't: no
 * timestamps (freshness is a metric). Over the 8 KiB budget, detail goes first: passing rules
 * leave the JSON, then the least severe lines leave both values ("omitted" / "+N more").
 */
export function renderAnnotations(report: Report): AnnotationMap {
  const entries = ruleEntries(report);
  const lines = nonPassingInOrder(report.findings).map(renderFindingLine);
  const nonPassingCount = lines.length;
  let keepEntries = entries.length;
  let keepLines = lines.length;
  for (;;) {
    const rendered = build(report, entries.slice(0, keepEntries), entries.length - keepEntries, lines, keepLines);
    if (totalBytes(rendered) <= MAX_TOTAL_BYTES) return rendered;
    if (keepEntries > nonPassingCount) keepEntries = nonPassingCount;
    else if (keepLines > 0 && keepLines >= keepEntries) keepLines -= 1;
    else if (keepEntries > 0) keepEntries -= 1;
    else return rendered; // cannot happen: an empty report is a few hundred bytes
  }
}

function build(report: Report, entries: RuleEntry[], omitted: number, lines: string[], keepLines: number): AnnotationMap {
  const annotations: AnnotationMap = {
    [SUMMARY_KEY]: renderSummary(report),
    [REPORT_KEY]: renderReportJson(report, entries, omitted),
    [FACTS_KEY]: renderFactsAnnotation(report.facts ?? {}),
  };
  if (lines.length > 0) {
    const shown = lines.slice(0, keepLines);
    if (keepLines < lines.length) shown.push(`+${lines.length - keepLines} more: see ${REPORT_KEY}`);
    annotations[FINDINGS_KEY] = shown.join('\n');
  }
  return annotations;
}

/**
 * The merge patch that turns `current` (the Node's annotations as watched) into `desired` for our
 * prefix only; stale keys of ours get null. Undefined when the Node already matches.
 */
export function diffAnnotations(desired: AnnotationMap, current: Record<string, string> | undefined): AnnotationPatch | undefined {
  const patch: AnnotationPatch = {};
  const have = current ?? {};
  for (const [key, value] of Object.entries(desired)) if (have[key] !== value) patch[key] = value;
  for (const key of Object.keys(have)) {
    if (key.startsWith(ANNOTATION_PREFIX) && !(key in desired)) patch[key] = null;
  }
  return Object.keys(patch).length > 0 ? patch : undefined;
}

/** Rules the Node's report annotation says are failing, keyed by rule id; empty when absent or unreadable. */
export function failingRulesOnNode(current: Record<string, string> | undefined): Map<string, Severity> {
  const parsed = parseAnnotations(current);
  const failing = new Map<string, Severity>();
  // Unreadable (someone edited it by hand): no previous state; the next patch repairs it.
  if (parsed.state !== 'ok') return failing;
  for (const entry of parsed.report.rules) if (entry.status === 'fail') failing.set(entry.rule, entry.severity);
  return failing;
}

/** The `report` annotation read back: what renderReportJson wrote. */
export interface AnnotatedReport {
  schemaVersion: number;
  score: number;
  grade: Report['grade'];
  counts: Record<FindingStatus, number>;
  omitted: number;
  rules: RuleEntry[];
}

export type ParsedAnnotations =
  | { state: 'none' }
  | { state: 'unreadable'; reason: string }
  | { state: 'ok'; report: AnnotatedReport; summary?: string };

const STATUSES: readonly FindingStatus[] = ['pass', 'fail', 'unknown', 'not-applicable'];
const GRADES: readonly string[] = ['A', 'B', 'C', 'D', 'F'];

function isRuleEntry(entry: unknown): entry is RuleEntry {
  const e = entry as Partial<RuleEntry> | null;
  return typeof e?.rule === 'string' && STATUSES.includes(e.status as FindingStatus)
    && SEVERITIES.includes(e.severity as Severity) && typeof e.category === 'string'
    && (e.observed === undefined || typeof e.observed === 'string');
}

function countsOf(value: unknown): Record<FindingStatus, number> | undefined {
  const counts = value as Record<string, unknown> | null;
  if (typeof counts !== 'object' || counts === null) return undefined;
  return STATUSES.every((s) => Number.isInteger(counts[s]) && (counts[s] as number) >= 0) ? counts as Record<FindingStatus, number> : undefined;
}

/** Reads the advisor's annotations on a Node: none, unreadable (with the reason), or the report. */
export function parseAnnotations(annotations: Record<string, string> | undefined): ParsedAnnotations {
  const raw = annotations?.[REPORT_KEY];
  if (raw === undefined) return { state: 'none' };
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(raw) as Record<string, unknown>;
  } catch (error) {
    return { state: 'unreadable', reason: `${REPORT_KEY} is not JSON (${(error as Error).message})` };
  }
  if (typeof parsed !== 'object' || parsed === null) return { state: 'unreadable', reason: `${REPORT_KEY} is not a JSON object` };
  if (parsed.schemaVersion !== ANNOTATION_SCHEMA_VERSION) {
    return { state: 'unreadable', reason: `${REPORT_KEY} has schemaVersion ${JSON.stringify(parsed.schemaVersion)}; this version reads ${ANNOTATION_SCHEMA_VERSION}` };
  }
  const { score, grade, omitted, rules } = parsed;
  const counts = countsOf(parsed.counts);
  if (typeof score !== 'number' || score < 0 || score > 100 || !GRADES.includes(grade as string) || counts === undefined
    || !Number.isInteger(omitted) || !Array.isArray(rules) || !rules.every(isRuleEntry)) {
    return { state: 'unreadable', reason: `${REPORT_KEY} does not have the advisor's shape (score, grade, counts, omitted, rules)` };
  }
  const report = { schemaVersion: ANNOTATION_SCHEMA_VERSION, score, grade: grade as Report['grade'], counts, omitted: omitted as number, rules };
  const summary = annotations?.[SUMMARY_KEY];
  return summary === undefined ? { state: 'ok', report } : { state: 'ok', report, summary };
}
