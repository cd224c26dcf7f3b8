// One finding on one line, for the places that have only one: annotation lines (kubectl describe
// cuts each after 138 bytes), Event messages, the terminal's one-line summaries.
//   "WARN kubelet-api-qps: kubeAPIQPS 5, kubeAPIBurst 10; want ≥ 50/100 — raise kubeAPIQPS/Burst to 170/220"
// When the line is too long, "; want …" goes first, then the observed value is cut; the fix never is.
import type { Finding, Severity } from '../report/types.ts';
import { oneLine } from '../text/controls.ts';
import { byteLength, truncateBytes } from '../text/bytes.ts';

/** kubectl describe cuts each line of a multi-line annotation value after 138 bytes. */
export const MAX_LINE_BYTES = 138;

export const SEVERITY_TAG: Record<Severity, string> = { critical: 'CRIT', warning: 'WARN', info: 'INFO' };
export const UNKNOWN_TAG = 'UNKN';

export interface LineParts {
  tag: string;
  ruleId: string;
  observed: string;
  expected: string;
  fix: string;
}

/** The line without "; want …": what every rule's short fix must fit into (rules lint checks it). */
export function shortestLine(parts: LineParts): string {
  const fix = parts.fix ? ` — ${parts.fix}` : '';
  return `${parts.tag} ${parts.ruleId}: ${parts.observed}${fix}`;
}

export function composeLine(parts: LineParts, maxBytes = MAX_LINE_BYTES): string {
  const clean = { ...parts, observed: oneLine(parts.observed), expected: oneLine(parts.expected), fix: oneLine(parts.fix) };
  const fix = clean.fix ? ` — ${clean.fix}` : '';
  const head = `${clean.tag} ${clean.ruleId}: `;
  const full = `${head}${clean.observed}${clean.expected ? `; want ${clean.expected}` : ''}${fix}`;
  if (byteLength(full) <= maxBytes) return full;
  const short = shortestLine(clean);
  if (byteLength(short) <= maxBytes) return short;
  const room = maxBytes - byteLength(head) - byteLength(fix);
  if (room >= 12) return `${head}${truncateBytes(clean.observed, room)}${fix}`;
  return truncateBytes(short, maxBytes);
}

// The rule engine's wording for a finding it could not decide, in front of the reasons.
const ENGINE_PREFIXES = [/^Cannot tell whether this applies: /, /^Cannot decide: /, /^Not applicable here: /, /^OK: /];

/** The text cut after each ", ", "; " or ": " outside parentheses (separators kept): where a summary may end. */
function clauses(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (char === '(') depth += 1;
    else if (char === ')') depth = Math.max(0, depth - 1);
    else if (depth === 0 && (char === ',' || char === ';' || char === ':') && text[i + 1] === ' ') {
      parts.push(text.slice(start, i + 2));
      start = i + 2;
    }
  }
  parts.push(text.slice(start));
  return parts;
}

/**
 * Why a rule is unknown or does not apply, in at most `maxBytes`: the engine's preamble dropped,
 * then parentheses (last first), then trailing clauses, so the line still ends
 * in a whole statement; only a single clause longer than the line is cut (with "…"). The whole
 * reason stays one flag away (`scan --verbose`, `explain`, JSON).
 */
export function shortReason(message: string, maxBytes: number): string {
  // Reasons may quote host values: bounded first, and nothing below backtracks over the text.
  let text = oneLine(message.length > MAX_REASON_CHARS ? message.slice(0, MAX_REASON_CHARS) : message);
  for (const prefix of ENGINE_PREFIXES) text = text.replace(prefix, '');
  text = text.replace(/^([\w.-]+) is unknown: /, '$1 unknown: ').replace(/\.$/, '');
  // Parentheses hold where it looked and what else it tried: the first thing a short line can spare.
  text = withoutParentheses(text, maxBytes);
  if (byteLength(text) <= maxBytes) return text;
  const head = /^[^:]{1,100}: /.exec(text)?.[0] ?? '';
  const parts = clauses(text.slice(head.length));
  let kept = head + (parts[0] as string).replace(/[,;:] $/, '');
  let joined = head + (parts[0] as string);
  for (let n = 1; n < parts.length; n++) {
    joined += parts[n] as string;
    const longer = joined.replace(/[,;:] $/, '');
    if (byteLength(longer) > maxBytes) break;
    // Never end on a fact's label whose reason (after its ": ") did not fit.
    if (!(parts[n] as string).endsWith(': ')) kept = longer;
  }
  return byteLength(kept) <= maxBytes ? kept : truncateBytes(kept, maxBytes);
}

/** Longer reasons are cut before they are shortened (the whole one is in `--verbose`, `explain`, JSON). */
export const MAX_REASON_CHARS = 2048;

/** Removes " (…)" groups without parentheses inside, the last first, until the text fits `maxBytes`. */
function withoutParentheses(text: string, maxBytes: number): string {
  let bytes = byteLength(text);
  while (bytes > maxBytes) {
    const group = lastGroup(text);
    if (!group) break;
    bytes -= byteLength(text.slice(group.start, group.end));
    text = text.slice(0, group.start) + text.slice(group.end);
  }
  return text;
}

/** The last " (…)" that holds no parenthesis: its [start, end), found in one backward pass. */
function lastGroup(text: string): { start: number; end: number } | undefined {
  let close = -1;
  for (let i = text.length - 1; i >= 1; i--) {
    const char = text[i];
    if (char === ')') close = i;
    else if (char === '(') {
      if (close > i && text[i - 1] === ' ') return { start: i - 1, end: close + 1 };
      close = -1;
    }
  }
  return undefined;
}

/** "CRIT etcd-fsync-latency: fsync p99 18 ms; want p99 < 10 ms — move etcd's data dir to SSD/NVMe", or "UNKN id: why". */
export function findingLine(finding: Finding, maxBytes = MAX_LINE_BYTES): string {
  if (finding.status === 'unknown') {
    const head = `${UNKNOWN_TAG} ${finding.ruleId}: `;
    return truncateBytes(head + shortReason(finding.message, Math.max(12, maxBytes - byteLength(head))), maxBytes);
  }
  return composeLine({
    tag: SEVERITY_TAG[finding.severity],
    ruleId: finding.ruleId,
    observed: finding.observed || finding.message,
    expected: finding.expected,
    fix: finding.remediation.summary,
  }, maxBytes);
}

/** A findings line read back: what `findingLine` wrote (fix and "want" only when the line kept them). */
export interface ParsedFindingLine {
  tag: string;
  ruleId: string;
  /** For an unknown rule: why. */
  observed: string;
  expected?: string;
  fix?: string;
}

export function parseFindingLine(line: string): ParsedFindingLine | undefined {
  const match = /^(CRIT|WARN|INFO|UNKN) ([a-z0-9][a-z0-9-]*): (.*)$/.exec(line);
  if (!match) return undefined;
  const [, tag, ruleId, rest] = match as unknown as [string, string, string, string];
  if (tag === UNKNOWN_TAG) return { tag, ruleId, observed: rest };
  const dash = rest.lastIndexOf(' — ');
  const head = dash >= 0 ? rest.slice(0, dash) : rest;
  const want = head.indexOf('; want ');
  return {
    tag, ruleId,
    observed: want >= 0 ? head.slice(0, want) : head,
    ...(want >= 0 ? { expected: head.slice(want + '; want '.length) } : {}),
    ...(dash >= 0 ? { fix: rest.slice(dash + ' — '.length) } : {}),
  };
}
