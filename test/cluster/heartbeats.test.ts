// The heartbeat as data (src/wire/heartbeat.ts) and as report/describe/cleanup read it: a Lease read
// back is hostile (any JSON at all never throws; only a Lease named after the node, held by it, with a
// bounded duration and a real timestamp counts), current/stale at the lease duration, a renewTime in
// the future not believed; the fold over the Lease list; the removal patch of cleanup; what the
// table and describe print for a stale node.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { HeartbeatBook } from '../../src/cluster/heartbeats.ts';
import { removalPatch } from '../../src/cluster/cleanup.ts';
import { nodeRow } from '../../src/cluster/nodes.ts';
import { nodeLines } from '../../src/publish/cluster-report.ts';
import { renderNodeView } from '../../src/publish/terminal/node-view.ts';
import type { NodeAdvice } from '../../src/cluster/node-advice.ts';
import { renderAnnotations } from '../../src/wire/annotations.ts';
import {
  DEFAULT_HEARTBEAT_MS, HEARTBEAT_LABEL, heartbeatLease, heartbeatSpec, leaseDurationSeconds, livenessOf, MAX_LEASE_SECONDS, microTime, parseTime, readHeartbeat,
} from '../../src/wire/heartbeat.ts';
import { finding, report } from '../helpers/reports.ts';

const NOW = Date.UTC(2026, 11, 1, 12, 0, 0);
const lease = (name: string, spec: Record<string, unknown>) => ({ metadata: { name }, spec });

describe('the heartbeat Lease as written and read', () => {
  it('the agent writes what a reader takes: 3 periods of 5 min = 900 s, renewTime in MicroTime (6 fraction digits)', () => {
    assert.equal(leaseDurationSeconds(DEFAULT_HEARTBEAT_MS), 900);
    assert.equal(leaseDurationSeconds(10_000), 30);
    assert.equal(leaseDurationSeconds(1), 3, 'at least 3 s');
    assert.equal(microTime(NOW + 7), '2026-12-01T12:00:00.007000Z');
    const written = heartbeatLease('n1', 'ns', heartbeatSpec('n1', DEFAULT_HEARTBEAT_MS, NOW), 'uid-1') as any;
    assert.deepEqual(written.metadata, { name: 'n1', namespace: 'ns', labels: { [HEARTBEAT_LABEL]: 'agent' }, ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: 'n1', uid: 'uid-1' }] });
    assert.deepEqual(readHeartbeat(written, 'n1'), { ok: true, heartbeat: { renewedAtMs: NOW, leaseDurationSeconds: 900 } });
  });

  it('only a Lease named after the node, held by it, with a bounded duration and a timestamp counts', () => {
    const good = { holderIdentity: 'n1', leaseDurationSeconds: 30, renewTime: microTime(NOW) };
    const bad: [unknown, RegExp][] = [
      [lease('n2', good), /not named after the node/],
      [lease('n1', { ...good, holderIdentity: 'n2' }), /held by another identity/],
      [lease('n1', { ...good, leaseDurationSeconds: MAX_LEASE_SECONDS + 1 }), /leaseDurationSeconds/],
      [lease('n1', { ...good, leaseDurationSeconds: 1.5 }), /leaseDurationSeconds/],
      [lease('n1', { ...good, leaseDurationSeconds: '30' }), /leaseDurationSeconds/],
      [lease('n1', { ...good, renewTime: 'yesterday' }), /renewTime/],
      [lease('n1', { ...good, renewTime: `${microTime(NOW)}${' '.repeat(100)}` }), /renewTime/],
      [lease('n1', { ...good, renewTime: '2026-13-45T99:99:99Z' }), /renewTime/],
      [{ metadata: { name: 'n1' }, spec: [] }, /held by another identity/],
      [null, /not named after/],
    ];
    for (const [value, problem] of bad) {
      const read = readHeartbeat(value, 'n1');
      assert.ok(!read.ok && problem.test(read.problem), `${JSON.stringify(value)?.slice(0, 80)}: ${JSON.stringify(read)}`);
    }
  });

  it('any JSON as a Lease: never throws; ok only with exactly the checked fields', () => {
    const json = fc.jsonValue({ maxDepth: 4 });
    const leaseLike = fc.record({ metadata: fc.record({ name: fc.oneof(fc.constant('n1'), json) }, { requiredKeys: [] }),
      spec: fc.record({ holderIdentity: fc.oneof(fc.constant('n1'), json), leaseDurationSeconds: fc.oneof(fc.integer({ min: -5, max: 300_000 }), json),
        renewTime: fc.oneof(fc.date({ noInvalidDate: true }).map((d) => microTime(d.getTime())), fc.string(), json) }, { requiredKeys: [] }) }, { requiredKeys: [] });
    fc.assert(fc.property(fc.oneof(json, leaseLike), fc.integer({ min: -1e12, max: 1e13 }), (value, now) => {
      const read = readHeartbeat(value, 'n1');
      const live = livenessOf(read, now, 'ns');
      assert.ok(['current', 'stale'].includes(live.state));
      if (read.ok) {
        const v = value as any;
        assert.equal(v.metadata.name, 'n1');
        assert.equal(v.spec.holderIdentity, 'n1');
        assert.ok(Number.isInteger(v.spec.leaseDurationSeconds) && v.spec.leaseDurationSeconds >= 3 && v.spec.leaseDurationSeconds <= MAX_LEASE_SECONDS);
        assert.equal(read.heartbeat.renewedAtMs, parseTime(v.spec.renewTime));
      } else assert.equal(live.state, 'stale');
    }), { numRuns: 500 });
  });

  it('current up to its lease duration, stale after it; missing: stale; a renewTime further ahead than one duration: not believed', () => {
    const read = (renewed: number) => readHeartbeat(lease('n1', { holderIdentity: 'n1', leaseDurationSeconds: 30, renewTime: microTime(renewed) }), 'n1');
    assert.equal(livenessOf(read(NOW - 30_000), NOW, 'ns').state, 'current');
    assert.equal(livenessOf(read(NOW - 31_000), NOW, 'ns').state, 'stale');
    assert.match(livenessOf(read(NOW - 31 * 60_000), NOW, 'ns').reason, /^last heartbeat 31 min ago, stale after 30 s: its agent stopped/);
    assert.equal(livenessOf(read(NOW + 20_000), NOW, 'ns').state, 'current', 'a little clock skew is fine');
    assert.match(livenessOf(read(NOW + 3_600_000), NOW, 'ns').reason, /in the future: not believed/);
    assert.match(livenessOf(undefined, NOW, 'node-tuning-advisor').reason, /^no heartbeat Lease in node-tuning-advisor/);
    assert.equal(livenessOf(undefined, NOW, 'ns').state, 'stale');
  });
});

