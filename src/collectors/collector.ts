// collectors/: know no rule; read the host through host/, write facts/ (the runner is run.ts).
import type { FactSet } from '../facts/fact-set.ts';
import type { HostRoot } from '../host/host-root.ts';
import type { WorkloadSnapshot } from '../workload/snapshot.ts';

export interface CollectorContext {
  host: HostRoot;
  /** Facts so far: earlier collectors' results are readable, this collector writes its own. */
  facts: FactSet;
  sleep(ms: number): Promise<void>;
  /** Monotonic milliseconds. */
  now(): number;
  /** Whether the host's /proc is a live procfs (counters move), not a snapshot's copy. */
  liveProc(): Promise<boolean>;
  /** What the agent's watches saw (pods, this Node, CSIDriver, CSINode); absent in `scan` (no cluster). */
  cluster?: WorkloadSnapshot;
}

/** One module per fact family; each reads the host only through ctx.host. */
export interface Collector {
  name: string;
  /** The fact keys this collector decides; on a crash they all become unknown. */
  provides: string[];
  /** Facts of other collectors it reads: the runner runs it after those (test/unit/collector-order.test.ts checks the list). */
  reads?: readonly string[];
  collect(ctx: CollectorContext): Promise<void>;
}
