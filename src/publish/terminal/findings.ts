// Findings for the terminal, shared by `scan`, `explain` and `report`. A failing rule: status,
// severity, id and title, then what was found against what is wanted, why it matters (≤ 2 lines)
// and the short fix. Unknown rules that share a reason share one block. Passing and
// not-applicable rules are one count line per category. `verbose` adds the evidence, the full
// fix with its commands, and the references.
import type { Finding, FindingStatus } from '../../report/types.ts';
import { shortReason } from '../finding-line.ts';
import { describeEvidence, referenceText, STATUS_LABEL } from '../text.ts';
import { clip, commandLines, displayWidth, hang, row } from './layout.ts';
import { byCodePoint } from '../../order.ts';

export type Color = 'red' | 'yellow' | 'green' | 'dim' | 'bold';
export type Paint = (color: Color, text: string) => string;

export interface Layout {
  width: number;
  paint: Paint;
  verbose: boolean;
}

const CODES: Record<Color, string> = { red: '31', yellow: '33', green: '32', dim: '2', bold: '1' };

export function painter(color: boolean): Paint {
  return color ? (c, text) => `\u001b[${CODES[c]}m${text}\u001b[0m` : (_c, text) => text;
}

const STATUS_WIDTH = 7;
const SEVERITY_WIDTH = 8;
/** "  found  ": where the text of a labelled line starts. */
const LABEL_WIDTH = 9;
const BLANK = ' '.repeat(LABEL_WIDTH);

function statusColor(finding: Finding): Color {
  if (finding.status === 'fail') return finding.severity === 'info' ? 'yellow' : 'red';
  if (finding.status === 'unknown') return 'yellow';
  return finding.status === 'pass' ? 'green' : 'dim';
}

/** The rule id column: as wide as the longest id shown, at most a third of the line. */
export function idColumn(findings: readonly Finding[], width: number): number {
  return Math.min(Math.floor(width / 3), Math.max(4, ...findings.map((f) => displayWidth(f.ruleId))));
}

/** "FAIL     warning   kubelet-api-qps   Kubelet's API client limit …", the title wrapped under itself. */
export function ruleRow(finding: Finding, idWidth: number, layout: Layout): string[] {
  const label = STATUS_LABEL[finding.status];
  const lines = row([label, finding.severity, finding.ruleId, finding.title], [STATUS_WIDTH, SEVERITY_WIDTH, idWidth], layout.width);
  lines[0] = layout.paint(statusColor(finding), label) + (lines[0] as string).slice(label.length);
  return lines;
}

function labelled(label: string, text: string, width: number): string[] {
  return hang(`  ${label.padEnd(LABEL_WIDTH - 3)} `, text, width);
}

/** Why the engine could not decide (or the rule does not apply), without its preamble. */
export function reasonOf(finding: Finding): string {
  return shortReason(finding.message, Number.MAX_SAFE_INTEGER);
}

export function failBlock(finding: Finding, idWidth: number, layout: Layout): string[] {
  const { width } = layout;
  const want = finding.expected ? ` → want ${finding.expected}` : '';
  return [
    ...ruleRow(finding, idWidth, layout),
    ...labelled('found', `${finding.observed || '-'}${want}`, width),
    // A finding read back from a Node's annotations has no "why" and may have lost its fix to the 138 bytes.
    ...(!finding.message ? [] : layout.verbose ? labelled('why', finding.message, width) : whyLines(finding.message, width)),
    ...labelled('fix', finding.remediation.summary || `see: explain ${finding.ruleId}`, width),
    ...(layout.verbose ? details(finding, layout) : []),
  ];
}

/** Why it matters in at most two lines: the whole sentences that fit, else the first one cut. */
function whyLines(message: string, width: number): string[] {
  const sentences = message.split(/(?<=[.!?])\s+(?=[A-Z])/);
  let fitting: string[] = [];
  for (let n = 1; n <= sentences.length; n++) {
    const lines = labelled('why', sentences.slice(0, n).join(' '), width);
    if (lines.length > 2) break;
    fitting = lines;
  }
  // Whole sentences that fill both lines; one line of them and more to say: two lines of it, clipped.
  if (fitting.length === 2 || (fitting.length === 1 && sentences.length === 1)) return fitting;
  return clip(labelled('why', message, width), 2, width);
}

