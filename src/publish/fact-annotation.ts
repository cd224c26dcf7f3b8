// The settings the field reports changed to fix pod start-up (tick rate, CPU governor, tuned profile,
// client QPS/burst of kubelet, scheduler and controller-manager), published on the Node beside the
// report so that `measure pod-startup` can record what a node ran with, before and after a fix.
// Pure: no I/O. One line that `kubectl describe node` keeps on the key's line (key + value ≤ 138
// bytes): `hz=250 gov=powersave tuned=throughput-performance kubelet=50/100 sched=50/100 cm=20/30`.
// `?` = the agent could not tell (its report says why), `-` = none; a setting the scan did not
// produce (no scheduler on a worker) is left out. No timestamps: it changes only when a setting does.
import type { Fact, FactValue } from '../facts/fact-set.ts';
import { byteLength, truncateBytes } from './text-bytes.ts';

/** Under the advisor's annotation prefix (node-tuning-advisor.io/); spelled out to keep this module free of cycles. */
export const FACTS_KEY = 'node-tuning-advisor.io/facts';
/** kubectl describe keeps `key: value` on one line while key + value + 2 ≤ 140 bytes. */
const VALUE_BYTES = 138 - FACTS_KEY.length;

/** The seeds' knobs, in the order people read them. */
export const PUBLISHED_FACTS = [
  'kernel.hz', 'cpu.governor', 'tuned.loadedProfiles',
  'kubelet.kubeAPIQPS', 'kubelet.kubeAPIBurst',
  'scheduler.kubeAPIQPS', 'scheduler.kubeAPIBurst',
  'controllerManager.kubeAPIQPS', 'controllerManager.kubeAPIBurst',
] as const;
export type PublishedFact = (typeof PUBLISHED_FACTS)[number];

/** A fact as published: its value (null = looked, there is none), or that the agent could not tell. */
export type PublishedValue = { value: string | number | null | string[] } | { unknown: string };

const UNKNOWN = 'the agent could not tell';
const SINGLE: [string, PublishedFact][] = [['hz', 'kernel.hz'], ['gov', 'cpu.governor'], ['tuned', 'tuned.loadedProfiles']];
const PAIRS: [string, PublishedFact, PublishedFact][] = [
  ['kubelet', 'kubelet.kubeAPIQPS', 'kubelet.kubeAPIBurst'],
  ['sched', 'scheduler.kubeAPIQPS', 'scheduler.kubeAPIBurst'],
  ['cm', 'controllerManager.kubeAPIQPS', 'controllerManager.kubeAPIBurst'],
];
/** What a token's value may hold: no spaces, no "=", nothing a terminal would act on. */
const SAFE = /[^A-Za-z0-9._:,+-]/g;

function token(fact: Fact | undefined, list = false): string | undefined {
  if (fact === undefined) return undefined;
  if (fact.unknown !== undefined) return '?';
  const value: FactValue = fact.value;
  if (value === null || (Array.isArray(value) && value.length === 0)) return '-';
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : '?';
  if (typeof value === 'string') return value.replace(SAFE, '_').slice(0, 64) || '-';
  if (list && Array.isArray(value) && value.every((v) => typeof v === 'string')) {
    const names = (value as string[]).map((v) => v.replace(SAFE, '_').replaceAll(',', '_').slice(0, 64)).filter(Boolean);
    return names.length > 0 ? names.join(',') : '-';
  }
  return '?';
}

/** The annotation's value from a report's facts, within one describe line (a long profile list is cut first). */
export function renderFactsAnnotation(facts: Record<string, Fact>): string {
  const parts: string[] = [];
  for (const [short, key] of SINGLE) {
    const t = token(facts[key], key === 'tuned.loadedProfiles');
    if (t !== undefined) parts.push(`${short}=${t}`);
  }
  for (const [short, qps, burst] of PAIRS) {
    if (facts[qps] === undefined && facts[burst] === undefined) continue;
    parts.push(`${short}=${token(facts[qps]) ?? '?'}/${token(facts[burst]) ?? '?'}`);
  }
  const line = parts.join(' ');
  if (byteLength(line) <= VALUE_BYTES) return line;
  const tuned = parts.findIndex((p) => p.startsWith('tuned='));
  const room = VALUE_BYTES - (byteLength(line) - byteLength(parts[tuned] ?? ''));
  if (tuned >= 0 && room > 8) parts[tuned] = truncateBytes(parts[tuned] as string, room);
  return truncateBytes(parts.join(' '), VALUE_BYTES);
}

export type ParsedFacts =
  | { state: 'none' }
  | { state: 'unreadable'; reason: string }
  | { state: 'ok'; facts: Partial<Record<PublishedFact, PublishedValue>> };

const TOKEN = /^([a-z]{2,8})=([A-Za-z0-9._:,+/?…-]{1,140})$/;

function single(raw: string, list: boolean): PublishedValue {
  if (raw === '?') return { unknown: UNKNOWN };
  if (raw === '-') return { value: list ? [] : null };
  if (list) return { value: raw.split(',').filter(Boolean).slice(0, 16) };
  return /^\d+(\.\d+)?$/.test(raw) ? { value: Number(raw) } : { value: raw };
}

/** Reads the annotation back (anyone who may patch Nodes can write it: every token is checked). */
export function parseFactsAnnotation(annotations: Record<string, string> | undefined): ParsedFacts {
  const raw = annotations?.[FACTS_KEY];
  if (raw === undefined) return { state: 'none' };
  if (byteLength(raw) > 1024) return { state: 'unreadable', reason: `${FACTS_KEY} is longer than the agent writes it` };
  const facts: Partial<Record<PublishedFact, PublishedValue>> = {};
  for (const part of raw.trim().split(/ +/).filter(Boolean)) {
    const match = TOKEN.exec(part);
    if (!match) return { state: 'unreadable', reason: `${FACTS_KEY} is not "name=value ..." as the agent writes it` };
    const [, name, value] = match as unknown as [string, string, string];
    const one = SINGLE.find(([short]) => short === name);
    const pair = PAIRS.find(([short]) => short === name);
    if (one) facts[one[1]] = single(value, one[1] === 'tuned.loadedProfiles');
    else if (pair) {
      const [qps, burst] = value.split('/');
      facts[pair[1]] = single(qps ?? '?', false);
      facts[pair[2]] = single(burst ?? '?', false);
    }
  }
  return { state: 'ok', facts };
}
