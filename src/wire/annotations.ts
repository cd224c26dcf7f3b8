// wire/: the format the agent writes and report/describe/measure read; imports only report/, facts/, text/ and order.ts.
// Report → the annotations we own on the Node, and the merge patch that brings the Node there.
// Pure: no I/O. Limits come from `kubectl describe node`, which prints `key: value` when
// key+value+2 ≤ 140 bytes and otherwise prints each `\n`-separated line cut to 138 bytes.
import { SEVERITIES, type Finding, type FindingStatus, type Report, type Severity } from '../report/types.ts';
import { renderFactTokens } from './summary-facts.ts';
import { findingLine, MAX_LINE_BYTES } from './finding-line.ts';
import { oneLine } from '../text/controls.ts';
import { byteLength, truncateBytes } from '../text/bytes.ts';
import { byCodePoint } from '../order.ts';

export const ANNOTATION_PREFIX = 'node-tuning-advisor.io/';
export const SUMMARY_KEY = `${ANNOTATION_PREFIX}summary`;
export const FINDINGS_KEY = `${ANNOTATION_PREFIX}findings`;
export const REPORT_KEY = `${ANNOTATION_PREFIX}report`;

/** kubectl describe cuts each line of a multi-line value after 138 bytes. */
export { MAX_LINE_BYTES };
/** Our share of the Node's 256 KiB annotation budget: all our keys plus values. */
export const MAX_TOTAL_BYTES = 8 * 1024;

export type AnnotationMap = Record<string, string>;
/** A JSON merge patch (RFC 7386) of metadata.annotations: null deletes a key. */
export type AnnotationPatch = Record<string, string | null>;

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
        byCodePoint(a.ruleId, b.ruleId),
    );
}

/**
 * Score, grade, what fails, then the settings that decide pod start-up, in ≤ 138 bytes: kubectl describe
 * keeps it on the key's line up to 108 bytes of value, else puts it whole on the next line.
 * `6/100 F: 4 failing, 7 unknown; hz=250 gov=powersave tuned=- kubelet=5/10 sched=50/100 cm=20/30`
 */
export function renderSummary(report: Report): string {
  const failing = report.findings.filter((f) => f.status === 'fail').length;
  const head = `${report.score}/100 ${report.grade}: ${failing} failing, ${report.counts.unknown} unknown`;
  const tokens = renderFactTokens(report.facts ?? {}, MAX_LINE_BYTES - byteLength(head) - 2);
  return tokens === '' ? head : `${head}; ${tokens}`;
}

/** One line per non-passing rule: "CRIT rule-id: observed; want expected — short fix". */
export function renderFindingLine(finding: Finding): string {
  return findingLine(finding, MAX_LINE_BYTES);
}

/**
 * One failing or unknown rule in the `report` annotation; the reader below (`parseAnnotations`)
 * checks the same shape. `category` only in version 1 (written by the previous release).
 */
export interface RuleEntry {
  rule: string;
  status: Finding['status'];
  severity: Severity;
  category?: string;
  observed?: string;
  /**
   * 'fail': the rule is undecided now (unknown, or not applicable for lack of data) and was failing
   * when last decided: its Warning Event stands, and the agent (restarted or not) sends no new one
   * when it fails again, and no TuningResolved until it passes.
   */
  lastDecided?: 'fail';
}

/**
 * Version of the `report` annotation's JSON; bump it when a reader could misread the new shape.
 * 2: only failing and unknown rules (passing ones are counts), no category, `rules` and `omitted`
 * left out when empty / 0, so a node where nothing fails has a one-line report.
 */
export const ANNOTATION_SCHEMA_VERSION = 2;
/** 1: agents of the previous release, still running during a rollout. */
const READABLE_VERSIONS: readonly number[] = [1, 2];

/** A rule's line in the JSON, with `tail` ("," or "]}") after it, within 138 bytes: observed is cut to fit. */
export function entryLine(entry: RuleEntry, tail: string): string {
  const budget = MAX_LINE_BYTES - byteLength(tail);
  let line = JSON.stringify(entry);
  if (byteLength(line) <= budget || entry.observed === undefined) return line + tail;
  const spare = budget - byteLength(JSON.stringify({ ...entry, observed: '' }));
  // JSON escaping can grow a string, so shrink until the encoded line fits.
  for (let keep = spare; keep > 0; keep -= 8) {
    line = JSON.stringify({ ...entry, observed: truncateBytes(entry.observed, keep) });
    if (byteLength(line) <= budget) return line + tail;
  }
  const { observed: _dropped, ...rest } = entry;
  return JSON.stringify(rest) + tail;
}

/** Head on the first line, one rule per line after it; a node with nothing to report gets one line. */
function renderReportJson(report: Report, entries: RuleEntry[], omitted: number): string {
  const head = {
    schemaVersion: ANNOTATION_SCHEMA_VERSION, score: report.score, grade: report.grade, counts: report.counts,
    ...(omitted > 0 ? { omitted } : {}),
  };
  const headJson = JSON.stringify(head);
  if (entries.length === 0) return headJson;
  const lines = entries.map((entry, i) => entryLine(entry, i < entries.length - 1 ? ',' : ']}'));
  return [`${headJson.slice(0, -1)},"rules":[`, ...lines].join('\n');
}

