// `measure … --html FILE`: the run as a page (seed 000's method is a timeline). The verdict in the
// terminal view's own words, the phase table, the distribution of total start-up against the 5 s
// SLO, and a waterfall with one row per pod (`data-pod`), each phase its own colour and the
// kubelet's status write its own segment. With --compare both runs are drawn on one scale, their
// distributions overlaid, and each phase's change and the credit as the terminal view words them.
import type { Comparison } from '../measure/compare.ts';
import type { Measurement } from '../measure/result.ts';
import { MAX_WATERFALL_PODS, SEGMENTS, TICKS, binWidthMs, histogram, waterfall, type Segment, type Tick, type Waterfall, type WaterfallRow } from '../measure/waterfall.ts';
import { html, trusted, type Markup } from '../text/html.ts';
import { ATTACH_HEADER, CHANGE_HEADER, attachRows, changeRows, comparisonSummary, factsLines, footer, formatMs, headline, phaseRows } from './measure-view.ts';
import { COLOURS, coord, page, table } from './page.ts';

/** One run on the page: its measurement and what to call it ("before.json", "this run"). */
export interface PageRun {
  label: string;
  measurement: Measurement;
}

const SEGMENT_COLOUR: Record<Segment, string> = {
  scheduling: COLOURS.blue, initialization: COLOURS.sky, creation: COLOURS.green, readiness: COLOURS.orange, statusDelay: COLOURS.vermillion,
};
const SEGMENT_TEXT: Record<Segment, string> = {
  scheduling: 'create request → scheduled',
  initialization: 'scheduled → initialized',
  creation: 'initialized → containers started',
  readiness: 'started → Ready, as the kubelet stamped it',
  statusDelay: 'the status write: the kubelet\'s Ready stamp → Ready seen by the watch',
};
const TICK_COLOUR: Record<Tick, string> = { sandbox: COLOURS.ink, containersReady: COLOURS.purple };
const TICK_TEXT: Record<Tick, string> = { sandbox: 'sandbox ready', containersReady: 'containers ready' };
/** Width of the bar coordinates (SVG units); the scale's end. */
const BAR_UNITS = 1000;

const STYLE = trusted(`
.runs{display:grid;grid-template-columns:repeat(auto-fit,minmax(360px,1fr));gap:12px}
.waterfall{margin:6px 0 18px}
.pod,.axis{display:grid;grid-template-columns:190px 1fr 64px;gap:8px;align-items:center}
.pod{font-size:11px;line-height:13px;min-height:13px} .pod:nth-child(even){background:#f6f6f6}
.pod-total{text-align:right;font-variant-numeric:tabular-nums}
.bar{display:block;width:100%;height:10px}
.axis{font-size:11px;color:#555}
`);

/** The scale both runs share: the slowest pod, and the SLO line always inside it. */
function scaleMs(runs: PageRun[]): number {
  const slowest = Math.max(0, ...runs.map((r) => Math.max(0, ...r.measurement.samples.map((s) => s.phases.total))));
  return Math.max(slowest, ...runs.map((r) => r.measurement.slo.thresholdMs * 1.05), 1);
}

const x = (ms: number, scale: number): string => coord((Math.max(0, ms) / scale) * BAR_UNITS);

function segmentRects(row: WaterfallRow, scale: number): Markup[] {
  let start = 0;
  return SEGMENTS.map((segment) => {
    const end = row.ends[segment];
    const rect = end > start
      ? html`<rect x="${x(start, scale)}" width="${coord(Math.max(0.5, ((end - start) / scale) * BAR_UNITS))}" height="10" fill="${SEGMENT_COLOUR[segment]}"><title>${segment} ${formatMs(end - start)}</title></rect>`
      : html``;
    start = end;
    return rect;
  });
}

function podRow(row: WaterfallRow, scale: number, sloMs: number): Markup {
  const ticks = TICKS.filter((t) => row.ticks[t] !== undefined).map((t) =>
    html`<rect x="${x(row.ticks[t] as number, scale)}" width="2" height="${t === 'sandbox' ? 10 : 5}" fill="${TICK_COLOUR[t]}"><title>${TICK_TEXT[t]} at ${formatMs(row.ticks[t] as number)}</title></rect>`);
  const list = row.readyFromList ? ' (Ready found by a LIST)' : '';
  return html`<div class="pod" data-pod="${row.pod}"><span class="pod-name">${row.pod}</span><svg class="bar" viewBox="0 0 ${BAR_UNITS} 10" preserveAspectRatio="none" role="img" aria-label="${row.pod}: ${formatMs(row.totalMs)}${list}">${segmentRects(row, scale)}${ticks}<rect x="${x(sloMs, scale)}" width="1.5" height="10" fill="${COLOURS.ink}" opacity="0.5"/></svg><span class="pod-total">${formatMs(row.totalMs)}</span></div>\n`;
}

