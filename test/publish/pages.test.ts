// The HTML pages as text (the browser checks are in pages-browser.test.ts): every string escaped,
// whatever the API server or a saved file carries; no script and nothing fetched; one row per pod,
// each bar's segments adding up to the pod's total; the page bounded whatever the file holds.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { html, escapeHtml, trusted } from '../../src/text/html.ts';
import { MAX_WATERFALL_PODS, SEGMENTS, histogram, spread, waterfall } from '../../src/measure/waterfall.ts';
import { renderMeasurementPage } from '../../src/publish/measure-page.ts';
import { renderClusterPage } from '../../src/publish/cluster-page.ts';
import type { ClusterReport } from '../../src/cluster/report.ts';
import { compareMeasurements } from '../../src/measure/compare.ts';
import { changeRows, comparisonSummary, headline } from '../../src/publish/measure-view.ts';
import { renderAnnotations } from '../../src/wire/annotations.ts';
import { runCli } from '../helpers/cli.ts';
import { startCluster } from '../helpers/cluster-fixture.ts';
import { HOSTILE, MEASUREMENTS, saved } from '../helpers/pages.ts';
import { finding, report } from '../helpers/reports.ts';

const FIXTURES = MEASUREMENTS;

/** The elements and attributes the pages are built of: nothing that runs, loads or embeds. */
const ELEMENTS = new Set(['html', 'head', 'meta', 'title', 'style', 'body', 'h1', 'h2', 'h3', 'p', 'b', 'div', 'span', 'section', 'ul', 'li',
  'table', 'thead', 'tbody', 'tr', 'th', 'td', 'code', 'pre', 'a', 'svg', 'rect', 'line', 'text']);
const ATTRIBUTES = new Set(['lang', 'charset', 'name', 'content', 'class', 'style', 'id', 'href', 'data-pod', 'data-run', 'data-node', 'viewBox',
  'preserveAspectRatio', 'role', 'aria-label', 'aria-hidden', 'x', 'y', 'x1', 'x2', 'y1', 'y2', 'width', 'height', 'fill', 'fill-opacity', 'stroke',
  'stroke-width', 'stroke-dasharray', 'opacity', 'font-size', 'text-anchor']);