function entryFor(finding: Finding, held: ReadonlySet<string>): RuleEntry {
  const entry: RuleEntry = { rule: finding.ruleId, status: finding.status, severity: finding.severity };
  const observed = oneLine(finding.observed);
  if (finding.status === 'fail') return observed ? { ...entry, observed } : entry;
  return held.has(finding.ruleId) ? { ...entry, lastDecided: 'fail' } : entry;
}

export function totalBytes(annotations: AnnotationMap): number {
  let total = 0;
  for (const [key, value] of Object.entries(annotations)) total += byteLength(key) + byteLength(value);
  return total;
}

/**
 * The annotations we want on the Node. Nothing here changes while the findings don't: no
 * timestamps (freshness is a metric). Over the 8 KiB budget the least severe rules leave both
 * values ("omitted" in the JSON, "+N more" in the findings). `held`: rules undecided now whose
 * Warning stands (their entries say lastDecided "fail"; one not applicable for lack of data gets an
 * entry for that alone, after the others).
 */
export function renderAnnotations(report: Report, held: ReadonlySet<string> = new Set()): AnnotationMap {
  const nonPassing = nonPassingInOrder(report.findings);
  const heldOnly = report.findings.filter((f) => f.status === 'not-applicable' && held.has(f.ruleId)).sort((a, b) => byCodePoint(a.ruleId, b.ruleId));
  const entries = [...nonPassing, ...heldOnly].map((f) => entryFor(f, held));
  const lines = nonPassing.map(renderFindingLine);
  const summary = renderSummary(report);
  for (let keep = entries.length; ; keep -= 1) {
    const omitted = Math.max(0, nonPassing.length - keep);
    const rendered = build(report, summary, entries.slice(0, keep), lines.slice(0, keep), omitted);
    if (keep === 0 || totalBytes(rendered) <= MAX_TOTAL_BYTES) return rendered;
  }
}

function build(report: Report, summary: string, entries: RuleEntry[], lines: string[], omitted: number): AnnotationMap {
  const annotations: AnnotationMap = {
    [SUMMARY_KEY]: summary,
    [REPORT_KEY]: renderReportJson(report, entries, omitted),
  };
  const shown = omitted > 0 ? [...lines, `+${omitted} more not shown (8 KiB limit): run scan on the node`] : lines;
  if (shown.length > 0) annotations[FINDINGS_KEY] = shown.join('\n');
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

/**
 * Rules whose Warning stands according to the Node's report annotation (failing, or undecided since
 * and last decided failing), keyed by rule id: the agent's memory of what it has told, kept on the
 * Node so that a restarted agent neither repeats nor misses an Event. Empty when absent or unreadable.
 */
export function warnedRulesOnNode(current: Record<string, string> | undefined): Map<string, Severity> {
  const parsed = parseAnnotations(current);
  const warned = new Map<string, Severity>();
  // Unreadable (someone edited it by hand): no previous state; the next patch repairs it.
  if (parsed.state !== 'ok') return warned;
  for (const entry of parsed.report.rules) if (entry.status === 'fail' || entry.lastDecided === 'fail') warned.set(entry.rule, entry.severity);
  return warned;
}

/** The `report` annotation read back (either version), with the defaults of version 2 filled in. */
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
    && SEVERITIES.includes(e.severity as Severity) && (e.category === undefined || typeof e.category === 'string')
    && (e.observed === undefined || typeof e.observed === 'string') && (e.lastDecided === undefined || e.lastDecided === 'fail');
}

function countsOf(value: unknown): Record<FindingStatus, number> | undefined {
  const counts = value as Record<string, unknown> | null;
  if (typeof counts !== 'object' || counts === null) return undefined;
  return STATUSES.every((s) => Number.isInteger(counts[s]) && (counts[s] as number) >= 0) ? counts as Record<FindingStatus, number> : undefined;
}

/** Version 1 always wrote `omitted` and `rules`; version 2 leaves them out when 0 / empty. */
function shapeOf(parsed: Record<string, unknown>): AnnotatedReport | undefined {
  const version = parsed.schemaVersion as number;
  const { score, grade } = parsed;
  const omitted = parsed.omitted ?? (version === 1 ? undefined : 0);
  const rules = parsed.rules ?? (version === 1 ? undefined : []);
  const counts = countsOf(parsed.counts);
  if (typeof score !== 'number' || score < 0 || score > 100 || !GRADES.includes(grade as string) || counts === undefined
    || !Number.isInteger(omitted) || !Array.isArray(rules) || !rules.every(isRuleEntry)) return undefined;
  return { schemaVersion: version, score, grade: grade as Report['grade'], counts, omitted: omitted as number, rules };
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
  if (!READABLE_VERSIONS.includes(parsed.schemaVersion as number)) {
    return { state: 'unreadable', reason: `${REPORT_KEY} has schemaVersion ${JSON.stringify(parsed.schemaVersion)}; this version reads ${READABLE_VERSIONS.join(' and ')}` };
  }
  const report = shapeOf(parsed);
  if (report === undefined) {
    return { state: 'unreadable', reason: `${REPORT_KEY} does not have the advisor's shape (score, grade, counts, rules)` };
  }
  const summary = annotations?.[SUMMARY_KEY];
  return summary === undefined ? { state: 'ok', report } : { state: 'ok', report, summary };
}
