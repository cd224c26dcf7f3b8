// The Node's silence annotation as the agent reads it: rule ids only, bounded, anything else named.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { SILENCE_ANNOTATION, describeSilence, silenceChanged, silenceOf } from '../../src/agent/silence.ts';

const node = (value?: string) => ({ metadata: { name: 'n', ...(value === undefined ? {} : { annotations: { [SILENCE_ANNOTATION]: value } }) } });

test('comma or space separated ids; duplicates once; non-ids ignored and named', () => {
  assert.deepEqual(silenceOf(node(' kernel-tick-rate,cpu-governor  kernel-tick-rate, ')), { ids: ['kernel-tick-rate', 'cpu-governor'], ignored: [] });
  assert.deepEqual(silenceOf(node('Bad_ID,cpu-governor')), { ids: ['cpu-governor'], ignored: ['Bad_ID'] });
  assert.deepEqual(silenceOf(node()), { ids: [], ignored: [] });
  assert.deepEqual(silenceOf(undefined), { ids: [], ignored: [] });
  assert.equal(describeSilence(silenceOf(node('cpu-governor,nope')), (id) => id === 'cpu-governor'),
    `${SILENCE_ANNOTATION}: not evaluating cpu-governor, nope on this Node; no such rule: nope (see: node-tuning-advisor rules list)`);
  assert.equal(silenceChanged(undefined, silenceOf(node())), false);
  assert.equal(silenceChanged(silenceOf(node('a')), silenceOf(node('a'))), false);
  assert.equal(silenceChanged(silenceOf(node('a')), silenceOf(node())), true);
});

test('any annotation text: at most 64 ids, each a rule id; the log line has no control character', () => {
  fc.assert(fc.property(fc.string({ maxLength: 4000 }), (text) => {
    const s = silenceOf(node(text));
    assert.ok(s.ids.length <= 64 && s.ignored.length <= 5);
    for (const id of s.ids) assert.match(id, /^[a-z0-9][a-z0-9-]*$/);
    assert.doesNotMatch(describeSilence(s, () => true), /[\u0000-\u001f\u007f]/);
  }));
});
