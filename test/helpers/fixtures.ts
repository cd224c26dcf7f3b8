import { mkdtemp, rm, mkdir, writeFile, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestContext } from 'node:test';
import { collectFacts, type CollectOptions } from '../../src/collectors/run.ts';
import { HostRoot } from '../../src/host/host-root.ts';
import type { Collector } from '../../src/collectors/collector.ts';

export const FIXTURE_HOSTS = fileURLToPath(new URL('../fixtures/hosts/', import.meta.url));

export function fixtureHost(name: string): string {
  return path.join(FIXTURE_HOSTS, name);
}

/** Facts of one fixture host, from the given collectors (all by default). */
export async function factsOf(name: string, collectors?: Collector[], options: CollectOptions = {}) {
  return collectFacts(new HostRoot(fixtureHost(name)), { ...options, ...(collectors ? { collectors } : {}) });
}

/** A temporary host tree from a map of host paths to contents ("->target" makes a symlink). */
export async function tempHost(t: TestContext, files: Record<string, string | Buffer>): Promise<string> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'nta-host-'));
  t.after(() => rm(root, { recursive: true, force: true }));
  for (const [hostPath, content] of Object.entries(files)) {
    const local = path.join(root, hostPath);
    await mkdir(path.dirname(local), { recursive: true });
    if (typeof content === 'string' && content.startsWith('->')) await symlink(content.slice(2), local);
    else await writeFile(local, content);
  }
  return root;
}
