// rules/: knows fact keys, never a collector (same rank as collectors/, so neither imports the other).
// Evaluates rule conditions over facts with three-valued logic: a missing or unknown fact makes its
// leaf unknown, and unknown propagates unless another part already decides (false in `all`, true in `any`).
import type { FactSet, FactValue } from '../facts/fact-set.ts';
import { isLeaf, type Condition, type LeafCondition, type Scalar } from './schema.ts';

export type Truth = true | false | 'unknown';
export type Params = Record<string, Scalar | Scalar[]>;

export interface Outcome {
  truth: Truth;
  /** The engine's words: for unknown, why; for a decided leaf, "fact = value" (`--verbose`, JSON). */
  reasons: string[];
  /** The same for people: each fact by its label ("the kernel's timer tick: cannot be judged, nothing on this host gives it"). */
  said: string[];
}

/** fact key → a few words for people (a rule file's `facts:` map); a fact without one is shown by its key. */
export type FactLabels = Readonly<Record<string, string>>;

export function factsIn(condition: Condition | undefined): string[] {
  if (!condition) return [];
  if (isLeaf(condition)) return [condition.fact];
  if ('not' in condition) return factsIn(condition.not);
  return ('all' in condition ? condition.all : condition.any).flatMap(factsIn);
}

export function evaluate(condition: Condition, facts: FactSet, params: Params, labels: FactLabels = {}): Outcome {
  if (isLeaf(condition)) return evaluateLeaf(condition, facts, params, labels);
  if ('not' in condition) {
    const inner = evaluate(condition.not, facts, params, labels);
    return { ...inner, truth: inner.truth === 'unknown' ? 'unknown' : !inner.truth };
  }
  const isAll = 'all' in condition;
  const outcomes = (isAll ? condition.all : condition.any).map((part) => evaluate(part, facts, params, labels));
  const deciding = isAll ? false : true;
  const decided = outcomes.filter((outcome) => outcome.truth === deciding);
  if (decided.length > 0) return { truth: deciding, ...reasonsOf(decided) };
  const unknown = outcomes.filter((outcome) => outcome.truth === 'unknown');
  if (unknown.length > 0) return { truth: 'unknown', ...reasonsOf(unknown) };
  return { truth: !deciding, ...reasonsOf(outcomes) };
}

/** Each reason once: two leaves on the same unknown fact give one reason, not the same sentence twice. */
function reasonsOf(outcomes: Outcome[]): Pick<Outcome, 'reasons' | 'said'> {
  return {
    reasons: [...new Set(outcomes.flatMap((outcome) => outcome.reasons))],
    said: [...new Set(outcomes.flatMap((outcome) => outcome.said))],
  };
}

/** "A: why", "B: why" → "A and B: why": facts unknown for one cause are said once, with every label
 * (for the whole rule's sentence, after every leaf has said its own). */
export function sharingReasons(said: string[]): string[] {
  const byReason = new Map<string, string[]>();
  for (const entry of said) {
    const at = entry.indexOf(': ');
    const [label, reason] = at < 0 ? [entry, ''] : [entry.slice(0, at), entry.slice(at)];
    byReason.set(reason, [...(byReason.get(reason) ?? []), label]);
  }
  return [...byReason].map(([reason, labels]) => `${labels.length > 1 ? `${labels.slice(0, -1).join(', ')} and ${labels.at(-1)}` : labels[0]}${reason}`);
}

