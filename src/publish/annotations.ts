// Report → the annotations we own on the Node, and the merge patch that brings the Node there.
// Pure: no I/O. Limits come from `kubectl describe node`, which prints `key: value` when
// key+value+2 ≤ 140 bytes and otherwise prints each `\n`-separated line cut to 138 bytes.
import type { Finding, Report, Severity } from '../report/types.ts';
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

interface RuleEntry {
  rule: string;
  status: Finding['status'];
  severity: Severity;
  category: string;
  observed?: string;
}

/** One JSON object per line, each line ≤ 138 bytes; JSON allows the newlines between tokens. */
function renderReportJson(report: Report, entries: RuleEntry[], omitted: number): string {
  const head = { schemaVersion: 1, score: report.score, grade: report.grade, counts: report.counts, omitted };
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
  const failing = new Map<string, Severity>();
  const raw = current?.[REPORT_KEY];
  if (raw === undefined) return failing;
  try {
    const parsed = JSON.parse(raw) as { rules?: unknown };
    if (!Array.isArray(parsed.rules)) return failing;
    for (const entry of parsed.rules as Partial<RuleEntry>[]) {
      if (entry?.status === 'fail' && typeof entry.rule === 'string' && entry.severity !== undefined) {
        failing.set(entry.rule, entry.severity);
      }
    }
  } catch {
    // Someone edited it by hand: treat as no previous state; the next patch repairs it.
  }
  return failing;
}
