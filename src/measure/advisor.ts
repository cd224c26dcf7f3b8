// What the advisor said about the measured node when the measurement ran: its score from the report
// annotation, and the settings the field reports changed (the tokens of the summary annotation). Scheduler and
// controller-manager limits live on control-plane nodes: a worker's own agent has none, so they come
// from the control-plane nodes' annotations. Anything not published is `unknown` with the reason.
import { parseAnnotations } from '../wire/annotations.ts';
import { PUBLISHED_FACTS, parseSummaryFacts, type PublishedFact } from '../wire/summary-facts.ts';
import type { Obj } from '../kube/objects.ts';

export type FactValue = string | number | boolean | null | string[];

/** A fact as recorded with a measurement: its value and the node it came from, or why it is unknown. */
export type RecordedFact = { value: FactValue; from: string } | { unknown: string };

export interface AdvisorSnapshot {
  /** ok: the agent's report was read; none: no agent annotations; unreadable: with `problem`. */
  state: 'ok' | 'none' | 'unreadable';
  score: number | null;
  grade: string | null;
  problem?: string;
  facts: Record<PublishedFact, RecordedFact>;
}

const CONTROL_PLANE_FACTS: readonly PublishedFact[] = ['scheduler.kubeAPIQPS', 'scheduler.kubeAPIBurst', 'controllerManager.kubeAPIQPS', 'controllerManager.kubeAPIBurst'];

function nameOf(node: Obj): string {
  return String(node?.metadata?.name ?? '?').slice(0, 253);
}

/** One node's published facts: values, the agent's own unknowns, or why there are none. */
function factsOn(node: Obj): { facts: Partial<Record<PublishedFact, RecordedFact>>; missing: string } {
  const parsed = parseSummaryFacts(node?.metadata?.annotations);
  const name = nameOf(node);
  if (parsed.state === 'none') return { facts: {}, missing: `the agent on ${name} has not published its facts (no settings in its node-tuning-advisor.io/summary annotation: no agent, or one older than this command)` };
  if (parsed.state === 'unreadable') return { facts: {}, missing: `${name}: ${parsed.reason}` };
  const facts: Partial<Record<PublishedFact, RecordedFact>> = {};
  for (const key of PUBLISHED_FACTS) {
    const fact = parsed.facts[key];
    if (fact === undefined) continue;
    facts[key] = 'unknown' in fact ? { unknown: `the agent on ${name} could not tell (its report says why: node-tuning-advisor describe ${name})` } : { value: fact.value, from: name };
  }
  return { facts, missing: `the agent on ${name} does not publish it` };
}

/** The control-plane facts over several nodes: one value when they agree, else each node's. */
function fromControlPlane(key: PublishedFact, nodes: Obj[], why: string | undefined): RecordedFact {
  if (why !== undefined) return { unknown: why };
  const known: { value: FactValue; from: string }[] = [];
  const unknown: string[] = [];
  for (const node of nodes) {
    const fact = factsOn(node).facts[key];
    if (fact && 'value' in fact) known.push(fact);
    else unknown.push(fact && 'unknown' in fact ? fact.unknown : `${nameOf(node)}: not published`);
  }
  if (known.length === 0) return { unknown: nodes.length === 0 ? 'no control-plane node (label node-role.kubernetes.io/control-plane) to read it from' : unknown.join('; ').slice(0, 400) };
  const distinct = [...new Set(known.map((k) => JSON.stringify(k.value)))];
  if (distinct.length === 1) return { value: known[0]?.value as FactValue, from: known.map((k) => k.from).join(', ').slice(0, 300) };
  return { value: known.map((k) => `${String(k.value)} on ${k.from}`).join(', ').slice(0, 300), from: 'control-plane nodes' };
}

/**
 * `controlPlane`: the control-plane nodes (for scheduler and controller-manager limits), or why
 * they could not be listed.
 */
export function advisorSnapshot(node: Obj, controlPlane: Obj[] | { unknown: string }): AdvisorSnapshot {
  const report = parseAnnotations(node?.metadata?.annotations);
  const own = factsOn(node);
  const facts = {} as Record<PublishedFact, RecordedFact>;
  for (const key of PUBLISHED_FACTS) {
    const mine = own.facts[key];
    if (mine && 'value' in mine && mine.value !== null) facts[key] = mine;
    else if (CONTROL_PLANE_FACTS.includes(key)) facts[key] = fromControlPlane(key, Array.isArray(controlPlane) ? controlPlane : [], Array.isArray(controlPlane) ? undefined : controlPlane.unknown);
    else facts[key] = mine ?? { unknown: own.missing };
  }
  if (report.state === 'ok') return { state: 'ok', score: report.report.score, grade: report.report.grade, facts };
  if (report.state === 'unreadable') return { state: 'unreadable', score: null, grade: null, problem: report.reason, facts };
  return { state: 'none', score: null, grade: null, facts };
}
