// What people read: the verdict first, the phase table, the slowest pods, what the advisor said;
// within the terminal's width; the progress line on a terminal and in a log.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { ProgressLine, progressText } from '../../src/cli/measure-progress.ts';
import { compareMeasurements } from '../../src/measure/compare.ts';
import { formatMs, renderComparisonMarkdown, renderComparisonText, renderMeasurementMarkdown, renderMeasurementText } from '../../src/publish/measure-view.ts';
import { measurement, samples } from '../helpers/measurements.ts';

const seedBefore = () => measurement(samples(Array.from({ length: 100 }, (_, i) => [7000 + i * 10, 10, 500, 100] as [number, number, number, number])), {
  facts: { 'kernel.hz': { value: 250, from: 'worker-1' }, 'cpu.governor': { value: 'performance', from: 'worker-1' }, 'scheduler.kubeAPIQPS': { value: 50, from: 'cp-1' } },
});

test('the verdict leads, then the phases, the slowest pods and the node as the advisor saw it; 80 columns', () => {
  const text = renderMeasurementText(seedBefore(), 80);
  const lines = text.split('\n');
  assert.match(lines[0] as string, /^Pod start-up on node worker-1: 100 pods at once, placed by the scheduler$/);
  assert.match(text, /SLO p99 creation → Ready < 5 s: MISSED \(p99 8\.590 s; largest phase:\s+scheduling\)/);
  assert.match(text, /^scheduling +7\.49 s +7\.89 s +7\.98 s +7\.99 s +100$/m);
  assert.match(text, /^statusDelay +0 ms +0 ms +0 ms +0 ms +100$/m);
  assert.match(text, /^SLOWEST POD +TOTAL +SCHEDULING +INIT +CREATION +READINESS +STATUSDELAY$/m);
  assert.match(text, /^pod-startup-099 +8\.60 s +7\.99 s +10 ms +500 ms +100 ms +0 ms$/m);
  assert.match(text, /Node worker-1 when measured: advisor score 73\/100 \(grade C\)\n {2}CONFIG_HZ 250 · CPU governor performance · scheduler QPS\/burst 50\/\?/);
  for (const line of lines) assert.ok(line.length <= 80, `${line.length}: ${line}`);
});

test('a timeout says so first, and groups what did not finish', () => {
  const m = measurement(samples([[100, 10, 900, 50]]), {
    outcome: 'timeout', counts: { requested: 3, created: 3, ready: 1, notReady: 2, failedToCreate: 0 },
    notReady: [{ reason: 'ImagePullBackOff', pods: 2, example: 'pod-startup-001: Back-off pulling image "registry.example/pause:9"' }],
  });
  const text = renderMeasurementText(m, 60);
  assert.match(text, /TIMED OUT after 10m00s: 1 of 3 pods Ready; the table\s+covers those/);
  assert.match(text, /Not Ready \(2\)\n {2}2 × ImagePullBackOff \(pod-startup-001: Back-off\n {6}pulling image/);
  for (const line of text.split('\n')) assert.ok(line.length <= 60, `${line.length}: ${line}`);
});

/** The phase table as printed: each row's name and p99 (ms), the total aside. */
function printedP99s(text: string): Map<string, number> {
  const table = text.slice(text.indexOf('\nPHASE'), text.indexOf('\n\n', text.indexOf('\nPHASE')));
  const ms = (cell: string) => (cell.endsWith(' ms') ? Number(cell.slice(0, -3)) : Number(cell.slice(0, -2)) * 1000);
  const rows = [...table.matchAll(/^(\S+) +(\S+ m?s) +(\S+ m?s) +(\S+ m?s) +(\S+ m?s) +\d+$/gm)];
  return new Map(rows.filter((r) => r[1] !== 'total').map((r) => [r[1] as string, ms(r[4] as string)]));
}

test('the largest phase named is the printed phase with the highest p99: the status write (statusDelay) when it is', () => {
  const throttled = measurement(samples(Array.from({ length: 60 }, (_, i) => [300 + (i === 59 ? 579 : 0), 7, 15, 5, 600 * i + 2000] as [number, number, number, number, number])));
  const text = renderMeasurementText(throttled, 80);
  const named = /largest phase:\s+(\w+)\)/.exec(text)?.[1] as string;
  const p99s = printedP99s(text);
  assert.deepEqual([...p99s.keys()], ['scheduling', 'initialization', 'creation', 'readiness', 'statusDelay']);
  assert.equal(named, 'statusDelay');
  assert.equal(p99s.get(named), Math.max(...p99s.values()));
  const named2 = /largest phase:\s+(\w+)\)/.exec(renderMeasurementText(seedBefore(), 80))?.[1];
  assert.equal(named2, 'scheduling');
});

