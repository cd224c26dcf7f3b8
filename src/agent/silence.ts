// Per-node silencing, written by the operator on the Node, read by the agent from its watched Node:
//   kubectl annotate node NODE silence.node-tuning-advisor.io/rules=kernel-tick-rate,cpu-governor
// The rules named are not evaluated on that node (no finding, no Event, no metric series), as if an
// override disabled them there. The key is outside node-tuning-advisor.io/, so the admission policy
// forbids the agent to change it: only the operator can silence or un-silence.
import type { NodeObject } from '../kube/objects.ts';

export const SILENCE_ANNOTATION = 'silence.node-tuning-advisor.io/rules';
const MAX_IDS = 64;
const RULE_ID = /^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/;

export interface Silence {
  ids: string[];
  /** Entries that are not rule ids (kept out, named in the log). */
  ignored: string[];
}

/** The rule ids the Node's silence annotation names (comma or whitespace separated). */
export function silenceOf(node: NodeObject | undefined): Silence {
  const text = node?.metadata.annotations?.[SILENCE_ANNOTATION] ?? '';
  const entries = text.split(/[\s,]+/).filter((e) => e !== '');
  const ids = [...new Set(entries.filter((e) => RULE_ID.test(e)))].slice(0, MAX_IDS);
  const ignored = entries.filter((e) => !RULE_ID.test(e)).slice(0, 5);
  return { ids, ignored };
}

export function silenceChanged(before: Silence | undefined, now: Silence): boolean {
  return before === undefined ? now.ids.length + now.ignored.length > 0 : before.ids.join() !== now.ids.join() || before.ignored.join() !== now.ignored.join();
}

/** The log line for a silence ('' for none). */
export function describeSilence(now: Silence, known: (id: string) => boolean): string {
  if (now.ids.length === 0 && now.ignored.length === 0) return '';
  const unknown = now.ids.filter((id) => !known(id));
  const parts = [`${SILENCE_ANNOTATION}: ${now.ids.length > 0 ? `not evaluating ${now.ids.join(', ')} on this Node` : 'names no rule'}`];
  if (unknown.length > 0) parts.push(`no such rule: ${unknown.join(', ')} (see: node-tuning-advisor rules list)`);
  if (now.ignored.length > 0) parts.push(`ignored, not rule ids: ${now.ignored.map((e) => JSON.stringify(e.slice(0, 40))).join(', ')}`);
  return parts.join('; ');
}
