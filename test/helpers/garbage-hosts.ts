// The property harness both garbage tests share: random contents written into the files the
// collectors parse; every collector must come back with facts (decided, or unknown with a reason).
import assert from 'node:assert/strict';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import type { Collector } from '../../src/collectors/collector.ts';
import { FactSet } from '../../src/facts/fact-set.ts';
import { HostRoot } from '../../src/host/host-root.ts';

export interface GarbageOptions {
  collectors: readonly Collector[];
  /** Host paths that get garbage. */
  files: string[];
  /** Hand-picked nasty contents mixed with random strings and bytes. */
  tricky: fc.Arbitrary<string>;
  maxKeys: number;
  numRuns: number;
}

export async function assertCollectorsSurviveGarbage(options: GarbageOptions): Promise<void> {
  const content = fc.oneof(fc.string({ maxLength: 300 }), fc.uint8Array({ maxLength: 300 }).map((bytes) => Buffer.from(bytes)), options.tricky);
  const base = await mkdtemp(path.join(os.tmpdir(), 'nta-garbage-'));
  let run = 0;
  try {
    await fc.assert(
      fc.asyncProperty(fc.dictionary(fc.constantFrom(...options.files), content, { minKeys: 1, maxKeys: options.maxKeys }), async (files) => {
        const root = path.join(base, String(run++));
        for (const [hostPath, data] of Object.entries(files)) {
          await mkdir(path.dirname(path.join(root, hostPath)), { recursive: true });
          await writeFile(path.join(root, hostPath), data);
        }
        const facts = new FactSet();
        const ctx = { host: new HostRoot(root), facts, sleep: async () => {}, now: () => run * 1000, liveProc: async () => true };
        for (const collector of options.collectors) await collector.collect(ctx);
        for (const key of facts.keys()) {
          const fact = facts.get(key);
          assert.equal(typeof fact?.source, 'string', `${key} has a source`);
          if (fact?.unknown !== undefined) assert.ok(fact.unknown.length > 0, `${key} says why it is unknown`);
          if (typeof fact?.value === 'number') assert.ok(Number.isFinite(fact.value), `${key} is a finite number`);
        }
        await rm(root, { recursive: true, force: true });
      }),
      { numRuns: options.numRuns },
    );
  } finally {
    await rm(base, { recursive: true, force: true });
  }
}
