// Facts of a host tree given by its directory (a temporary tree from tempHost, or a fixture).
import { collectFacts } from '../../src/facts/collect.ts';
import type { FactSet } from '../../src/facts/fact-set.ts';
import { HostRoot } from '../../src/host/host-root.ts';
import type { Collector } from '../../src/collectors/collector.ts';

export function factsAt(root: string, ...collectors: Collector[]): Promise<FactSet> {
  return collectFacts(new HostRoot(root), { collectors });
}