/** A page's own markup holds no script, no event handler, nothing fetched: only known elements and attributes, links within the page. */
function assertInert(page: string): void {
  for (const [, name, attrs] of page.matchAll(/<([a-zA-Z][\w-]*)((?:\s+[^\s=>]+(?:="[^"]*")?)*)\s*\/?>/g)) {
    assert.ok(ELEMENTS.has((name as string).toLowerCase()), `element <${name}>`);
    for (const [, attr, value] of (attrs as string).matchAll(/\s([^\s=>]+)(?:="([^"]*)")?/g)) {
      assert.ok(ATTRIBUTES.has(attr as string), `attribute ${attr} on <${name}>`);
      if (attr === 'href') assert.match(value as string, /^#/, 'links stay in the page');
    }
  }
  assert.doesNotMatch(page, /@import|url\(/i);
}

/** Every occurrence of a hostile string's dangerous part, escaped. */
function assertEscaped(page: string): void {
  assertInert(page);
  assert.ok(page.includes('&lt;img src=x onerror=&quot;console.error(&#39;ran&#39;)&quot;&gt;'), 'the hostile text is there, escaped');
  assert.ok(!page.includes('\u202e'), 'the bidi override is removed');
}

test('html escapes every value it is given; only its own markup passes', () => {
  const name = '<b>"x" & \'y\'</b>';
  assert.equal(escapeHtml(name), '&lt;b&gt;&quot;x&quot; &amp; &#39;y&#39;&lt;/b&gt;');
  assert.equal(html`<p title="${name}">${[name, 1, null, undefined, false]}${trusted('<br>')}</p>`.text,
    '<p title="&lt;b&gt;&quot;x&quot; &amp; &#39;y&#39;&lt;/b&gt;">&lt;b&gt;&quot;x&quot; &amp; &#39;y&#39;&lt;/b&gt;1<br></p>');
  assert.equal(escapeHtml('a\u202eb\u0007c\n'), 'abc\n', 'control characters (bidi included) removed, newline kept');
  assert.equal(html`${NaN}|${Infinity}|${2.5}`.text, '||2.5');
});

test('a real run\'s waterfall: each row\'s segments are consecutive, end at its total, the status write as the run measured it', async () => {
  const m = await saved('hollow-5-10.json');
  const view = waterfall(m.samples);
  assert.equal(view.rows.length, m.samples.length);
  assert.deepEqual(view.rows.map((r) => r.totalMs), m.samples.map((s) => s.phases.total).sort((a, b) => a - b), 'fastest first');
  for (const row of view.rows) {
    const sample = m.samples.find((s) => s.pod === row.pod)!;
    const ends = SEGMENTS.map((s) => row.ends[s]);
    assert.deepEqual(ends, [...ends].sort((a, b) => a - b), `${row.pod}: segments in order`);
    assert.equal(row.ends.statusDelay, row.totalMs);
    assert.ok(Math.abs(row.ends.statusDelay - row.ends.readiness - (sample.statusDelayMs as number)) <= 3, `${row.pod}: the status write is the run's own (rounding aside)`);
    for (const at of Object.values(row.ticks)) assert.ok(at >= 0 && at <= row.totalMs, `${row.pod}: milestones inside the bar`);
    assert.ok(row.ticks.sandbox !== undefined && row.ticks.containersReady !== undefined, `${row.pod}: the run recorded both milestones`);
  }
  assert.ok(view.rows.some((r) => r.ends.statusDelay - r.ends.readiness > 10_000), 'at 5/10 the status write is most of the wait');
});

test('the measure page: one data-pod row per pod in each run, the terminal\'s verdict, both runs on one scale', async () => {
  const before = await saved('hollow-5-10.json');
  const after = await saved('hollow-50-100.json');
  const page = renderMeasurementPage([{ label: 'before.json', measurement: before }, { label: 'after.json', measurement: after }], compareMeasurements(before, after));
  assertInert(page);
  for (const [run, m] of [['before', before], ['after', after]] as const) {
    const section = page.slice(page.indexOf(`data-run="${run}"`)).split('</section>')[0] as string;
    assert.deepEqual([...section.matchAll(/data-pod="([^"]*)"/g)].map((x) => x[1]).sort(), m.samples.map((s) => s.pod).sort(), run);
  }
  // The terminal view's own lines, escaped: the verdict, each row of the comparison, the noise floor and the credit.
  const c = compareMeasurements(before, after);
  for (const line of [...headline(before), ...headline(after), ...comparisonSummary(c)]) assert.ok(page.includes(`${escapeHtml(line)}</`), line);
  for (const row of changeRows(c)) assert.ok(page.includes(row.map((cell) => escapeHtml(cell)).join('</td><td>').replace(/<td>(improved|worse|mixed|unchanged|not comparable)$/, '<td><span class="$1">$1</span>')), row.join(' | '));
  // What the seeds' before/after says on a real kubelet: the status write is the 5/10 run's largest phase, and it and the total improved.
  assert.equal(before.slo.largestPhase, 'statusDelay');
  assert.match(page, /SLO p99 creation → Ready &lt; 5 s: MISSED \(p99 [\d.]+ s; largest phase: statusDelay\)/);
  assert.deepEqual(['statusDelay', 'total'].map((p) => c.phases.find((x) => x.phase === p)?.verdict), ['improved', 'improved']);
  assert.match(c.credit ?? '', /with the kubelet's client limits 5\/10 → 50\/100, the only recorded setting that changed/);
});

test('hostile names from the API server or a saved file render as text', async () => {
  const m = await saved('hollow-50-100.json');
  m.node = HOSTILE;
  m.settings.image = HOSTILE;
  m.samples[0]!.pod = HOSTILE;
  m.notReady = [{ reason: HOSTILE, pods: 1, example: HOSTILE }];
  m.advisor.facts['cpu.governor'] = { value: HOSTILE, from: HOSTILE };
  const page = renderMeasurementPage([{ label: HOSTILE, measurement: m }]);
  assertEscaped(page);
  assert.ok(page.includes(`data-pod="&lt;img src=x onerror=&quot;console.error(&#39;ran&#39;)&quot;&gt;&quot;&#39;&amp;"`), 'inside the attribute too');
});

test('above 1 000 pods the waterfall draws 1 000 spread over the totals (fastest and slowest kept); the distribution counts all', async () => {
  const m = await saved('hollow-50-100.json');
  const many = Array.from({ length: 5000 }, (_, i) => ({ ...m.samples[i % m.samples.length]!, pod: `pod-${i}`, phases: { ...m.samples[0]!.phases, total: 1000 + i } }));
  assert.deepEqual(spread([1, 2, 3, 4, 5], 3), [1, 3, 5]);
  const view = waterfall(many);
  assert.equal(view.rows.length, MAX_WATERFALL_PODS);
  assert.deepEqual([view.rows[0]?.pod, view.rows.at(-1)?.pod], ['pod-0', 'pod-4999']);
  assert.equal(histogram(many.map((s) => s.phases.total), 250, 6000).reduce((a, b) => a + b, 0), 5000);
  const page = renderMeasurementPage([{ label: 'big.json', measurement: { ...m, samples: many } }]);
  assert.equal([...page.matchAll(/data-pod="/g)].length, MAX_WATERFALL_PODS);
  assert.match(page, /1000 of 5000 Ready pods drawn/);
  assert.ok(page.length < 2_000_000, `${page.length} bytes`);
});

test('measure show: saved runs rendered again (the earlier one is before, whatever the order), the page written; a bad sample names its field', async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'nta-show-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const [before, after] = [path.join(FIXTURES, 'hollow-5-10.json'), path.join(FIXTURES, 'hollow-50-100.json')];
  const out = path.join(dir, 'page.html');
  const shown = await runCli(['measure', 'show', after, '--compare', before, '--html', out]);
  assert.equal(shown.code, 0, shown.stderr);
  assert.match(shown.stdout, /Before → after \(before: hollow-5-10\.json, 2026-/);
  assert.match(shown.stdout, /^total +p50 +[\d.]+ s → [\d.]+ (m?s) +-[\d.]+ m?s -\d+% +improved$/m);
  const page = await readFile(out, 'utf8');
  assert.ok(page.indexOf('data-run="before"') < page.indexOf('data-run="after"'));
  assert.match(page.slice(page.indexOf('data-run="before"'), page.indexOf('data-run="after"')), /hollow-5-10\.json: 100 pods/);
  const json = JSON.parse((await runCli(['measure', 'show', before, '-o', 'json'])).stdout);
  assert.equal(json.samples.length, 100);
  const bad = JSON.parse(await readFile(before, 'utf8'));
  bad.samples[3].phases.total = 'soon';
  await writeFile(path.join(dir, 'bad.json'), JSON.stringify(bad));
  const refused = await runCli(['measure', 'show', path.join(dir, 'bad.json'), '--html', out]);
  assert.equal(refused.code, 2);
  assert.match(refused.stderr, /measure show .*bad\.json: samples\[3\]\.phases\.total is not a number of milliseconds\n$/);
});

test('report --output html: the fleet, the worst nodes with the fix, every rule named links to its explanation; what agents wrote is text', async (t) => {
  const server = await startCluster();
  t.after(() => server.stop());
  // An agent's observed text comes from the host: a hostile one on a Node.
  server.addNode('worker-9', renderAnnotations(report([finding('kernel-tick-rate', 'fail', { observed: HOSTILE, scoreImpact: 50 })])));
  const run = await runCli(['report', '--output', 'html', '--kubeconfig', server.writeKubeconfig(), '--fail-on', 'never']);
  assert.equal(run.code, 0, run.stderr);
  const page = run.stdout;
  assertEscaped(page);
  assert.deepEqual([...page.matchAll(/data-node="([^"]+)"/g)].map((m) => m[1]).sort(), ['cp-1', 'cp-2', 'cp-3', 'worker-1', 'worker-2', 'worker-3', 'worker-9']);
  const links = new Set([...page.matchAll(/href="#rule-([^"]+)"/g)].map((m) => decodeURIComponent(m[1] as string)));
  const targets = new Set([...page.matchAll(/id="rule-([^"]+)"/g)].map((m) => m[1]));
  assert.deepEqual(links, targets, 'each explanation is linked and each link has its explanation');
  assert.ok(['etcd-fsync-latency', 'kernel-tick-rate'].every((r) => targets.has(r)), [...targets].join());
  assert.match(page, /kernel-tick-rate<\/code><\/a>: &lt;img[^<]*— <b>fix<\/b>: boot a kernel built with CONFIG_HZ_1000=y/, 'the finding and the fix on the node\'s row');
  assert.match(page, /grade F: <b>\d+<\/b>/);
});

test('report --output html: a stale node says so, its last grade apart from the current ones', async (t) => {
  const server = await startCluster();
  t.after(() => server.stop());
  const json = await runCli(['report', '--output', 'json', '--kubeconfig', server.writeKubeconfig(), '--fail-on', 'never']);
  const report = { rest: [], ...JSON.parse(json.stdout) } as ClusterReport; // the JSON stream lists every node, so has no groups
  const row = report.nodes.find((n) => n.name === 'worker-1')!;
  row.heartbeat = { state: 'stale', ageSeconds: 1860, staleAfterSeconds: 900, reason: 'no renewal for 31 min' };
  report.summary = { ...report.summary, stale: 1, withAgent: report.summary.withAgent - 1, heartbeats: { namespace: 'node-tuning-advisor', leases: 3 } };
  const page = renderClusterPage(report);
  assert.match(page, /<tr data-node="worker-1">.*<b>STALE: last heartbeat 31 min ago<\/b>; what its agent last published:/);
  assert.match(page, /stale \(no heartbeat\): <b>1<\/b>/);
  assert.match(page, /stale: no heartbeat from the node&#39;s agent for over 3 periods \(Leases in node-tuning-advisor\)/);
});