test('attach is timed beside the phases, not among them', () => {
  const text = renderMeasurementText({ ...seedBefore(), attach: { samples: 1, p50Ms: 11_000, p90Ms: 11_000, p99Ms: 11_000, maxMs: 11_000 } }, 80);
  assert.match(text, /\n\nVOLUME ATTACH +P50 +P90 +P99 +MAX +PODS\nbound → attached +11\.0 s +11\.0 s +11\.0 s +11\.0 s +1\n/);
  assert.deepEqual([...printedP99s(text).keys()], ['scheduling', 'initialization', 'creation', 'readiness', 'statusDelay']);
});

test('before → after per phase with the change in ms and percent, the noise floor, and the settings that changed', () => {
  const after = measurement(samples(Array(100).fill([500, 10, 1000, 100])), {
    facts: { 'kernel.hz': { value: 1000, from: 'worker-1' }, 'cpu.governor': { value: 'performance', from: 'worker-1' }, 'scheduler.kubeAPIQPS': { value: 150, from: 'cp-1' } },
  });
  const c = compareMeasurements(seedBefore(), after);
  const text = renderComparisonText(c, 'before.json', 80);
  assert.match(text, /^scheduling +p50 +7\.49 s → 500 ms +-6\.99 s -93% +improved\n +p99 +7\.98 s → 500 ms +-7\.48 s -94%$/m);
  // +500 ms, +100 %: under 10 % of an 8.6 s total.
  assert.match(text, /^creation +p50 +500 ms → 1\.00 s +\+500 ms \+100% \(noise\) +unchanged$/m);
  assert.match(text, /^statusDelay +p50 +0 ms → 0 ms +±0 ms \(noise\) +unchanged$/m);
  assert.match(text, /Noise: a change under 100 ms or under 10 % of the total \(p50 810 ms, p99 859\s+ms here\) counts as unchanged/);
  assert.match(text, /SLO: missed \(p99 8\.59 s\) → met \(p99 1\.61 s\)/);
  assert.match(text, /Changed between the runs: CONFIG_HZ 250 → 1000; scheduler QPS\/burst 50\/\? →\s+150\/\?/);
  assert.match(text, /Unchanged: CPU governor performance/);
  for (const line of text.split('\n')) assert.ok(line.length <= 80, `${line.length}: ${line}`);
  const md = renderComparisonMarkdown(c, 'before|x.json');
  assert.match(md, /before\\\|x\.json/);
  assert.match(md, /\| scheduling \| p50 \| 7\.49 s → 500 ms \| -6\.99 s -93% \| improved \|/);
});

test('markdown escapes what it prints from the cluster', () => {
  const m = measurement(samples([[100, 10, 900, 50]]), { node: 'evil|node*' });
  assert.match(renderMeasurementMarkdown(m), /### Pod start-up on evil\\\|node\\\*/);
});

test('durations read at a glance', () => {
  assert.deepEqual([formatMs(null), formatMs(7), formatMs(999.6), formatMs(1850), formatMs(12_340), formatMs(125_000)], ['–', '7 ms', '1000 ms', '1.85 s', '12.3 s', '2m05s']);
});

test('progress: rewritten in place on a terminal, notes above it; a line per stage in a log', () => {
  const tty = Object.assign(new PassThrough(), { isTTY: true, columns: 40 });
  let written = '';
  tty.on('data', (c: Buffer) => { written += c.toString(); });
  const line = new ProgressLine(tty);
  const counts = { created: 100, scheduled: 52, started: 45, ready: 37, ended: 0, present: 100 };
  line.update({ stage: 'starting', total: 100, counts, elapsedMs: 12_300 });
  line.note('namespace nta-measure-x deleted');
  line.clear();
  assert.equal(written, '\r\u001b[K37/100 ready, 12 s (52 scheduled, 45 s…\r\u001b[Knamespace nta-measure-x deleted\n37/100 ready, 12 s (52 scheduled, 45 s…\r\u001b[K');
  const log = new PassThrough();
  let logged = '';
  log.on('data', (c: Buffer) => { logged += c.toString(); });
  const plain = new ProgressLine(log);
  plain.update({ stage: 'starting', total: 100, counts, elapsedMs: 12_300 });
  plain.update({ stage: 'starting', total: 100, counts: { ...counts, ready: 38 }, elapsedMs: 12_500 });
  plain.update({ stage: 'cleaning up', total: 100, counts: { ...counts, present: 1 }, elapsedMs: 13_000 });
  assert.equal(logged, '37/100 ready, 12 s (52 scheduled, 45 started)\ncleaning up: 1 pod left\n');
  assert.equal(progressText({ stage: 'creating', total: 100, counts: { ...counts, created: 12 }, elapsedMs: 400 }), 'creating: 12/100 pods created, 0 s');
});