describe('report: the Lease list folded, rows marked', () => {
  it('each node gets its own Lease\'s verdict; another node\'s name, a foreign holder, or none make it stale', () => {
    const book = new HeartbeatBook('ns', NOW);
    const spec = (holder: string, renewed = NOW - 5_000) => ({ holderIdentity: holder, leaseDurationSeconds: 900, renewTime: microTime(renewed) });
    for (const l of [lease('n1', spec('n1')), lease('n2', spec('n1')), lease('n3', spec('n3', NOW - 3_600_000)), { metadata: { name: 42 } }, lease('__proto__', spec('__proto__'))]) book.add(l);
    assert.deepEqual(['n1', 'n2', 'n3', 'n4', 'toString'].map((n) => book.livenessOf(n).state), ['current', 'stale', 'stale', 'stale', 'stale']);
    assert.equal(book.livenessOf('__proto__').state, 'current', 'a name is only a key');
    assert.equal(book.summary.leases, 5);
    const unread = new HeartbeatBook('ns', NOW);
    unread.summary.problem = 'heartbeats not read: HTTP 403';
    assert.equal(unread.livenessOf('n1').state, 'unknown');
  });

  it('the table shows a stale node\'s last score and grade, marked STALE, with what it last published', () => {
    const annotations = renderAnnotations(report([finding('kernel-tick-rate', 'fail')], { node: 'n1' }));
    const row = nodeRow({ metadata: { name: 'n1', annotations } }, () => ({ state: 'stale', ageSeconds: 1860, staleAfterSeconds: 900, reason: 'x' }));
    const line = nodeLines([row], 120).join('\n');
    assert.match(line, /^n1\s+worker\s+\d+\s+[A-F]\s+STALE: last heartbeat 31 min ago; last published: kernel-tick-rate$/m);
    assert.equal(nodeRow({ metadata: { name: 'n2' } }, () => { throw new Error('asked'); }).heartbeat, undefined, 'no annotations: no heartbeat asked');
  });

  it('describe shows STALE under the head, with why; current: how old the heartbeat is', () => {
    const advice = (heartbeat: NodeAdvice['heartbeat']): NodeAdvice => ({
      schemaVersion: 2, kind: 'NodeAdvice', node: 'n1', roles: ['worker'], agent: 'ok', findings: [], events: [], ...(heartbeat ? { heartbeat } : {}),
      report: { schemaVersion: 2, score: 90, grade: 'A', counts: { pass: 1, fail: 0, unknown: 0, 'not-applicable': 0 }, omitted: 0, rules: [] },
    });
    const view = (a: NodeAdvice) => renderNodeView(a, () => undefined, { width: 100, color: false, now: new Date(NOW), program: 'kubectl node-tuning' });
    const stale = view(advice(livenessOf(undefined, NOW, 'node-tuning-advisor')));
    assert.match(stale, /as its agent last published it/);
    assert.match(stale, /^STALE: no heartbeat Lease in node-tuning-advisor: [\s\S]*These findings may no longer be true\./m);
    assert.match(view(advice({ state: 'current', reason: 'heartbeat 12 s ago (stale after 15 min)' })), /^Heartbeat: heartbeat 12 s ago/m);
  });
});

describe('cleanup\'s patch: our keys to null, nothing else', () => {
  it('annotations under the prefix and our two labels; none: no patch', () => {
    const node = { metadata: { name: 'n1',
      annotations: { 'node-tuning-advisor.io/summary': 'x', 'node-tuning-advisor.io/by-hand': 'y', 'silence.node-tuning-advisor.io/rules': 'a', 'example.com/x': 'z' },
      labels: { 'node-tuning-advisor.io/grade': 'F', 'node-tuning-advisor.io/critical-failing': '2', 'node-tuning-advisor.io/pool': 'gold', 'kubernetes.io/hostname': 'n1' } } };
    assert.deepEqual(removalPatch(node), {
      patch: { metadata: { annotations: { 'node-tuning-advisor.io/summary': null, 'node-tuning-advisor.io/by-hand': null },
        labels: { 'node-tuning-advisor.io/grade': null, 'node-tuning-advisor.io/critical-failing': null } } },
      annotations: 2, labels: 2,
    });
    assert.equal(removalPatch({ metadata: { name: 'n2', annotations: { 'example.com/x': 'z' } } }), undefined);
    assert.equal(removalPatch({ metadata: { name: 'n3', annotations: ['node-tuning-advisor.io/x'] as unknown } }), undefined);
  });
});
