// Namespaces of earlier runs, found by their label. A run that ended without cleaning up (killed,
// lost its connection) leaves one behind: past its expiry it is a leftover, offered for deletion.
// One before its expiry may be a run in progress (someone else's): never deleted unasked, and on the
// same node it would skew both measurements, so the new run refuses to start.
import type { KubeClient } from '../kube/client.ts';
import { KubeError } from '../kube/errors.ts';
import { NAMESPACES } from '../kube/resources.ts';
import { EXPIRES_ANNOTATION, MEASURE_SELECTOR, NAMESPACE_PREFIX, NODE_ANNOTATION, STARTED_ANNOTATION, STARTED_BY_ANNOTATION } from './objects.ts';
import { explainApiFailure } from './preflight.ts';
import type { Obj } from '../kube/objects.ts';

export interface EarlierRun {
  namespace: string;
  node: string;
  startedAt: number | undefined;
  expiresAt: number | undefined;
  startedBy: string;
  /** Deletion already requested (Terminating). */
  terminating: boolean;
}

export type EarlierState = 'terminating' | 'leftover' | 'running';

export function stateOf(run: EarlierRun, now: number): EarlierState {
  if (run.terminating) return 'terminating';
  // Without a readable expiry (edited by hand): a leftover, since no run of ours writes one like that.
  return run.expiresAt !== undefined && run.expiresAt > now ? 'running' : 'leftover';
}

function time(value: unknown): number | undefined {
  if (typeof value !== 'string') return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : ms;
}

export async function findEarlierRuns(client: KubeClient, signal?: AbortSignal): Promise<EarlierRun[]> {
  let items: Obj[];
  try {
    items = (await client.list(NAMESPACES, { labelSelector: MEASURE_SELECTOR, limit: 200, ...(signal ? { signal } : {}) })).items;
  } catch (err) {
    throw explainApiFailure(err);
  }
  // A label is all it takes to be listed: only names this command generates count as its runs, so
  // labelling another namespace cannot get it deleted.
  return items.slice(0, 200).filter((ns) => String(ns.metadata?.name).startsWith(NAMESPACE_PREFIX)).map((ns) => {
    const a: Record<string, unknown> = ns.metadata?.annotations ?? {};
    return {
      namespace: String(ns.metadata.name),
      node: typeof a[NODE_ANNOTATION] === 'string' ? (a[NODE_ANNOTATION] as string).slice(0, 253) : '?',
      startedAt: time(a[STARTED_ANNOTATION]),
      expiresAt: time(a[EXPIRES_ANNOTATION]),
      startedBy: typeof a[STARTED_BY_ANNOTATION] === 'string' ? (a[STARTED_BY_ANNOTATION] as string).slice(0, 253) : '?',
      terminating: typeof ns.metadata?.deletionTimestamp === 'string',
    };
  });
}

export function describeRun(run: EarlierRun, now: number): string {
  const age = run.startedAt === undefined ? 'at an unknown time' : `${formatAge(now - run.startedAt)} ago`;
  return `namespace ${run.namespace} (node ${run.node}, started ${age} by ${run.startedBy})`;
}

function formatAge(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 120) return `${s} s`;
  if (s < 7200) return `${Math.round(s / 60)} min`;
  return `${Math.round(s / 3600)} h`;
}

/** Background deletion; gone already counts as done. */
export async function deleteNamespace(client: KubeClient, name: string, timeoutMs = 15_000): Promise<void> {
  try {
    await client.delete(NAMESPACES, name, { propagationPolicy: 'Background', timeoutMs });
  } catch (err) {
    if (err instanceof KubeError && (err.notFound || err.conflict)) return;
    throw err;
  }
}