/** Round steps for the axes: about `count` of them up to `maxMs`. */
function ticksMs(maxMs: number, count: number): number[] {
  const step = binWidthMs(maxMs, count);
  return Array.from({ length: Math.floor(maxMs / step) + 1 }, (_, i) => i * step);
}

/** A tick label stays inside its picture: the first starts at its tick, one near the end ends there. */
function anchor(ms: number, scale: number): string {
  return ms === 0 ? 'start' : ms / scale > 0.95 ? 'end' : 'middle';
}

function axis(scale: number): Markup {
  const labels = ticksMs(scale, 10).map((ms) => html`<text x="${x(ms, scale)}" y="13" font-size="12" text-anchor="${anchor(ms, scale)}">${formatMs(ms)}</text>`);
  return html`<div class="axis" aria-hidden="true"><span>pod</span><svg class="chart" viewBox="0 0 ${BAR_UNITS} 16">${labels}</svg><span class="pod-total">total</span></div>`;
}

function legend(): Markup {
  const segments = SEGMENTS.map((s) => html`<li><span class="swatch" style="background:${SEGMENT_COLOUR[s]}"></span><b>${s}</b>: ${SEGMENT_TEXT[s]}</li>`);
  const ticks = TICKS.map((t) => html`<li><span class="swatch" style="background:${TICK_COLOUR[t]};width:3px"></span>${TICK_TEXT[t]}</li>`);
  return html`<ul class="legend">${segments}${ticks}<li><span class="swatch" style="background:${COLOURS.ink};opacity:.5;width:2px"></span>the SLO, 5 s</li></ul>`;
}

function waterfallSection(run: PageRun, view: Waterfall, scale: number, which: string): Markup {
  const m = run.measurement;
  const shown = view.rows.length < view.pods
    ? html`<p class="note">${view.rows.length} of ${view.pods} Ready pods drawn (a run creates at most ${MAX_WATERFALL_PODS}): pods spread evenly over the totals, the fastest and the slowest included; the distribution above counts all ${view.pods}.</p>`
    : '';
  const missing = m.counts.created - m.counts.ready > 0 ? html`<p class="note">${m.counts.created - m.counts.ready} of ${m.counts.created} pods never became Ready: no bar (listed under "Not Ready").</p>` : '';
  const largest = m.slo.largestPhase ? `; largest phase: ${m.slo.largestPhase}` : '';
  return html`<section class="waterfall" data-run="${which}"><h3>${run.label}: ${view.pods} pods, one row each, fastest first${largest}</h3>${legend()}${shown}${missing}${axis(scale)}
<div class="rows">
${view.rows.map((row) => podRow(row, scale, m.slo.thresholdMs))}</div></section>`;
}

function verdictBox(run: PageRun): Markup {
  const m = run.measurement;
  const [first, ...rest] = headline(m);
  const ok = m.slo.met && (m.validity?.valid ?? true) && m.outcome === 'complete';
  return html`<div class="verdict ${ok ? 'good' : 'bad'}"><p><b>${run.label}</b></p><p><b>${first}</b></p>${rest.map((l) => html`<p>${l}</p>`)}</div>`;
}

