// Small text helpers shared by the CLI renderers.
import type { Evidence, Finding, FindingStatus, Reference } from '../report/types.ts';

export const STATUS_LABEL: Record<FindingStatus, string> = { fail: 'FAIL', unknown: 'UNKNOWN', pass: 'PASS', 'not-applicable': 'N/A' };

export function shortValue(value: unknown, max = 60): string {
  let text: string;
  if (value === null || value === undefined) text = 'none';
  else if (Array.isArray(value)) text = value.length === 0 ? 'none' : value.map((item) => (typeof item === 'object' ? JSON.stringify(item) : String(item))).join(', ');
  else if (typeof value === 'object') text = JSON.stringify(value);
  else text = String(value);
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** "kernel.hz = 250 (/proc/config.gz)" or "kernel.hz unknown: <reason>". */
/** Where a field report's summary is: the originals are not shipped, docs/field-reports.md is. */
export const FIELD_REPORTS_DOC = 'docs/field-reports.md';

/** "field report 000 (docs/field-reports.md) — note", or "https://… — note". */
export function referenceText(reference: Reference): string {
  const seed = reference.seed === undefined ? undefined : /^(\d{3})_/.exec(reference.seed)?.[1];
  const where = reference.seed !== undefined ? `field report ${seed ?? reference.seed} (${FIELD_REPORTS_DOC})` : reference.url;
  return [where, reference.note].filter(Boolean).join(' — ');
}

export function describeEvidence(evidence: Evidence): string {
  if (evidence.unknown !== undefined) return `${evidence.fact} unknown: ${evidence.unknown}`;
  const detail = evidence.detail ? `; ${evidence.detail}` : '';
  return `${evidence.fact} = ${shortValue(evidence.value, 120)} (${evidence.source}${detail})`;
}

/** Long paths keep their start and their file name: "/var/log/pods/kube-sys…/0.log". */
export function shortenMiddle(text: string, max: number): string {
  if (text.length <= max) return text;
  const tail = Math.min(text.length - text.lastIndexOf('/'), Math.floor(max / 2));
  return `${text.slice(0, max - tail - 1)}…${text.slice(text.length - tail)}`;
}

/** The sources behind the facts a finding was decided on, for a one-line evidence column. */
export function evidenceSources(finding: Finding, max = 2, width = 48): string {
  const sources = [...new Set(finding.evidence.filter((item) => item.unknown === undefined).map((item) => item.source))];
  if (sources.length === 0) return finding.evidence.length > 0 ? 'unreadable' : '-';
  const shown = sources.slice(0, max).join(', ');
  const more = sources.length > max ? ` +${sources.length - max}` : '';
  return shortenMiddle(shown, width - more.length) + more;
}

/** The middle column: what was found against what is wanted, or why nothing was judged. */
export function findingSummary(finding: Finding): string {
  if (finding.status === 'fail' || finding.status === 'pass') return `${finding.observed} → ${finding.expected}`;
  return finding.message;
}

export function summaryLine(counts: Record<FindingStatus, number>): string {
  return `${counts.fail} fail · ${counts.unknown} unknown · ${counts.pass} pass · ${counts['not-applicable']} not applicable`;
}
