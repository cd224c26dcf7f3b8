// `describe NODE`: one node as its agent published it — the annotations (score, findings, the
// machine-readable report), whether its heartbeat still vouches for them, and the Events the agent
// wrote about the Node — in three read requests: GET the Node, GET its heartbeat Lease (only when
// it carries annotations), LIST the agent's Events on it in the namespace the agent writes them to.
import { FINDINGS_KEY, parseAnnotations, type AnnotatedReport } from '../wire/annotations.ts';
import { EVENT_NAMESPACE, REPORTING_COMPONENT } from '../wire/events.ts';
import { oneLine } from '../text/controls.ts';
import { eachLine } from '../text/lines.ts';
import { InputError } from '../input-error.ts';
import type { ClusterApi } from './api.ts';
import { rolesOf } from './nodes.ts';
import { byCodePoint } from '../order.ts';
import type { Obj } from '../kube/objects.ts';
import { DEFAULT_AGENT_NAMESPACE, type Liveness } from '../wire/heartbeat.ts';
import { readNodeLiveness } from './heartbeats.ts';

/** 2: `heartbeat` for a node with annotations. */
export const NODE_ADVICE_SCHEMA_VERSION = 2;
/** The newest Events shown; the JSON has them all. */
const MAX_EVENTS = 20;
/** The agent writes at most 8 KiB of lines of at most 138 bytes; a Node's annotation can hold far more. */
const MAX_FINDING_LINES = 200;
const MAX_FINDING_LINE_CHARS = 1024;

export interface AdvisorEvent {
  type: string;
  reason: string;
  message: string;
  count: number;
  /** When it last happened (ISO), or null when the Event does not say. */
  lastSeen: string | null;
}

export interface NodeAdvice {
  schemaVersion: number;
  kind: 'NodeAdvice';
  node: string;
  roles: string[];
  agent: 'ok' | 'none' | 'unreadable';
  /** Why the annotations could not be read, for agent: unreadable. */
  problem?: string;
  summary?: string;
  report?: AnnotatedReport;
  /** For a node with annotations: whether its agent's heartbeat still vouches for them. */
  heartbeat?: Liveness;
  /** The findings annotation, one line per failing or unknown rule. */
  findings: string[];
  events: AdvisorEvent[];
  /** Why the Events could not be listed (the node's findings are still shown). */
  eventsProblem?: string;
}

/** A Node name as the API allows it (a DNS subdomain): nothing else may reach a field selector. */
export function checkNodeName(name: string): void {
  if (!/^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/.test(name)) {
    throw new InputError(`"${oneLine(name).slice(0, 80)}" is not a node name (lower-case letters, digits, "-" and "."); see: kubectl get nodes`);
  }
}

function eventOf(item: Obj): AdvisorEvent {
  const last = item.lastTimestamp ?? item.series?.lastObservedTime ?? item.eventTime ?? item.metadata?.creationTimestamp;
  const when = last ? new Date(last) : undefined;
  return {
    type: oneLine(String(item.type ?? '')),
    reason: oneLine(String(item.reason ?? '')),
    message: oneLine(String(item.message ?? '')),
    count: Number.isInteger(item.count) ? item.count : (Number.isInteger(item.series?.count) ? item.series.count : 1),
    lastSeen: when && !Number.isNaN(when.getTime()) ? when.toISOString() : null,
  };
}

/** The findings annotation's lines, bounded before any is copied (another writer than the agent may have set it). */
function findingLines(text: string): string[] {
  const lines: string[] = [];
  eachLine(text, { maxLines: MAX_FINDING_LINES, maxLineChars: MAX_FINDING_LINE_CHARS }, (line) => {
    const shown = oneLine(line);
    if (shown) lines.push(shown);
  });
  return lines;
}

export async function readNodeAdvice(api: ClusterApi, name: string, agentNamespace = DEFAULT_AGENT_NAMESPACE, nowMs = Date.now()): Promise<NodeAdvice> {
  checkNodeName(name);
  const got = await api.getNode(name);
  if (!got.ok) {
    if (got.code === '404') throw new InputError(`no node "${name}"; see: kubectl get nodes`);
    const hint = got.code === '403' ? '; describe needs get on nodes and list on events in "default" (see README, "kubectl plugin")' : '';
    throw new InputError(`cannot read node ${name}: ${got.reason}${hint}`);
  }
  const node = got.value;
  const annotations = node.metadata?.annotations as Record<string, string> | undefined;
  const parsed = parseAnnotations(annotations);
  const heartbeat = parsed.state === 'none' ? undefined : await readNodeLiveness(api, agentNamespace, name, nowMs);
  const selector = `involvedObject.kind=Node,involvedObject.name=${name},source=${REPORTING_COMPONENT}`;
  const listed = await api.listEvents(EVENT_NAMESPACE, selector);
  const events = listed.ok
    ? listed.value.map(eventOf).sort((a, b) => byCodePoint(b.lastSeen ?? '', a.lastSeen ?? '')).slice(0, MAX_EVENTS)
    : [];
  return {
    schemaVersion: NODE_ADVICE_SCHEMA_VERSION,
    kind: 'NodeAdvice',
    node: name,
    roles: rolesOf(node),
    agent: parsed.state === 'ok' ? 'ok' : parsed.state,
    ...(parsed.state === 'unreadable' ? { problem: parsed.reason } : {}),
    ...(parsed.state === 'ok' && parsed.summary !== undefined ? { summary: oneLine(parsed.summary) } : {}),
    ...(parsed.state === 'ok' ? { report: parsed.report } : {}),
    ...(heartbeat ? { heartbeat } : {}),
    findings: findingLines(annotations?.[FINDINGS_KEY] ?? ''),
    events,
    ...(listed.ok ? {} : { eventsProblem: listed.reason }),
  };
}
