// Terminal layout: wrap never breaks a word that fits a line, continuation lines hang under their
// label, columns wrap inside themselves, long commands stay pasteable.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { clip, commandLines, hang, row, wrap } from '../../src/publish/terminal/layout.ts';
import { displayWidth } from '../../src/text/columns.ts';

const word = fc.stringMatching(/^[A-Za-z0-9.,;:()→≥µ/-]{1,14}$/);

test('property: wrapped lines fit, keep every word whole and in order', () => {
  fc.assert(fc.property(fc.array(word, { maxLength: 60 }), fc.integer({ min: 15, max: 120 }), (words, width) => {
    const lines = wrap(words.join(' '), width);
    for (const line of lines) assert.ok(displayWidth(line) <= width, line);
    assert.deepEqual(lines.join(' ').split(' ').filter(Boolean), words);
    // A break only where the next word did not fit.
    lines.slice(0, -1).forEach((line, i) => {
      const next = (lines[i + 1] as string).split(' ')[0] as string;
      assert.ok(displayWidth(`${line} ${next}`) > width, `${line} | ${next}`);
    });
  }), { numRuns: 300 });
});

test('a word wider than the line breaks after a path separator, and only then', () => {
  const path = '/var/log/pods/kube-system_kube-scheduler-master1_7d3b9f2ad1c64f0e8a2b5c9d1e3f4a6b/kube-scheduler/0.log';
  const lines = wrap(`log ${path}`, 40);
  assert.deepEqual(lines, ['log', '/var/log/pods/kube-system_kube-', 'scheduler-master1_', '7d3b9f2ad1c64f0e8a2b5c9d1e3f4a6b/kube-', 'scheduler/0.log']);
  assert.equal(lines.slice(1).join(''), path);
});

test('hanging indent, clipping with "…", wide characters count twice', () => {
  assert.deepEqual(hang('  why    ', 'one two three four five six', 20), ['  why    one two', '         three four', '         five six']);
  assert.deepEqual(clip(['aaa bbb', 'ccc ddd', 'eee'], 2, 8), ['aaa bbb', 'ccc ddd…']);
  assert.deepEqual(clip(['aaa bbb', 'ccc dddd', 'eee'], 2, 8), ['aaa bbb', 'ccc…']);
  assert.equal(displayWidth('节点 ok'), 7);
  assert.equal(displayWidth('é'), 1);
});

test('a row wraps each cell inside its column; the last column takes the rest', () => {
  assert.deepEqual(row(['FAIL', 'warning', 'kernel-tick-rate', 'Kernel timer tick below 1000 Hz'], [7, 8, 16], 50), [
    'FAIL     warning   kernel-tick-rate  Kernel timer',
    '                                     tick below',
    '                                     1000 Hz',
  ]);
});

test('a long command breaks outside quotes with a backslash; its comment goes under it', () => {
  const command = "kubectl get --raw /api/v1/nodes/$(hostname)/proxy/configz | grep -o '\"kubeAPI[A-Za-z]*\": [0-9]*'   # the running values";
  assert.deepEqual(commandLines(command, 64), [
    '$ kubectl get --raw /api/v1/nodes/$(hostname)/proxy/configz | \\',
    "    grep -o '\"kubeAPI[A-Za-z]*\": [0-9]*'",
    '  # the running values',
  ]);
  assert.deepEqual(commandLines('ionice -c2 -n0 -p $(pgrep -x etcd)', 60), ['$ ionice -c2 -n0 -p $(pgrep -x etcd)']);
});
