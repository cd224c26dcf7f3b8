// The pages in a real browser (Debian's headless Chromium, one for this file), opened from disk with
// the network off: no console error, no request, one data-pod row per measured pod in each run,
// no text wider than its box, nothing wider than 1 280 px, and the same when printed (print media on
// an A4-wide page, and a PDF). The measure pages are the saved runs of real hollow-kubelet runs
// (test/fixtures/measurements); the report page is 5 000 nodes on the API stand-in, the report's
// size bound (the real control plane's report page is checked in test/e2e/report.test.ts).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { renderMeasurementPage } from '../../src/publish/measure-page.ts';
import { PAGE_WIDTH, PRINT_WIDTH, PageBrowser, browserMissing, type PageCheck } from '../helpers/browser.ts';
import { runCli } from '../helpers/cli.ts';
import { FakeApiServer } from '../helpers/fake-apiserver.ts';
import { agentAnnotations, type RuleInfo } from '../helpers/fleet-objects.ts';
import { nodeRules } from '../helpers/fleet-cluster.ts';
import { HOSTILE, MEASUREMENTS as FIXTURES, saved } from '../helpers/pages.ts';

const FLEET_NODES = 5000;

/** Everything a page must pass, on screen (1 280 px) or printed (A4 width). */
function assertReadable(check: PageCheck, width: number, what: string): void {
  assert.deepEqual(check.consoleErrors, [], `${what}: console errors`);
  assert.deepEqual(check.requests, [], `${what}: requests attempted with the network off`);
  assert.deepEqual(check.cut, [], `${what}: text wider than its box`);
  assert.ok(check.scrollWidth <= width, `${what}: ${check.scrollWidth} px wide, more than ${width}`);
}

describe('the pages in headless Chromium, from disk, network off', () => {
  let browser: PageBrowser | undefined;
  let dir: string;
  const missing = browserMissing();

  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'nta-pages-'));
    if (!missing) browser = await PageBrowser.launch();
  });
  after(async () => {
    await browser?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  test('measure show before.json --compare after.json --html: one data-pod row per measured pod in each run, readable on screen and on paper', async (t) => {
    if (!browser) return t.skip(missing);
    const out = path.join(dir, 'compare.html');
    const shown = await runCli(['measure', 'show', path.join(FIXTURES, 'hollow-5-10.json'), '--compare', path.join(FIXTURES, 'hollow-50-100.json'), '--html', out]);
    assert.equal(shown.code, 0, shown.stderr);
    const screen = await browser.check(out);
    assertReadable(screen, PAGE_WIDTH, 'screen');
    for (const [run, file] of [['before', 'hollow-5-10.json'], ['after', 'hollow-50-100.json']] as const) {
      const pods = (await saved(file)).samples.map((s) => s.pod).sort();
      assert.deepEqual([...(screen.pods[run] ?? [])].sort(), pods, `${run}: one row per measured pod`);
    }
    assertReadable(await browser.check(out, 'print'), PRINT_WIDTH, 'print');
    const pdf = await browser.pdf(out);
    assert.equal(pdf.subarray(0, 5).toString('latin1'), '%PDF-');
    const pages = pdf.toString('latin1').match(/\/Type\s*\/Page\b/g)?.length ?? 0;
    t.diagnostic(`printed: ${pages} A4 pages, ${pdf.length} bytes`);
    assert.ok(pages >= 2, 'two runs of 100 rows take more than one sheet');
  });

  test('a hostile pod name shows as its characters: no element made of it, nothing run, nothing fetched', async (t) => {
    if (!browser) return t.skip(missing);
    const m = await saved('hollow-50-100.json');
    m.samples[0]!.pod = HOSTILE;
    m.node = HOSTILE;
    const file = path.join(dir, 'hostile.html');
    await writeFile(file, renderMeasurementPage([{ label: HOSTILE, measurement: m }]));
    const check = await browser.check(file);
    // JavaScript is on in this browser: an <img onerror> made of the name would have logged and fetched.
    assertReadable(check, PAGE_WIDTH, 'hostile');
    assert.ok(check.pods.run?.includes(HOSTILE.replace('\u202e', '')), 'the row carries the name as given (the bidi control removed)');
  });

  test(`report --output html over ${FLEET_NODES} nodes: bounded, the worst nodes listed and the rest grouped; readable`, async (t) => {
    if (!browser) return t.skip(missing);
    const server = new FakeApiServer();
    await server.start();
    t.after(() => server.stop());
    const rules: RuleInfo[] = await nodeRules();
    for (let i = 0; i < FLEET_NODES; i++) {
      const cp = i < 3;
      const node = server.addNode(`node-${String(i).padStart(4, '0')}`, i % 97 === 5 ? {} : agentAnnotations(i, cp, rules));
      node.metadata.labels[cp ? 'node-role.kubernetes.io/control-plane' : 'node-role.kubernetes.io/worker'] = '';
    }
    const run = await runCli(['report', '--output', 'html', '--kubeconfig', server.writeKubeconfig(), '--fail-on', 'never']);
    assert.equal(run.code, 0, run.stderr);
    const file = path.join(dir, 'report.html');
    await writeFile(file, run.stdout);
    t.diagnostic(`${FLEET_NODES} nodes: a ${Math.round(run.stdout.length / 1024)} KiB page`);
    assert.ok(run.stdout.length < 200 * 1024, 'the page does not grow with the fleet');
    assert.match(run.stdout, new RegExp(`${FLEET_NODES.toLocaleString('en').replace(',', ' ')} nodes`));
    assert.match(run.stdout, /<h2>Other nodes \(--all lists each one\)<\/h2><ul><li>[\d ]+ nodes grade /);
    assert.equal((run.stdout.match(/data-node="/g) ?? []).length, 20, 'the default --limit');
    for (const media of ['screen', 'print'] as const) assertReadable(await browser.check(file, media), media === 'screen' ? PAGE_WIDTH : PRINT_WIDTH, media);
  });

  test('the checks can fail: cut text, a fetch, a console error and a page too wide are each found', async (t) => {
    if (!browser) return t.skip(missing);
    const file = path.join(dir, 'bad.html');
    await writeFile(file, `<!doctype html><body><p style="width:80px;white-space:nowrap;overflow:hidden">a long line of text that cannot fit</p>
<img src="https://example.invalid/x.png"><div style="width:1500px">wide</div><script>console.error('broken')</script>
<svg width="100" height="20"><text x="90" y="15">cut off</text></svg></body>`);
    const check = await browser.check(file);
    assert.deepEqual(check.requests, ['https://example.invalid/x.png']);
    assert.deepEqual(check.consoleErrors.filter((e) => e === 'broken'), ['broken']);
    assert.ok(check.cut.some((c) => c.startsWith('p: a long line')), check.cut.join('\n'));
    assert.ok(check.cut.some((c) => c.startsWith('svg text: cut off')), check.cut.join('\n'));
    assert.ok(check.scrollWidth > PAGE_WIDTH);
  });
});
