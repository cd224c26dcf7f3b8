// The shell of the HTML pages (`measure … --html`, `report --output html`): one self-contained file
// an operator attaches to a ticket. No script, no fetch, no font or image from anywhere: the style
// sheet is inline, the pictures are inline SVG, and everything reads the same on paper. Laid out for
// a 1 280 px window (nothing wider), long names wrap instead of being cut.
import { html, trusted, type HtmlValue, type Markup } from '../text/html.ts';

/** Colour-blind-safe (Okabe–Ito) colours; every picture also says its values in text. */
export const COLOURS = {
  blue: '#0072B2', sky: '#56B4E9', green: '#009E73', orange: '#E69F00', vermillion: '#D55E00', purple: '#CC79A7', yellow: '#F0E442',
  grey: '#8c8c8c', ink: '#1b1b1b',
} as const;

const STYLE = trusted(`
*{box-sizing:border-box}
html{-webkit-print-color-adjust:exact;print-color-adjust:exact}
body{margin:0 auto;padding:16px 24px;max-width:1240px;background:#fff;color:${COLOURS.ink};font:14px/1.4 "DejaVu Sans","Liberation Sans",Arial,sans-serif;overflow-wrap:anywhere}
h1{font-size:22px;margin:0 0 8px} h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #ccc;padding-bottom:2px} h3{font-size:15px;margin:16px 0 6px}
p{margin:4px 0} code,pre{font:12px/1.35 "DejaVu Sans Mono","Liberation Mono",monospace} pre{white-space:pre-wrap;background:#f4f4f4;padding:6px 8px;margin:4px 0}
table{border-collapse:collapse;margin:6px 0;max-width:100%} th,td{border-bottom:1px solid #ddd;padding:3px 10px 3px 0;text-align:left;vertical-align:top}
th{font-weight:600;color:#444;white-space:nowrap} td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
.verdict{border-left:6px solid;padding:6px 12px;margin:8px 0;background:#f7f7f7} .verdict p{margin:2px 0}
.good{border-color:${COLOURS.green}} .bad{border-color:${COLOURS.vermillion}} .note{color:#555}
.tag{display:inline-block;padding:0 6px;border-radius:3px;color:#fff;font-size:12px;font-weight:600}
.critical{background:${COLOURS.vermillion}} .warning{background:${COLOURS.orange};color:#000} .info{background:${COLOURS.sky};color:#000}
.improved{color:#006b4f;font-weight:600} .worse{color:#a33b00;font-weight:600} .mixed{color:#7a4f00;font-weight:600}
.legend{display:flex;flex-wrap:wrap;gap:4px 18px;margin:6px 0;padding:0;list-style:none}
.swatch{display:inline-block;width:14px;height:10px;margin-right:5px;vertical-align:baseline}
.chart{display:block;width:100%;height:auto;margin:4px 0}
a{color:#0b5394}
.rule-doc{border:1px solid #ddd;padding:6px 12px;margin:10px 0;break-inside:avoid}
@media print{body{max-width:none;padding:0;font-size:12px}h2{break-after:avoid}tr,.pod,.rule-doc{break-inside:avoid}a{color:inherit;text-decoration:none}}
`);

/** A whole page: title, style sheet and body. */
export function page(title: string, extraStyle: Markup | undefined, body: HtmlValue): string {
  return `<!doctype html>
${html`<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<meta name="generator" content="node-tuning-advisor">
<title>${title}</title>
<style>${STYLE}${extraStyle}</style></head>
<body>
${body}
</body></html>`}
`;
}

/** A table: header cells, then rows; columns from `numeric` on are right-aligned numbers. */
export function table(header: string[], rows: HtmlValue[][], numericFrom = Infinity, attrs?: (row: number) => Markup, className?: string): Markup {
  const cls = (i: number) => (i >= numericFrom ? trusted(' class="num"') : '');
  return html`<table${className ? html` class="${className}"` : ''}><thead><tr>${header.map((h, i) => html`<th${cls(i)}>${h}</th>`)}</tr></thead>
<tbody>${rows.map((row, r) => html`<tr${attrs?.(r)}>${row.map((cell, i) => html`<td${cls(i)}>${cell}</td>`)}</tr>\n`)}</tbody></table>`;
}

/** A number for SVG coordinates: at most 2 decimals, never NaN. */
export function coord(n: number): string {
  return Number.isFinite(n) ? String(Math.round(n * 100) / 100) : '0';
}
