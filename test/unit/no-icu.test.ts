// The CLI's start-up budget (issue 14): the first localeCompare or Intl.Collator of a process loads
// ICU's collation data, ~10 ms of a scan. Sorting goes through src/order.ts and naturalCompare.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const SRC = fileURLToPath(new URL('../../src/', import.meta.url));

test('no source file sorts with ICU (localeCompare, Intl.Collator)', async () => {
  const offenders: string[] = [];
  for (const entry of await readdir(SRC, { recursive: true })) {
    if (!entry.endsWith('.ts')) continue;
    const lines = (await readFile(path.join(SRC, entry), 'utf8')).split('\n');
    lines.forEach((line, i) => {
      const code = line.replace(/\/\/.*$/, '').replace(/^\s*\*.*$/, '');
      if (/\.localeCompare\(|Intl\.Collator/.test(code)) offenders.push(`src/${entry}:${i + 1}: ${line.trim()}`);
    });
  }
  assert.deepEqual(offenders, [], 'use byCodePoint / byText (src/order.ts) or naturalCompare');
});
