// eachLine / firstLines (src/text/lines.ts): the lines split('\n') gives, without building them all;
// at most maxLines, and a line over maxLineChars skipped without being copied.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { eachLine, firstLines } from '../../src/text/lines.ts';

const text = fc.array(fc.constantFrom('a', 'bb', '\n', '\n\n', 'ccc ', '\r'), { maxLength: 40 }).map((parts) => parts.join(''));

test('unbounded, the lines are split(\'\\n\')\'s; bounded, their first maxLines', () => {
  fc.assert(fc.property(text, fc.nat(12), (s, max) => {
    const all: string[] = [];
    const walk = eachLine(s, { maxLines: Infinity }, (line) => { all.push(line); });
    assert.deepEqual(all, s.split('\n'));
    assert.equal(walk.truncated, false);
    assert.deepEqual(firstLines(s, max), s.split('\n').slice(0, max));
  }));
});

test('a long line is skipped and counted; returning false stops the walk', () => {
  const seen: string[] = [];
  const walk = eachLine(`short\n${'x'.repeat(100)}\nnext\nlast`, { maxLines: 10, maxLineChars: 10 }, (line) => { seen.push(line); return line !== 'next'; });
  assert.deepEqual(seen, ['short', 'next']);
  assert.deepEqual(walk, { lines: 3, skippedLong: 1, truncated: true });
  assert.equal(eachLine('\n'.repeat(1000), { maxLines: 10 }, () => undefined).truncated, true);
});
