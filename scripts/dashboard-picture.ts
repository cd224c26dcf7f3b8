// Renders docs/dashboard.png: a picture of what ships for Prometheus and Grafana, drawn from
// manifests/dashboard/node-tuning-advisor.json (each panel at its gridPos, with its type, title
// and queries) and manifests/prometheus/alerts.yaml (each alert with its for, severity and
// expression). It is the layout, not a screenshot of live data: Grafana is not run here.
// Needs headless Chromium (Debian: chromium-headless-shell). Run: npm run docs:dashboard.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { parse } from 'yaml';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const DASHBOARD = path.join(ROOT, 'manifests/dashboard/node-tuning-advisor.json');
export const ALERTS = path.join(ROOT, 'manifests/prometheus/alerts.yaml');
export const PICTURE = path.join(ROOT, 'docs/dashboard.png');
export const PICTURE_WIDTH = 1400;
export const PICTURE_HEIGHT = 1600;
const ROW_PX = 30;

interface Panel { type: string; title: string; gridPos: { x: number; y: number; w: number; h: number }; targets?: { expr: string; legendFormat?: string }[] }
interface Alert { alert?: string; expr: string; for?: string; labels?: Record<string, string> }

const escape = (text: string): string => text.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c] as string);

export function pictureHtml(dashboard: { title: string; panels: Panel[] }, alerts: Alert[]): string {
  const rows = Math.max(...dashboard.panels.map((p) => p.gridPos.y + p.gridPos.h));
  const panels = dashboard.panels.map((p) => `<section class="panel" style="grid-column:${p.gridPos.x + 1}/span ${p.gridPos.w};grid-row:${p.gridPos.y + 1}/span ${p.gridPos.h}">
  <h2>${escape(p.title)} <span class="type">${escape(p.type)}</span></h2>
  ${(p.targets ?? []).map((t) => `<code>${escape(t.expr)}</code>${t.legendFormat ? `<span class="legend">legend ${escape(t.legendFormat)}</span>` : ''}`).join('\n  ')}
</section>`).join('\n');
  const alertRows = alerts.filter((a) => a.alert).map((a) => `<tr><td>${escape(a.alert as string)}</td><td>${escape(a.labels?.severity ?? '')}</td><td>${escape(a.for ?? '')}</td><td><code>${escape(a.expr.trim())}</code></td></tr>`).join('\n');
  return `<!doctype html><meta charset="utf-8"><style>
body{margin:0;padding:16px;background:#111217;color:#d8d9da;font:13px "DejaVu Sans",sans-serif;width:${PICTURE_WIDTH - 32}px}
h1{font-size:18px;margin:0 0 4px} p.note{margin:0 0 12px;color:#9fa1a6}
.grid{display:grid;grid-template-columns:repeat(24,1fr);grid-template-rows:repeat(${rows},${ROW_PX}px);gap:8px}
.panel{background:#181b1f;border:1px solid #2c3235;border-radius:3px;padding:8px;overflow:hidden}
h2{font-size:14px;margin:0 0 8px} .type{font-weight:normal;color:#6e9fff;font-size:11px;margin-left:6px}
code{display:block;font:11px "DejaVu Sans Mono",monospace;color:#b0d98c;white-space:pre-wrap;margin:0 0 4px}
.legend{display:block;color:#9fa1a6;font-size:11px;margin:-2px 0 6px}
table{border-collapse:collapse;margin-top:16px;width:100%} td,th{border-bottom:1px solid #2c3235;padding:4px 8px;text-align:left;vertical-align:top}
th{color:#9fa1a6;font-weight:normal}
</style>
<h1>Grafana: ${escape(dashboard.title)} — the shipped dashboard's panels and queries</h1>
<p class="note">Drawn from manifests/dashboard/node-tuning-advisor.json (panel grid as Grafana lays it out) and manifests/prometheus/alerts.yaml; layout and queries, not live data.</p>
<div class="grid">
${panels}
</div>
<table><tr><th>alert</th><th>severity</th><th>for</th><th>expression</th></tr>
${alertRows}
</table>
`;
}

export async function renderedHtml(): Promise<string> {
  const dashboard = JSON.parse(await readFile(DASHBOARD, 'utf8'));
  const alerts = (parse(await readFile(ALERTS, 'utf8')) as { groups: { rules: Alert[] }[] }).groups.flatMap((g) => g.rules);
  return pictureHtml(dashboard, alerts);
}

/** Writes the picture to `out` (default docs/dashboard.png) with the headless browser at `browser`. */
export async function renderPicture(browser: string, out = PICTURE): Promise<void> {
  const dir = await mkdtemp(path.join(tmpdir(), 'nta-dashboard-'));
  try {
    const page = path.join(dir, 'dashboard.html');
    await writeFile(page, await renderedHtml());
    await promisify(execFile)(browser, ['--no-sandbox', '--disable-gpu', '--hide-scrollbars', `--window-size=${PICTURE_WIDTH},${PICTURE_HEIGHT}`,
      `--screenshot=${out}`, `file://${page}`], { timeout: 60_000 });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export async function main(): Promise<void> {
  await renderPicture(process.env.CHROMIUM ?? '/usr/bin/chromium-headless-shell');
  process.stdout.write(`${path.relative(ROOT, PICTURE)} from ${path.relative(ROOT, DASHBOARD)} and ${path.relative(ROOT, ALERTS)}\n`);
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
