// The developer docs name only files that exist: every `src/…`, `test/…`, `scripts/…` or `bench/…`
// path in DEVELOPERS.md, README.md and docs/*.md is checked against the tree (a `<placeholder>`
// path like `src/collectors/<family>.ts` is a pattern, not a file).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '../..');
const DOCS = ['DEVELOPERS.md', 'README.md', ...readdirSync(path.join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
const PATH = /(?<![\w./$-])(?:src|test|scripts|bench)\/[\w./<>-]*[\w>]/g;

export function namedPaths(text: string): string[] {
  return [...new Set(text.match(PATH) ?? [])].filter((p) => !p.includes('<'));
}

test('the path pattern finds repository paths and only those', () => {
  assert.deepEqual(namedPaths('see `src/host/trust.ts` and (test/unit/x.test.ts); not ../shared/envtest/assets or src/collectors/<family>.ts'), ['src/host/trust.ts', 'test/unit/x.test.ts']);
});

for (const doc of DOCS) {
  test(`${doc} names only files that exist`, () => {
    const named = namedPaths(readFileSync(path.join(ROOT, doc), 'utf8'));
    assert.ok(doc !== 'DEVELOPERS.md' || named.length > 30, `${named.length} paths read from ${doc}`);
    assert.deepEqual(named.filter((p) => !existsSync(path.join(ROOT, p))), []);
  });
}
