// Fixture host trees and small temporary trees for the api-client collectors' tests.
import { mkdtemp, mkdir, rm, writeFile, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TestContext } from 'node:test';
import { HostRoot } from '../../src/host/host-root.ts';
import { collectFacts } from '../../src/facts/collect.ts';
import type { Collector } from '../../src/collectors/collector.ts';
import type { FactSet } from '../../src/facts/fact-set.ts';

export const FIXTURES = path.join(import.meta.dirname, '..', 'fixtures', 'hosts');

export function fixtureHost(name: string): HostRoot {
  return new HostRoot(path.join(FIXTURES, name));
}

export function factsOf(name: string | HostRoot, ...collectors: Collector[]): Promise<FactSet> {
  return collectFacts(typeof name === 'string' ? fixtureHost(name) : name, { collectors });
}

/** A temporary host tree from {hostPath: content}; a value {link} makes a symlink. Removed after the test. */
export async function tempHost(t: TestContext, files: Record<string, string | { link: string }>): Promise<HostRoot> {
  const root = await mkdtemp(path.join(tmpdir(), 'nta-host-'));
  t.after(() => rm(root, { recursive: true, force: true }));
  for (const [hostPath, content] of Object.entries(files)) {
    const local = path.join(root, hostPath);
    await mkdir(path.dirname(local), { recursive: true });
    if (typeof content === 'string') await writeFile(local, content);
    else await symlink(content.link, local);
  }
  return new HostRoot(root);
}