/** The full fix, its commands, every evidence fact with source and detail, the references. */
function details(finding: Finding, layout: Layout): string[] {
  const { width } = layout;
  const lines: string[] = [];
  if (finding.status === 'fail') {
    if (finding.remediation.text) lines.push(...hang(BLANK, finding.remediation.text, width));
    for (const command of finding.remediation.commands) {
      lines.push(...commandLines(command, width - LABEL_WIDTH).map((line) => BLANK + line));
    }
  }
  // The rule engine's own words, with the fact keys and operators (the default view names facts by their labels).
  if (finding.engineReason) lines.push(...hang(`  ${'engine'.padEnd(LABEL_WIDTH - 3)} `, finding.engineReason, width, LABEL_WIDTH + 2));
  finding.evidence.forEach((evidence, i) => {
    lines.push(...hang(i === 0 ? `  ${'facts'.padEnd(LABEL_WIDTH - 3)} ` : BLANK, describeEvidence(evidence), width, LABEL_WIDTH + 2));
  });
  const references = finding.references.map(referenceText);
  references.forEach((reference, i) => {
    lines.push(...hang(i === 0 ? `  ${'refs'.padEnd(LABEL_WIDTH - 3)} ` : BLANK, reference, width, LABEL_WIDTH + 2));
  });
  return lines;
}

export interface UnknownGroup {
  reason: string;
  findings: Finding[];
}

/** Unknown rules by the reason they could not be decided (five etcd rules behind one missing etcd: one block). */
export function unknownGroups(findings: readonly Finding[], verbose: boolean): UnknownGroup[] {
  const groups: UnknownGroup[] = [];
  for (const finding of findings.filter((f) => f.status === 'unknown')) {
    const reason = reasonOf(finding);
    const same = verbose ? undefined : groups.find((g) => g.reason === reason);
    if (same) same.findings.push(finding);
    else groups.push({ reason, findings: [finding] });
  }
  return groups;
}

/** A reason in two lines: shortened where it can spare words (the places it looked), clipped if still longer. */
function twoLineReason(reason: string, width: number): string[] {
  const room = 2 * (width - LABEL_WIDTH) - 8;
  return clip(labelled('reason', shortReason(reason, room), width), 2, width);
}

export function unknownBlock(group: UnknownGroup, idWidth: number, layout: Layout): string[] {
  return [
    ...group.findings.flatMap((finding) => ruleRow(finding, idWidth, layout)),
    ...(layout.verbose ? labelled('reason', group.reason, layout.width) : twoLineReason(group.reason, layout.width)),
    ...(layout.verbose ? group.findings.flatMap((finding) => details(finding, layout)) : []),
  ];
}

/** One rule that passes or does not apply, for `--all`: its row and what was found or why it does not apply. */
export function settledBlock(finding: Finding, idWidth: number, layout: Layout): string[] {
  const said = finding.status === 'pass'
    ? labelled('found', `${finding.observed}${finding.expected ? ` → want ${finding.expected}` : ''}`, layout.width)
    : twoLineReason(reasonOf(finding), layout.width);
  return [...ruleRow(finding, idWidth, layout), ...said, ...(layout.verbose ? details(finding, layout) : [])];
}

const COUNT_LABEL: Partial<Record<FindingStatus, string>> = { pass: 'pass', 'not-applicable': 'not applicable' };

/** "not applicable  etcd ×6 (etcd.present = false)": one line per category (categories with one reason share it). */
export function countLines(findings: readonly Finding[], width: number): string[] {
  const lines: string[] = [];
  for (const status of ['pass', 'not-applicable'] as const) {
    const byCategory = new Map<string, Finding[]>();
    for (const f of findings.filter((x) => x.status === status)) byCategory.set(f.category, [...(byCategory.get(f.category) ?? []), f]);
    const entries = new Map<string, string[]>();
    for (const [category, members] of [...byCategory].sort(([a], [b]) => byCodePoint(a, b))) {
      const reasons = status === 'pass' ? '' : [...new Set(members.flatMap((m) => reasonOf(m).split('; ')))].join('; ');
      entries.set(reasons, [...(entries.get(reasons) ?? []), `${category}${members.length > 1 ? ` ×${members.length}` : ''}`]);
    }
    [...entries].forEach(([reasons, categories], i) => {
      const label = i === 0 ? (COUNT_LABEL[status] as string) : '';
      lines.push(...hang(label.padEnd(16), `${categories.join(', ')}${reasons ? ` (${reasons})` : ''}`, width, 18));
    });
  }
  return lines;
}
