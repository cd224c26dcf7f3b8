// docs/dashboard.png is drawn from what ships (issue 24): the dashboard's panels at their grid
// positions with their queries, and the alerts; rendered again here with real headless Chromium.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';
import { requireTool } from '../helpers/tools.ts';
import { ALERTS, DASHBOARD, PICTURE, PICTURE_HEIGHT, PICTURE_WIDTH, renderPicture, renderedHtml } from '../../scripts/dashboard-picture.ts';

/** Width and height from a PNG's IHDR chunk. */
function pngSize(data: Buffer): { width: number; height: number } {
  assert.deepEqual([...data.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'a PNG');
  assert.equal(data.subarray(12, 16).toString('latin1'), 'IHDR');
  return { width: data.readUInt32BE(16), height: data.readUInt32BE(20) };
}

test('the picture names every panel, query and alert that ships', async () => {
  const html = await renderedHtml();
  const dashboard = JSON.parse(await readFile(DASHBOARD, 'utf8')) as { panels: { title: string; targets?: { expr: string }[] }[] };
  const escape = (t: string) => t.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
  for (const panel of dashboard.panels) {
    assert.ok(html.includes(escape(panel.title)), panel.title);
    for (const target of panel.targets ?? []) assert.ok(html.includes(escape(target.expr)), target.expr);
  }
  const alerts = (parse(await readFile(ALERTS, 'utf8')) as { groups: { rules: { alert?: string }[] }[] }).groups.flatMap((g) => g.rules).filter((r) => r.alert);
  for (const alert of alerts) assert.ok(html.includes(`<td>${alert.alert}</td>`), alert.alert);
  assert.deepEqual(pngSize(await readFile(PICTURE)), { width: PICTURE_WIDTH, height: PICTURE_HEIGHT });
});

test('headless Chromium renders it (npm run docs:dashboard after changing the dashboard or the alerts)', async (t) => {
  const chromium = requireTool(t, 'chromium-headless-shell', 'chromium-headless-shell');
  if (!chromium) return;
  const dir = await mkdtemp(path.join(tmpdir(), 'nta-picture-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const out = path.join(dir, 'dashboard.png');
  await renderPicture(chromium, out);
  const data = await readFile(out);
  assert.deepEqual(pngSize(data), { width: PICTURE_WIDTH, height: PICTURE_HEIGHT });
  assert.ok(data.length > 50_000, `a picture with content, not a blank page (${data.length} bytes)`);
});
