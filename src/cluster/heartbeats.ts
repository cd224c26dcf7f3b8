// The agents' heartbeats (src/wire/heartbeat.ts) as `report` and `describe` read them: report with
// one paged LIST of the heartbeat Leases in the agent's namespace, before the Node list, kept as
// node name → when renewed and for how long (a few numbers each, at most MAX_HEARTBEATS Leases);
// describe with one GET of its node's Lease. A Lease counts only for the Node whose name it carries
// and only when held by that name; anything else a Lease says is checked before it is used.
import { LEASES } from '../kube/resources.ts';
import { HEARTBEAT_SELECTOR, livenessOf, readHeartbeat, unknownLiveness, type HeartbeatRead, type Liveness } from '../wire/heartbeat.ts';
import type { ClusterApi } from './api.ts';

/** Heartbeat Leases kept at most (one per node: far above any cluster's node count). */
export const MAX_HEARTBEATS = 100_000;

/** What the JSON says about the heartbeats read (in the report's summary). */
export interface HeartbeatSummary {
  namespace: string;
  /** Heartbeat Leases listed. */
  leases: number;
  /** Why they could not be listed: every node's liveness is then unknown. */
  problem?: string;
}

export class HeartbeatBook {
  private readonly byNode = new Map<string, HeartbeatRead>();
  private readonly nowMs: number;
  readonly summary: HeartbeatSummary;

  constructor(namespace: string, nowMs: number) {
    this.summary = { namespace, leases: 0 };
    this.nowMs = Number.isFinite(nowMs) ? nowMs : Date.now();
  }

  /** The heartbeat Leases of `namespace`, page by page. */
  static async read(api: ClusterApi, namespace: string, nowMs: number): Promise<HeartbeatBook> {
    const book = new HeartbeatBook(namespace, nowMs);
    const listed = await api.scan(LEASES, { namespace, labelSelector: HEARTBEAT_SELECTOR }, (items) => { for (const item of items) book.add(item); });
    if (!listed.ok) {
      const hint = listed.code === '403' ? ` (report needs list on leases in ${namespace}: manifests/readers)` : '';
      book.summary.problem = `heartbeats not read: ${listed.reason}${hint}`;
    }
    return book;
  }

  add(lease: { metadata?: { name?: unknown } }): void {
    this.summary.leases += 1;
    const name = lease.metadata?.name;
    if (typeof name !== 'string' || this.byNode.size >= MAX_HEARTBEATS) return;
    this.byNode.set(name, readHeartbeat(lease, name));
  }

  /** Whether the annotations of `node` are vouched for by a fresh heartbeat. */
  livenessOf(node: string): Liveness {
    if (this.summary.problem !== undefined) return unknownLiveness(this.summary.problem);
    if (this.summary.leases > MAX_HEARTBEATS && !this.byNode.has(node)) {
      return unknownLiveness(`more than ${MAX_HEARTBEATS} heartbeat Leases in ${this.summary.namespace}: not all were kept`);
    }
    return livenessOf(this.byNode.get(node), this.nowMs, this.summary.namespace);
  }
}

/** One node's heartbeat (`describe`): a GET of its Lease. */
export async function readNodeLiveness(api: ClusterApi, namespace: string, node: string, nowMs: number): Promise<Liveness> {
  const got = await api.get(LEASES, namespace, node);
  if (got.ok) return livenessOf(readHeartbeat(got.value, node), nowMs, namespace);
  if (got.code === '404') return livenessOf(undefined, nowMs, namespace);
  const hint = got.code === '403' ? ` (describe needs get on leases in ${namespace}: manifests/readers)` : '';
  return unknownLiveness(`heartbeat not read: ${got.reason}${hint}`);
}
