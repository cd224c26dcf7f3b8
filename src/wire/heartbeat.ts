// The agent's heartbeat, in the kubelet's convention: a coordination.k8s.io/v1 Lease named after its
// node (here in the agent's own namespace, not kube-node-lease), holderIdentity the node,
// renewTime when the agent last confirmed that the Node carries its current report, and
// leaseDurationSeconds how long that confirmation counts: STALE_PERIODS heartbeat periods. The
// agent renders it; `report`, `describe` and `cleanup` read it. Every field of a Lease read back is
// treated as hostile: bounded, checked, never trusted to name another node.
import { ANNOTATION_PREFIX } from './annotations.ts';

/** The label that marks a Lease as an agent's heartbeat (the admission policy requires it; cleanup selects on it). */
export const HEARTBEAT_LABEL = `${ANNOTATION_PREFIX}heartbeat`;
export const HEARTBEAT_LABEL_VALUE = 'agent';
export const HEARTBEAT_SELECTOR = `${HEARTBEAT_LABEL}=${HEARTBEAT_LABEL_VALUE}`;
/** Where the agent runs when nobody says otherwise (manifests/base/namespace.yaml). */
export const DEFAULT_AGENT_NAMESPACE = 'node-tuning-advisor';
/** 5 min: 12 writes per hour and node, node-problem-detector's rate. */
export const DEFAULT_HEARTBEAT_MS = 5 * 60_000;
/** A heartbeat older than this many periods is stale. */
export const STALE_PERIODS = 3;
/** leaseDurationSeconds a reader accepts and the policy admits: 3 s to 3 days. */
export const MIN_LEASE_SECONDS = 3;
export const MAX_LEASE_SECONDS = 3 * 86_400;
/** Longer is not a timestamp (MicroTime is 27 characters). */
const MAX_TIME_CHARS = 40;
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;

export interface HeartbeatSpec {
  holderIdentity: string;
  leaseDurationSeconds: number;
  renewTime: string;
}

export function leaseDurationSeconds(periodMs: number): number {
  return Math.min(MAX_LEASE_SECONDS, Math.max(MIN_LEASE_SECONDS, Math.ceil((STALE_PERIODS * periodMs) / 1000)));
}

/** Go's RFC3339Micro, the only form kube-apiserver accepts for a MicroTime: "2026-01-02T03:04:05.123000Z". */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

export function heartbeatSpec(node: string, periodMs: number, nowMs: number): HeartbeatSpec {
  return { holderIdentity: node, leaseDurationSeconds: leaseDurationSeconds(periodMs), renewTime: microTime(nowMs) };
}

/**
 * The Lease the agent creates. Owned by its Node (as the kubelet's node Lease is), so the garbage
 * collector removes it with the Node.
 */
export function heartbeatLease(node: string, namespace: string, spec: HeartbeatSpec, nodeUid: string | undefined): Record<string, unknown> {
  const owner = nodeUid ? { ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: node, uid: nodeUid }] } : {};
  return {
    apiVersion: 'coordination.k8s.io/v1', kind: 'Lease',
    metadata: { name: node, namespace, labels: { [HEARTBEAT_LABEL]: HEARTBEAT_LABEL_VALUE }, ...owner },
    spec,
  };
}

/** The merge patch that renews it (the label again, in case someone removed it). */
export function renewalPatch(spec: HeartbeatSpec): Record<string, unknown> {
  return { metadata: { labels: { [HEARTBEAT_LABEL]: HEARTBEAT_LABEL_VALUE } }, spec };
}

export interface Heartbeat {
  renewedAtMs: number;
  leaseDurationSeconds: number;
}

export type HeartbeatRead = { ok: true; heartbeat: Heartbeat } | { ok: false; problem: string };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A timestamp as the API writes one (RFC 3339), in ms; undefined for anything else. */
export function parseTime(value: unknown): number | undefined {
  if (typeof value !== 'string' || value.length > MAX_TIME_CHARS || !RFC3339.test(value)) return undefined;
  const ms = Date.parse(value);
  return Number.isFinite(ms) ? ms : undefined;
}

