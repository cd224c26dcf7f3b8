// One finding on one line: what kubectl describe, Events and the terminal's summaries show.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { composeLine, shortReason } from '../../src/wire/finding-line.ts';
import { byteLength } from '../../src/text/bytes.ts';

// The engine's message for seed 000's etcd rules (no /proc in the fixture).
const ETCD_UNKNOWN = 'Cannot tell whether this applies: etcd.present is unknown: no etcd configuration found and /proc is not readable, '
  + 'so a running etcd cannot be ruled out (looked at /proc/*/cmdline, /etc/kubernetes/manifests/etcd.yaml, '
  + '/var/lib/rancher/rke2/agent/pod-manifests/etcd.yaml, /etc/etcd.env, /etc/systemd/system/etcd.service, /var/lib/rancher/k3s/server/db/etcd).';

test('a reason loses the engine preamble, then the places it looked, then trailing clauses: never cut mid-clause', () => {
  assert.equal(shortReason(ETCD_UNKNOWN, 120), 'etcd.present unknown: no etcd configuration found and /proc is not readable, so a running etcd cannot be ruled out');
  assert.equal(shortReason(ETCD_UNKNOWN, 90), 'etcd.present unknown: no etcd configuration found and /proc is not readable');
  assert.equal(shortReason('Cannot decide: kernel.hz is unknown: no kernel config (tried: /proc/config.gz does not exist).', 200),
    'kernel.hz unknown: no kernel config (tried: /proc/config.gz does not exist)');
  // A comma inside parentheses is no place to end.
  assert.equal(shortReason('Cannot decide: etcd.eventsSplit is unknown: no kube-apiserver on this node (no process, no manifest), nothing to read.', 60),
    'etcd.eventsSplit unknown: no kube-apiserver on this node');
  assert.equal(shortReason('Not applicable here: cpu.cpufreq = false.', 100), 'cpu.cpufreq = false');
});

test('a shortened reason never ends on the label of a fact whose own reason did not fit', () => {
  const two = "Cannot decide: etcd's disk fsync time (p99): not measured: run `scan --probe` to time fdatasync on etcd's disk; "
    + "etcd's WAL fsync time (p99, from its metrics): http://localhost:2379/metrics is not reachable (ECONNREFUSED).";
  assert.equal(shortReason(two, 140), "etcd's disk fsync time: not measured: run `scan --probe` to time fdatasync on etcd's disk");
  assert.equal(shortReason(two, 400), "etcd's disk fsync time (p99): not measured: run `scan --probe` to time fdatasync on etcd's disk; "
    + "etcd's WAL fsync time (p99, from its metrics): http://localhost:2379/metrics is not reachable (ECONNREFUSED)");
  const fitted = shortReason(two, 200);
  assert.ok(fitted.endsWith('is not reachable'), fitted);
});

test('only a single clause longer than the line is cut, with "…"', () => {
  const reason = shortReason(`Cannot decide: x is unknown: ${'word '.repeat(40)}end.`, 60);
  assert.ok(reason.endsWith('…') && byteLength(reason) <= 60, reason);
});

test('a finding line drops "want" before it cuts the observed value, and never cuts the fix', () => {
  const parts = { tag: 'WARN', ruleId: 'cpu-governor', observed: 'governor powersave', expected: 'performance', fix: 'tuned-adm profile throughput-performance' };
  assert.equal(composeLine(parts), 'WARN cpu-governor: governor powersave; want performance — tuned-adm profile throughput-performance');
  assert.equal(composeLine(parts, 90), 'WARN cpu-governor: governor powersave — tuned-adm profile throughput-performance');
  assert.equal(composeLine(parts, 80), 'WARN cpu-governor: governor powe… — tuned-adm profile throughput-performance');
});

test('property: any line fits its budget in bytes and stays one line', () => {
  const text = fc.string({ unit: 'binary', maxLength: 300 });
  fc.assert(fc.property(text, text, text, fc.integer({ min: 40, max: 300 }), (observed, expected, fix, max) => {
    const line = composeLine({ tag: 'CRIT', ruleId: 'some-rule', observed, expected, fix }, max);
    assert.ok(byteLength(line) <= max && !/[\n\r]/.test(line), line);
    const reason = shortReason(observed, max);
    assert.ok(byteLength(reason) <= max && !/[\n\r]/.test(reason), reason);
  }), { numRuns: 300 });
});
