// `describe NODE` renders what the agent wrote: the findings lines read back, blocks as in scan's view.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { NodeAdvice } from '../../src/cluster/node-advice.ts';
import { FINDINGS_KEY, parseAnnotations, renderAnnotations } from '../../src/wire/annotations.ts';
import { composeLine, parseFindingLine } from '../../src/wire/finding-line.ts';
import { renderNodeView } from '../../src/publish/terminal/node-view.ts';
import { seedReport } from '../helpers/reports.ts';

test('property: a findings line reads back as written when nothing had to be cut', () => {
  const text = fc.stringMatching(/^[A-Za-z0-9 .,=/()≥µ]{1,30}$/).map((s) => s.replace(/ +/g, ' ').trim()).filter((s) => s.length > 0);
  fc.assert(fc.property(text, fc.option(text, { nil: '' }), text, (observed, expected, fix) => {
    const line = composeLine({ tag: 'WARN', ruleId: 'some-rule', observed, expected, fix }, 1000);
    assert.deepEqual(parseFindingLine(line), { tag: 'WARN', ruleId: 'some-rule', observed, ...(expected ? { expected } : {}), fix });
  }), { numRuns: 200 });
  assert.equal(parseFindingLine('+3 more not shown (8 KiB limit): run scan on the node'), undefined);
});

test('describe renders the published findings as scan blocks, unknown rules by reason, then the Events', () => {
  const annotations = renderAnnotations(seedReport());
  const parsed = parseAnnotations(annotations);
  assert.equal(parsed.state, 'ok');
  const advice: NodeAdvice = {
    schemaVersion: 1, kind: 'NodeAdvice', node: 'worker-1', roles: ['worker'], agent: 'ok',
    ...(parsed.state === 'ok' ? { report: parsed.report } : {}),
    findings: (annotations[FINDINGS_KEY] as string).split('\n'),
    events: [{ type: 'Warning', reason: 'TuningRecommendation', message: 'CRIT etcd-fsync-latency: fsync p99 18.2 ms — move etcd\'s data dir to SSD/NVMe', count: 2, lastSeen: '2026-12-01T09:58:00.000Z' }],
  };
  const titles: Record<string, string> = { 'etcd-fsync-latency': "etcd's disk syncs too slowly" };
  const out = renderNodeView(advice, (id) => (titles[id] ? { title: titles[id] as string, category: 'etcd' } : undefined),
    { width: 80, color: false, now: new Date('2026-12-01T10:00:00.000Z'), program: 'kubectl node-tuning' });
  const lines = out.trimEnd().split('\n');
  for (const line of lines) assert.ok([...line].length <= 80, line);
  assert.equal(lines[0], 'node worker-1 · score 73/100, grade C · worker · as its agent published it');
  assert.equal(lines[1], '3 failing · 1 unknown · 1 pass · 1 not applicable · checked 4 of 5 rules', 'coverage beside the score, not in it');
  assert.match(out, /^FAIL {5}critical {2}etcd-fsync-latency +etcd's disk syncs too slowly\n {2}found {2}fsync p99 18\.2 ms on sdb \(rotational\) → want p99 ≤ 10 ms\n {2}fix {4}move etcd's data dir to SSD\/NVMe$/m);
  assert.match(out, /^UNKNOWN {2}info {6}tuned-profile *\n {2}reason cannot read the fact behind tuned-profile$/m);
  assert.match(out, /^ {2}2m {5}Warning {2}TuningRecommendation {2}CRIT etcd-fsync-latency: fsync p99 18\.2/m);
  assert.match(out, /\(×2\)/);
});
