// The settings the field reports changed to fix pod start-up (tick rate, CPU governor, tuned profile,
// client QPS/burst of kubelet, scheduler and controller-manager), published on the Node beside the
// report so that `measure pod-startup` can record what a node ran with, before and after a fix.
// Pure: no I/O. One JSON object, one fact per line, each line within kubectl describe's 138 bytes.
// No timestamps: the value only changes when one of these facts does.
import type { Fact, FactValue } from '../facts/fact-set.ts';
import { byteLength, oneLine, truncateBytes } from './text-bytes.ts';

/** Under the advisor's annotation prefix (node-tuning-advisor.io/); spelled out to keep this module free of cycles. */
export const FACTS_KEY = 'node-tuning-advisor.io/facts';
export const FACTS_SCHEMA_VERSION = 1;
const LINE_BYTES = 138;
const MAX_VALUE_CHARS = 200;

/** The seeds' knobs, in the order people read them. */
export const PUBLISHED_FACTS = [
  'kernel.hz', 'cpu.governor', 'cpu.epp', 'tuned.loadedProfiles',
  'kubelet.kubeAPIQPS', 'kubelet.kubeAPIBurst',
  'scheduler.kubeAPIQPS', 'scheduler.kubeAPIBurst',
  'controllerManager.kubeAPIQPS', 'controllerManager.kubeAPIBurst',
] as const;
export type PublishedFact = (typeof PUBLISHED_FACTS)[number];

/** A fact as published: its value (null = looked, there is none), or why the agent could not decide. */
export type PublishedValue = { value: string | number | boolean | null | string[] } | { unknown: string };

/** Plain values only: a number, a string, a boolean, null, or a list of strings (tuned's profiles). */
function plainValue(value: FactValue): string | number | boolean | null | string[] | undefined {
  if (value === null || typeof value === 'number' || typeof value === 'boolean') return value;
  if (typeof value === 'string') return value.slice(0, MAX_VALUE_CHARS);
  if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return (value as string[]).slice(0, 8).map((v) => v.slice(0, 64));
  return undefined;
}

/** `"key":<json>` cut to fit a line of `budget` bytes: strings shrink, a list loses entries. */
function factLine(key: string, fact: PublishedValue, budget: number): string {
  const encode = (f: PublishedValue): string => `${JSON.stringify(key)}:${JSON.stringify('unknown' in f ? { unknown: f.unknown } : f.value)}`;
  let line = encode(fact);
  if (byteLength(line) <= budget) return line;
  if ('unknown' in fact) {
    for (let keep = fact.unknown.length; keep > 8 && byteLength(line) > budget; keep -= 8) line = encode({ unknown: truncateBytes(fact.unknown, keep) });
  } else if (typeof fact.value === 'string') {
    for (let keep = byteLength(fact.value); keep > 8 && byteLength(line) > budget; keep -= 8) line = encode({ value: truncateBytes(fact.value, keep) });
  } else if (Array.isArray(fact.value)) {
    for (let n = fact.value.length - 1; n >= 0 && byteLength(line) > budget; n -= 1) line = encode({ value: [...fact.value.slice(0, n), '…'] });
  }
  return byteLength(line) <= budget ? line : encode({ unknown: 'too long to publish' });
}

/** The annotation's value from a report's facts; facts the scan did not produce are left out. */
export function renderFactsAnnotation(facts: Record<string, Fact>): string {
  const lines: string[] = [];
  for (const key of PUBLISHED_FACTS) {
    const fact = facts[key];
    if (fact === undefined) continue;
    const value = plainValue(fact.value);
    const published: PublishedValue = fact.unknown !== undefined ? { unknown: oneLine(fact.unknown) }
      : value === undefined ? { unknown: 'not a plain value' } : { value };
    lines.push(factLine(key, published, LINE_BYTES - 1));
  }
  const head = `{"schemaVersion":${FACTS_SCHEMA_VERSION}`;
  if (lines.length === 0) return `${head}}`;
  return [`${head},`, ...lines.map((line, i) => line + (i < lines.length - 1 ? ',' : '}'))].join('\n');
}

export type ParsedFacts =
  | { state: 'none' }
  | { state: 'unreadable'; reason: string }
  | { state: 'ok'; facts: Partial<Record<PublishedFact, PublishedValue>> };

const MAX_ANNOTATION_BYTES = 16 * 1024;

function readValue(raw: unknown): PublishedValue | undefined {
  if (raw === null || typeof raw === 'number' || typeof raw === 'boolean') return { value: raw };
  if (typeof raw === 'string') return { value: raw.slice(0, MAX_VALUE_CHARS) };
  if (Array.isArray(raw) && raw.length <= 16 && raw.every((v) => typeof v === 'string')) return { value: raw.map((v: string) => v.slice(0, 64)) };
  const unknown = (raw as { unknown?: unknown } | null)?.unknown;
  if (typeof unknown === 'string') return { unknown: unknown.slice(0, 400) };
  return undefined;
}

/** Reads the annotation back (anyone who may patch Nodes can write it: every field is checked). */
export function parseFactsAnnotation(annotations: Record<string, string> | undefined): ParsedFacts {
  const raw = annotations?.[FACTS_KEY];
  if (raw === undefined) return { state: 'none' };
  if (byteLength(raw) > MAX_ANNOTATION_BYTES) return { state: 'unreadable', reason: `${FACTS_KEY} is larger than ${MAX_ANNOTATION_BYTES} bytes` };
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return { state: 'unreadable', reason: `${FACTS_KEY} is not JSON` };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return { state: 'unreadable', reason: `${FACTS_KEY} is not a JSON object` };
  const object = parsed as Record<string, unknown>;
  if (object.schemaVersion !== FACTS_SCHEMA_VERSION) {
    return { state: 'unreadable', reason: `${FACTS_KEY} has schemaVersion ${JSON.stringify(object.schemaVersion)?.slice(0, 20)}; this version reads ${FACTS_SCHEMA_VERSION}` };
  }
  const facts: Partial<Record<PublishedFact, PublishedValue>> = {};
  for (const key of PUBLISHED_FACTS) {
    if (!(key in object)) continue;
    const value = readValue(object[key]);
    if (value === undefined) return { state: 'unreadable', reason: `${FACTS_KEY}: ${key} is neither a value nor {"unknown": reason}` };
    facts[key] = value;
  }
  return { state: 'ok', facts };
}