/** Overlaid histograms of the total, one per run, with the SLO and each run's p50 and p99. */
function distribution(runs: PageRun[], scale: number): Markup {
  const bin = binWidthMs(scale, 50);
  const [w, h, left, bottom] = [BAR_UNITS, 200, 40, 20];
  const counts = runs.map((r) => histogram(r.measurement.samples.map((s) => s.phases.total), bin, scale));
  const top = Math.max(1, ...counts.flat());
  const px = (ms: number) => left + (ms / scale) * (w - left);
  const styles = runs.length > 1 ? [`fill="#d0d0d0" stroke="${COLOURS.grey}" stroke-width="1.5"`, `fill="${COLOURS.blue}" fill-opacity="0.75"`] : [`fill="${COLOURS.blue}" fill-opacity="0.75"`];
  const bars = counts.map((c, r) => c.map((n, i) => (n === 0 ? '' : html`<rect x="${coord(px(i * bin))}" y="${coord(h - bottom - (n / top) * (h - bottom - 8))}" width="${coord(Math.max(1, px(bin) - px(0) - 1))}" height="${coord((n / top) * (h - bottom - 8))}" ${trusted(styles[r] as string)}><title>${runs[r]?.label}: ${n} pods ${formatMs(i * bin)}–${formatMs((i + 1) * bin)}</title></rect>`)));
  const lines = runs.flatMap((r, i) => [['p50', r.measurement.phases.total.p50Ms], ['p99', r.measurement.phases.total.p99Ms]].map(([name, ms]) => (ms === null ? ''
    : html`<line x1="${coord(px(ms as number))}" x2="${coord(px(ms as number))}" y1="4" y2="${h - bottom}" stroke="${i === runs.length - 1 ? COLOURS.blue : COLOURS.grey}" stroke-width="2" stroke-dasharray="${name === 'p50' ? '2 3' : '8 3'}"><title>${r.label} ${name} ${formatMs(ms as number)}</title></line>`)));
  const slo = runs[0]?.measurement.slo.thresholdMs ?? 5000;
  const xLabels = ticksMs(scale, 10).map((ms) => html`<text x="${coord(px(ms))}" y="${h - 4}" font-size="12" text-anchor="${ms === 0 ? 'middle' : anchor(ms, scale)}">${formatMs(ms)}</text>`);
  const keys = runs.map((r, i) => html`<li><span class="swatch" style="${trusted(runs.length > 1 && i === 0 ? `background:#d0d0d0;border:1px solid ${COLOURS.grey}` : `background:${COLOURS.blue}`)}"></span>${r.label}: p50 ${formatMs(r.measurement.phases.total.p50Ms)} (dotted), p99 ${formatMs(r.measurement.phases.total.p99Ms)} (dashed), ${r.measurement.samples.length} pods</li>`);
  return html`<svg class="chart" viewBox="0 0 ${w} ${h}" role="img" aria-label="distribution of total start-up">
<line x1="${left}" x2="${w}" y1="${h - bottom}" y2="${h - bottom}" stroke="#999"/><text x="2" y="14" font-size="12">${top}</text><text x="2" y="${h - bottom}" font-size="12">0</text>
${bars}${lines}<line x1="${coord(px(slo))}" x2="${coord(px(slo))}" y1="0" y2="${h - bottom}" stroke="${COLOURS.vermillion}" stroke-width="3"><title>SLO ${formatMs(slo)}</title></line>${xLabels}</svg>
<ul class="legend">${keys}<li><span class="swatch" style="background:${COLOURS.vermillion}"></span>the SLO: p99 under ${formatMs(slo)}</li></ul>
<p class="note">Pods per ${formatMs(bin)} of total start-up (create request → Running and Ready received); bin width ${formatMs(bin)}.</p>`;
}

const lower = (header: string[]): string[] => header.map((h) => h.toLowerCase());

function phaseTable(run: PageRun): Markup {
  const m = run.measurement;
  const attach = m.attach ? table(lower(ATTACH_HEADER), attachRows(m), 1) : '';
  return html`<div><h3>${run.label}: phases</h3>${table(['phase', 'p50', 'p90', 'p99', 'max', 'pods'], phaseRows(m), 1)}${attach}</div>`;
}

function comparisonSection(c: Comparison): Markup {
  const verdict = CHANGE_HEADER.indexOf('VERDICT');
  const rows = changeRows(c).map((row) => row.map((cell, i) => (i === verdict && cell ? html`<span class="${cell.replace(/ /g, '-')}">${cell}</span>` : cell)));
  return html`<h2>Before → after</h2>${table(lower(CHANGE_HEADER), rows)}
${comparisonSummary(c).map((line) => html`<p>${line}</p>`)}`;
}

function nodeSection(run: PageRun): Markup {
  const m = run.measurement;
  const notReady = [...m.notReady.map((g) => `${g.pods} × ${g.reason}${g.example ? ` (${g.example})` : ''}`), ...m.createErrors.map((g) => `${g.pods} × not created: ${g.reason}`)];
  return html`<h3>${run.label}</h3>${factsLines(m, Infinity).map((l) => html`<p>${l.trim()}</p>`)}
${notReady.length > 0 ? html`<p><b>Not Ready (${m.counts.notReady}) or not created (${m.counts.failedToCreate})</b></p><ul>${notReady.map((l) => html`<li>${l}</li>`)}</ul>` : ''}
<p class="note">${footer(m)}</p>`;
}

/** The page for one run, or for two (`runs` = [before, after] with their comparison). */
export function renderMeasurementPage(runs: PageRun[], comparison?: Comparison): string {
  const last = runs.at(-1) as PageRun;
  const scale = scaleMs(runs);
  const which = runs.length > 1 ? ['before', 'after'] : ['run'];
  const title = `Pod start-up on ${last.measurement.node}${runs.length > 1 ? ': before → after' : ''}`;
  return page(title, STYLE, html`<h1>${title}</h1>
<div class="runs">${runs.map(verdictBox)}</div>
<h2>Total start-up, against the SLO</h2>${distribution(runs, scale)}
${comparison ? comparisonSection(comparison) : ''}
<h2>Phases</h2><div class="runs">${runs.map(phaseTable)}</div>
<h2>Each pod</h2>
${runs.map((run, i) => waterfallSection(run, waterfall(run.measurement.samples), scale, which[i] as string))}
<h2>The node when measured</h2>${runs.map(nodeSection)}`);
}
