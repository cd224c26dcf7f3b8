// The settings the field reports changed to fix pod start-up (tick rate, CPU governor, tuned profile,
// client QPS/burst of kubelet, scheduler and controller-manager) and whether kube-apiserver keeps
// Events in their own etcd, as `name=value` tokens after the score in the `summary` annotation:
// `100/100 A: 0 failing, 0 unknown; hz=250 gov=powersave tuned=throughput-performance kubelet=50/100`.
// `measure pod-startup` records them with each run, `report` reads `events=` from control-plane nodes.
// Pure: no I/O. `?` = the agent could not tell (its report says why), `-` = none; a setting the scan
// did not produce (no scheduler on a worker) is left out. No timestamps: it changes only when a setting does.
import type { Fact, FactValue } from '../facts/fact-set.ts';
import { byteLength, truncateBytes } from '../text/bytes.ts';

/** Under the advisor's annotation prefix (node-tuning-advisor.io/); spelled out to keep this module free of cycles. */
const SUMMARY_KEY = 'node-tuning-advisor.io/summary';

/** The seeds' knobs that `measure pod-startup` records, in the order people read them. */
export const PUBLISHED_FACTS = [
  'kernel.hz', 'cpu.governor', 'tuned.loadedProfiles',
  'kubelet.kubeAPIQPS', 'kubelet.kubeAPIBurst',
  'scheduler.kubeAPIQPS', 'scheduler.kubeAPIBurst',
  'controllerManager.kubeAPIQPS', 'controllerManager.kubeAPIBurst',
] as const;
export type PublishedFact = (typeof PUBLISHED_FACTS)[number];
/** Every fact the tokens carry: the seeds' knobs and the Events split the cluster report needs. */
export type TokenFact = PublishedFact | 'etcd.eventsSplit';

/** A fact as published: its value (null = looked, there is none), or that the agent could not tell. */
export type PublishedValue = { value: string | number | boolean | null | string[] } | { unknown: string };

const UNKNOWN = 'the agent could not tell';
const SINGLE: [string, PublishedFact][] = [['hz', 'kernel.hz'], ['gov', 'cpu.governor'], ['tuned', 'tuned.loadedProfiles']];
const PAIRS: [string, PublishedFact, PublishedFact][] = [
  ['kubelet', 'kubelet.kubeAPIQPS', 'kubelet.kubeAPIBurst'],
  ['sched', 'scheduler.kubeAPIQPS', 'scheduler.kubeAPIBurst'],
  ['cm', 'controllerManager.kubeAPIQPS', 'controllerManager.kubeAPIBurst'],
];
const EVENTS = 'events';
/** When the line is too long, tokens leave in this order (the measured node's own knobs stay longest). */
const DROP_ORDER = ['cm', EVENTS, 'sched', 'tuned'];
/** A tuned profile list longer than this is cut: profile names are short, a long list is not the normal case. */
const MAX_TUNED_BYTES = 48;
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
    return names.length > 0 ? truncateBytes(names.join(','), MAX_TUNED_BYTES) : '-';
  }
  return '?';
}

/** `events=split|shared`, only where the agent could tell (a worker has no kube-apiserver to read). */
function eventsToken(fact: Fact | undefined): string | undefined {
  if (fact === undefined || fact.unknown !== undefined || typeof fact.value !== 'boolean') return undefined;
  return `${EVENTS}=${fact.value ? 'split' : 'shared'}`;
}

/** The tokens from a report's facts within `maxBytes`; whole tokens leave when they do not fit, never half of one. */
export function renderFactTokens(facts: Record<string, Fact>, maxBytes: number): string {
  const parts: string[] = [];
  for (const [short, key] of SINGLE) {
    const t = token(facts[key], key === 'tuned.loadedProfiles');
    if (t !== undefined) parts.push(`${short}=${t}`);
  }
  for (const [short, qps, burst] of PAIRS) {
    if (facts[qps] === undefined && facts[burst] === undefined) continue;
    parts.push(`${short}=${token(facts[qps]) ?? '?'}/${token(facts[burst]) ?? '?'}`);
  }
  const events = eventsToken(facts['etcd.eventsSplit']);
  if (events !== undefined) parts.push(events);
  for (const name of DROP_ORDER) {
    if (byteLength(parts.join(' ')) <= maxBytes) break;
    const at = parts.findIndex((p) => p.startsWith(`${name}=`));
    if (at >= 0) parts.splice(at, 1);
  }
  while (parts.length > 0 && byteLength(parts.join(' ')) > maxBytes) parts.pop();
  return parts.join(' ');
}

export type ParsedFacts =
  | { state: 'none' }
  | { state: 'unreadable'; reason: string }
  | { state: 'ok'; facts: Partial<Record<TokenFact, PublishedValue>> };

const TOKEN = /^([a-z]{2,8})=([A-Za-z0-9._:,+/?…-]{1,140})$/;

function single(raw: string, list: boolean): PublishedValue {
  if (raw === '?') return { unknown: UNKNOWN };
  if (raw === '-') return { value: list ? [] : null };
  if (list) return { value: raw.split(',').filter(Boolean).slice(0, 16) };
  return /^\d+(\.\d+)?$/.test(raw) ? { value: Number(raw) } : { value: raw };
}

function read(name: string, value: string, facts: Partial<Record<TokenFact, PublishedValue>>): void {
  const one = SINGLE.find(([short]) => short === name);
  const pair = PAIRS.find(([short]) => short === name);
  if (one) facts[one[1]] = single(value, one[1] === 'tuned.loadedProfiles');
  else if (pair) {
    const [qps, burst] = value.split('/');
    facts[pair[1]] = single(qps ?? '?', false);
    facts[pair[2]] = single(burst ?? '?', false);
  } else if (name === EVENTS && (value === 'split' || value === 'shared')) facts['etcd.eventsSplit'] = { value: value === 'split' };
}

/**
 * The tokens read back from the `summary` annotation (anyone who may patch Nodes can write it: every
 * token is checked). A summary without tokens (an agent older than this one) is `none`.
 */
export function parseSummaryFacts(annotations: Record<string, string> | undefined): ParsedFacts {
  const raw = annotations?.[SUMMARY_KEY];
  if (raw === undefined) return { state: 'none' };
  if (byteLength(raw) > 1024) return { state: 'unreadable', reason: `${SUMMARY_KEY} is longer than the agent writes it` };
  const at = raw.indexOf('; ');
  const tokens = at < 0 ? '' : raw.slice(at + 2).trim();
  if (!/^\S+=/.test(tokens)) return { state: 'none' };
  const facts: Partial<Record<TokenFact, PublishedValue>> = {};
  for (const part of tokens.split(/ +/)) {
    const match = TOKEN.exec(part);
    if (!match) return { state: 'unreadable', reason: `${SUMMARY_KEY} does not end in "name=value ..." as the agent writes it` };
    read(match[1] as string, match[2] as string, facts);
  }
  return { state: 'ok', facts };
}