/** The heartbeat of `node` in a Lease as read from the API: only a Lease held by that node under its name counts. */
export function readHeartbeat(lease: unknown, node: string): HeartbeatRead {
  const meta = isObject(lease) && isObject(lease.metadata) ? lease.metadata : undefined;
  const spec = isObject(lease) && isObject(lease.spec) ? lease.spec : undefined;
  if (!meta || meta.name !== node) return { ok: false, problem: 'its heartbeat Lease is not named after the node' };
  if (!spec || spec.holderIdentity !== node) return { ok: false, problem: 'its heartbeat Lease is held by another identity' };
  const seconds = spec.leaseDurationSeconds;
  if (typeof seconds !== 'number' || !Number.isInteger(seconds) || seconds < MIN_LEASE_SECONDS || seconds > MAX_LEASE_SECONDS) {
    return { ok: false, problem: `its heartbeat Lease has no leaseDurationSeconds from ${MIN_LEASE_SECONDS} to ${MAX_LEASE_SECONDS}` };
  }
  const renewedAtMs = parseTime(spec.renewTime);
  if (renewedAtMs === undefined) return { ok: false, problem: 'its heartbeat Lease has no readable renewTime' };
  return { ok: true, heartbeat: { renewedAtMs, leaseDurationSeconds: seconds } };
}

/** Whether what a node's agent published is still vouched for. `unknown`: the heartbeats could not be read. */
export interface Liveness {
  state: 'current' | 'stale' | 'unknown';
  /** The last renewal (ISO), from a readable heartbeat. */
  renewedAt?: string;
  /** Seconds since then, by the reader's clock. */
  ageSeconds?: number;
  /** The heartbeat's leaseDurationSeconds: older than this, the node is stale. */
  staleAfterSeconds?: number;
  reason: string;
}

/** "42 s", "12 min", "5 h", "3 d". */
export function age(seconds: number): string {
  if (seconds < 120) return `${Math.round(seconds)} s`;
  if (seconds < 7200) return `${Math.round(seconds / 60)} min`;
  if (seconds < 172_800) return `${Math.round(seconds / 3600)} h`;
  return `${Math.round(seconds / 86_400)} d`;
}

/**
 * A node whose agent published annotations: current while its heartbeat is younger than its
 * leaseDurationSeconds; stale when it is older, missing or unreadable. A renewTime further in the
 * future than one lease duration is not believed (a clock or a writer that would keep it current forever).
 */
export function livenessOf(read: HeartbeatRead | undefined, nowMs: number, where: string): Liveness {
  if (read === undefined) return { state: 'stale', reason: `no heartbeat Lease in ${where}: its agent is gone, or has not confirmed its report yet` };
  if (!read.ok) return { state: 'stale', reason: read.problem };
  const { renewedAtMs, leaseDurationSeconds: limit } = read.heartbeat;
  const ageSeconds = Math.round((nowMs - renewedAtMs) / 1000);
  const known = { renewedAt: new Date(renewedAtMs).toISOString(), ageSeconds, staleAfterSeconds: limit };
  if (ageSeconds < -limit) return { state: 'stale', ...known, reason: `its heartbeat's renewTime is ${age(-ageSeconds)} in the future: not believed` };
  if (ageSeconds > limit) {
    return { state: 'stale', ...known, reason: `last heartbeat ${age(ageSeconds)} ago, stale after ${age(limit)}: its agent stopped or cannot reach the API server; the grade is the last it published` };
  }
  return { state: 'current', ...known, reason: `heartbeat ${age(Math.max(0, ageSeconds))} ago (stale after ${age(limit)})` };
}

export function unknownLiveness(reason: string): Liveness {
  return { state: 'unknown', reason };
}
