// Runs the collectors against one host root. A collector that throws does not stop the scan: the
// facts it provides become unknown with the error, so the rules that need them say "unknown".
import { setTimeout as delay } from 'node:timers/promises';
import { performance } from 'node:perf_hooks';
import type { Collector, CollectorContext } from './collector.ts';
import { COLLECTORS } from './index.ts';
import type { HostRoot } from '../host/host-root.ts';
import { FactSet } from '../facts/fact-set.ts';
import { isLiveProcfs } from '../host/procfs.ts';
import type { WorkloadSnapshot } from '../workload/snapshot.ts';

export interface CollectOptions {
  collectors?: readonly Collector[];
  sleep?: (ms: number) => Promise<void>;
  now?: () => number;
  /** The agent's watch caches at scan time, for the API-derived facts. */
  cluster?: WorkloadSnapshot;
  /** Overrides the procfs check (tests whose temp tree stands in for a live /proc). */
  liveProc?: boolean;
}

/**
 * The collectors in an order where each runs after the providers of the facts it `reads`; otherwise
 * in the order given. A read no collector of the list provides is left unknown to it. A circle of
 * reads is a bug in the collectors' declarations and throws.
 */
export function orderCollectors(collectors: readonly Collector[]): Collector[] {
  const providerOf = new Map(collectors.flatMap((c) => c.provides.map((key) => [key, c] as const)));
  const ordered: Collector[] = [];
  const waiting = [...collectors];
  while (waiting.length > 0) {
    const ready = waiting.findIndex((c) => (c.reads ?? []).every((key) => {
      const provider = providerOf.get(key);
      return provider === undefined || provider === c || ordered.includes(provider);
    }));
    if (ready < 0) throw new Error(`collectors read each other's facts in a circle: ${waiting.map((c) => c.name).join(', ')}`);
    ordered.push(...waiting.splice(ready, 1));
  }
  return ordered;
}

export async function collectFacts(host: HostRoot, options: CollectOptions = {}): Promise<FactSet> {
  const facts = new FactSet();
  let live: boolean | undefined;
  const ctx: CollectorContext = {
    host,
    facts,
    sleep: options.sleep ?? ((ms) => delay(ms)),
    now: options.now ?? (() => performance.now()),
    liveProc: async () => options.liveProc ?? (live ??= await isLiveProcfs(host)),
    ...(options.cluster ? { cluster: options.cluster } : {}),
  };
  // One scan's reads share the directories they open (closed when the collectors are done).
  await host.sharingDirectories(async () => {
    for (const collector of orderCollectors(options.collectors ?? COLLECTORS)) {
      try {
        await collector.collect(ctx);
      } catch (error) {
        const reason = `the ${collector.name} collector failed: ${(error as Error)?.message ?? String(error)}`;
        for (const key of collector.provides) if (!facts.has(key)) facts.unknown(key, reason);
      }
    }
  });
  return facts;
}
