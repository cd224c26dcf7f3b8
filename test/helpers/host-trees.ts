// Facts of a host tree given by its directory (a temporary tree from tempHost, or a fixture).
import { collectFacts } from '../../src/facts/collect.ts';
import type { FactSet } from '../../src/facts/fact-set.ts';
import { HostRoot } from '../../src/host/host-root.ts';
import type { Collector } from '../../src/collectors/collector.ts';

export function factsAt(root: string, ...collectors: Collector[]): Promise<FactSet> {
  return collectFacts(new HostRoot(root), { collectors });
}

/** A fact that must have been collected (decided or unknown). */
export function fact(facts: FactSet, key: string): { value: unknown; source: string; detail?: string; unknown?: string } {
  const found = facts.get(key);
  if (!found) throw new Error(`${key} was not collected`);
  return found;
}