export function renderValue(value: FactValue | Scalar[] | undefined): string {
  if (value === undefined) return '?';
  if (value === null) return 'none';
  if (Array.isArray(value)) return value.length === 0 ? 'none' : value.map((item) => (typeof item === 'object' ? JSON.stringify(item) : String(item))).join(', ');
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

function evaluateLeaf(leaf: LeafCondition, facts: FactSet, params: Params, labels: FactLabels): Outcome {
  const label = Object.hasOwn(labels, leaf.fact) ? labels[leaf.fact] as string : leaf.fact;
  const fact = facts.get(leaf.fact);
  if (!fact) return { truth: 'unknown', reasons: [`${leaf.fact} was not collected`], said: [`${label}: not collected on this host`] };
  if (fact.unknown !== undefined) return { truth: 'unknown', reasons: [`${leaf.fact} is unknown: ${fact.unknown}`], said: [`${label}: ${fact.unknown}`] };
  const operand = leaf.param !== undefined ? params[leaf.param] : (leaf.values ?? leaf.value);
  const truth = compare(leaf.op, fact.value, operand);
  const shown = `${leaf.fact} = ${renderValue(fact.value)}`;
  if (truth === 'unknown') {
    return { truth, reasons: [`${shown} cannot be compared with ${leaf.op} ${renderValue(operand)}`], said: [`${label}: ${uncomparable(leaf.op, fact.value, fact.detail)}`] };
  }
  return { truth, reasons: [shown], said: [`${label}: ${spoken(fact.value)}`] };
}

/**
 * Why a value cannot be compared, in words: "cannot be judged, no kube-scheduler log on this node",
 * "\"abc\" is not a number". Never "none found", which reads like a finding (nothing wrong found).
 */
function uncomparable(op: LeafCondition['op'], value: FactValue, detail: string | undefined): string {
  if (value === null) return `cannot be judged, ${detail ? oneLineDetail(detail) : 'nothing on this host gives it'}`;
  const shown = JSON.stringify(renderValue(value));
  if (op === 'IsTrue' || op === 'IsFalse') return `${shown} is neither yes nor no`;
  if (op.startsWith('Version')) return `${shown} is not a version`;
  return `${shown} is not a number`;
}

/** A fact's detail as the tail of a reason: one line, without its final full stop. */
function oneLineDetail(detail: string): string {
  return detail.replace(/\s+/g, ' ').trim().replace(/\.$/, '');
}

/** A decided value in words: yes/no for booleans, "none" for null. */
function spoken(value: FactValue): string {
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  return renderValue(value);
}

function same(a: unknown, b: unknown): boolean {
  return String(a) === String(b);
}

function compare(op: LeafCondition['op'], value: FactValue, operand: Scalar | Scalar[] | undefined): Truth {
  const list = Array.isArray(operand) ? operand : operand === undefined ? [] : [operand];
  switch (op) {
    case 'Exists':
      return value !== null;
    case 'DoesNotExist':
      return value === null;
    case 'IsTrue':
    case 'IsFalse':
      return typeof value === 'boolean' ? value === (op === 'IsTrue') : 'unknown';
    case 'In':
    case 'NotIn': {
      const items: unknown[] = value === null ? [] : Array.isArray(value) ? value : [value];
      const found = items.some((item) => list.some((candidate) => same(item, candidate)));
      return op === 'In' ? found : !found;
    }
    case 'Gt':
    case 'Ge':
    case 'Lt':
    case 'Le':
    case 'GtLt':
      return compareNumbers(op, value, list);
    default:
      return compareVersions(op, value, list[0]);
  }
}

function compareNumbers(op: string, value: FactValue, list: Scalar[]): Truth {
  const number = typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : NaN;
  const [a, b] = list.map(Number) as [number, number];
  if (!Number.isFinite(number) || !Number.isFinite(a)) return 'unknown';
  if (op === 'Gt') return number > a;
  if (op === 'Ge') return number >= a;
  if (op === 'Lt') return number < a;
  if (op === 'Le') return number <= a;
  return number > a && number < b;
}

/** "v1.27.3-eks.1" → [1, 27, 3]; undefined when it does not start with a dotted number. */
export function parseVersion(text: unknown): number[] | undefined {
  const match = /^v?(\d+(?:\.\d+)*)/.exec(String(text ?? '').trim());
  return match ? (match[1] as string).split('.').map(Number) : undefined;
}

export function versionCompare(a: number[], b: number[]): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const diff = (a[i] ?? 0) - (b[i] ?? 0);
    if (diff !== 0) return Math.sign(diff);
  }
  return 0;
}

function compareVersions(op: string, value: FactValue, operand: Scalar | undefined): Truth {
  const left = parseVersion(value);
  const right = parseVersion(operand);
  if (!left || !right) return 'unknown';
  const order = versionCompare(left, right);
  if (op === 'VersionGt') return order > 0;
  if (op === 'VersionGe') return order >= 0;
  if (op === 'VersionLt') return order < 0;
  return order <= 0;
}
