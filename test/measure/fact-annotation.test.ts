// The facts annotation: what the agent publishes for `measure` (the seeds' knobs), within kubectl
// describe's line limit, and read back defensively (anyone who may patch Nodes can write it).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { Fact } from '../../src/facts/fact-set.ts';
import { ANNOTATION_PREFIX, MAX_TOTAL_BYTES, renderAnnotations, totalBytes } from '../../src/publish/annotations.ts';
import { FACTS_KEY, PUBLISHED_FACTS, parseFactsAnnotation, renderFactsAnnotation } from '../../src/publish/fact-annotation.ts';
import { byteLength } from '../../src/publish/text-bytes.ts';
import { seedReport } from '../helpers/reports.ts';

const facts: Record<string, Fact> = {
  'kernel.hz': { value: 250, source: '/boot/config-6.1.0' },
  'cpu.governor': { value: 'powersave', source: '/sys/devices/system/cpu/cpufreq/policy0/scaling_governor' },
  'cpu.epp': { value: null, source: '/sys', detail: 'no EPP file' },
  'tuned.loadedProfiles': { value: ['throughput-performance'], source: '/etc/tuned/active_profile' },
  'kubelet.kubeAPIQPS': { value: 50, source: 'default' },
  'scheduler.kubeAPIQPS': { value: null, source: 'unknown', unknown: 'kube-scheduler --config /etc/kubernetes/sched.yaml is not under any hostPath volume' },
  'etcd.fsync.p99Ms': { value: 12, source: 'probe' },
};

test('the seeds\' knobs round-trip; unknown facts keep their reason; facts not scanned are left out', () => {
  const value = renderFactsAnnotation(facts);
  for (const line of value.split('\n')) assert.ok(byteLength(line) <= 138, line);
  const parsed = parseFactsAnnotation({ [FACTS_KEY]: value });
  assert.equal(parsed.state, 'ok');
  assert.deepEqual(parsed.state === 'ok' && parsed.facts, {
    'kernel.hz': { value: 250 }, 'cpu.governor': { value: 'powersave' }, 'cpu.epp': { value: null },
    'tuned.loadedProfiles': { value: ['throughput-performance'] }, 'kubelet.kubeAPIQPS': { value: 50 },
    'scheduler.kubeAPIQPS': { unknown: 'kube-scheduler --config /etc/kubernetes/sched.yaml is not under any hostPath volume' },
  });
  assert.ok(FACTS_KEY.startsWith(ANNOTATION_PREFIX));
});

test('the agent publishes it with the report, inside the 8 KiB budget', () => {
  const annotations = renderAnnotations({ ...seedReport(), facts });
  assert.equal(annotations[FACTS_KEY], renderFactsAnnotation(facts));
  assert.ok(totalBytes(annotations) <= MAX_TOTAL_BYTES);
});

test('what anyone could have written is refused or bounded, never thrown', () => {
  const read = (value: string) => parseFactsAnnotation({ [FACTS_KEY]: value });
  assert.deepEqual(parseFactsAnnotation({}), { state: 'none' });
  assert.equal(read('not json').state, 'unreadable');
  assert.equal(read('[1]').state, 'unreadable');
  assert.match(JSON.stringify(read('{"schemaVersion":9}')), /schemaVersion 9; this version reads 1/);
  assert.match(JSON.stringify(read('{"schemaVersion":1,"kernel.hz":{"x":1}}')), /kernel.hz is neither a value nor/);
  assert.equal(read(`{"schemaVersion":1,"cpu.governor":"${'x'.repeat(20_000)}"}`).state, 'unreadable');
  const long = read(`{"schemaVersion":1,"cpu.governor":"${'x'.repeat(1000)}","other":1}`);
  assert.ok(long.state === 'ok' && (long.facts['cpu.governor'] as { value: string }).value.length <= 200);
});

test('property: any fact values render within 138 bytes a line and parse back', () => {
  const valueArb = fc.oneof(fc.integer(), fc.string({ unit: 'binary', maxLength: 400 }), fc.constant(null), fc.boolean(),
    fc.array(fc.string({ unit: 'binary', maxLength: 80 }), { maxLength: 12 }), fc.dictionary(fc.string(), fc.integer()));
  const factArb = fc.record({ value: valueArb, unknown: fc.option(fc.string({ unit: 'binary', maxLength: 500 }), { nil: undefined }) });
  fc.assert(fc.property(fc.dictionary(fc.constantFrom(...PUBLISHED_FACTS), factArb), (chosen) => {
    const all = Object.fromEntries(Object.entries(chosen).map(([k, f]) => [k, { ...f, source: 'x', ...(f.unknown === undefined ? {} : { unknown: f.unknown }) } as Fact]));
    const value = renderFactsAnnotation(all);
    for (const line of value.split('\n')) assert.ok(byteLength(line) <= 138, `${byteLength(line)}: ${line}`);
    const parsed = parseFactsAnnotation({ [FACTS_KEY]: value });
    assert.equal(parsed.state, 'ok', JSON.stringify(parsed));
    assert.deepEqual(Object.keys(parsed.state === 'ok' ? parsed.facts : {}).sort(), Object.keys(chosen).sort());
  }));
});
