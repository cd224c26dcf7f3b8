// Who may hold the metrics port's connections. A fixed cap that refuses newcomers lets a few clients
// lock everyone out: 64 keep-alive connections from 4 addresses, each asking again before its idle
// timeout, and the kubelet's probes failed (liveness restarts) as did Prometheus. So a newcomer at
// capacity takes a slot from whoever holds the most: from the address with the most connections,
// its longest-idle one without a request in flight, else its longest-silent one. An address never
// holds more than its share, and the greediest address's newcomer is the one refused.
import type { Server } from 'node:http';
import type { Socket } from 'node:net';

export interface CapacityLimits {
  maxConnections: number;
  maxConnectionsPerAddress: number;
  /** No byte either way for this long (a client that stopped reading): the socket is closed. */
  idleSocketMs: number;
}

interface Held {
  socket: Socket;
  /** Kept: a closed socket has no remoteAddress any more. */
  address: string;
  /** Requests read and not yet answered in full. */
  inFlight: number;
  /** When a request last arrived or an answer last finished. */
  lastActive: number;
}

export class ConnectionCapacity {
  private readonly byAddress = new Map<string, Set<Held>>();
  private readonly bySocket = new WeakMap<Socket, Held>();
  private total = 0;
  private readonly limits: CapacityLimits;

  constructor(limits: CapacityLimits) {
    this.limits = limits;
  }

  /** Every connection of the server goes through admit. Node refuses beyond server.maxConnections before any handler sees the socket: it leaves room for the eviction. */
  guard(server: Server): void {
    server.maxConnections = 2 * this.limits.maxConnections;
    server.on('connection', (socket: Socket) => this.admit(socket));
  }

  /** Admits the connection (evicting another when full) or destroys it. */
  admit(socket: Socket): void {
    const address = socket.remoteAddress ?? '?';
    const own = this.byAddress.get(address)?.size ?? 0;
    if (own >= this.limits.maxConnectionsPerAddress) return void socket.destroy();
    if (this.total >= this.limits.maxConnections) {
      const victim = this.victimFor(own);
      if (!victim) return void socket.destroy();
      this.release(victim);
      victim.socket.destroy();
    }
    const held: Held = { socket, address, inFlight: 0, lastActive: Date.now() };
    this.hold(address, held);
    socket.setTimeout(this.limits.idleSocketMs, () => socket.destroy());
    socket.once('close', () => this.release(held));
  }

  /** A request arrived on the socket; `done` when its answer is finished or abandoned. */
  requestStarted(socket: Socket): () => void {
    const held = this.bySocket.get(socket);
    if (!held) return () => undefined;
    held.inFlight += 1;
    held.lastActive = Date.now();
    return () => {
      held.inFlight -= 1;
      held.lastActive = Date.now();
    };
  }

  /**
   * The connection to give up for a newcomer whose address holds `own`: one of the address holding
   * more than the newcomer's would; when none does, the longest-idle one anywhere; else none.
   */
  private victimFor(own: number): Held | undefined {
    let greediest: Set<Held> | undefined;
    for (const held of this.byAddress.values()) if (!greediest || held.size > greediest.size) greediest = held;
    if (greediest && greediest.size > own + 1) return first(greediest);
    const idle = [...this.byAddress.values()].flatMap((held) => [...held]).filter((held) => held.inFlight === 0);
    return first(idle);
  }

  private hold(address: string, held: Held): void {
    let set = this.byAddress.get(address);
    if (!set) this.byAddress.set(address, (set = new Set()));
    set.add(held);
    this.bySocket.set(held.socket, held);
    this.total += 1;
  }

  private release(held: Held): void {
    const set = this.byAddress.get(held.address);
    if (!set?.delete(held)) return;
    this.total -= 1;
    if (set.size === 0) this.byAddress.delete(held.address);
  }
}

function first(candidates: Iterable<Held>): Held | undefined {
  let victim: Held | undefined;
  for (const held of candidates) if (!victim || evictsBefore(held, victim)) victim = held;
  return victim;
}

/** Idle before busy; among them the one quiet the longest. */
function evictsBefore(a: Held, b: Held): boolean {
  if ((a.inFlight === 0) !== (b.inFlight === 0)) return a.inFlight === 0;
  return a.lastActive < b.lastActive;
}
