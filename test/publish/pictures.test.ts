// The pictures in README.md and docs/ are screenshots of pages from real runs on hollow kubelets
// (scripts/pictures.ts, `npm run docs:pictures`): each picture the docs show is one the script
// makes and each it makes is shown, a PNG laid out for 1 280 px; the saved runs it leaves are the
// runs the page tests reuse; no picture drawn from the files alone (the layout-only dashboard
// picture) is left.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { PICTURES, RUNS } from '../../scripts/pictures.ts';
import { PAGE_WIDTH } from '../helpers/browser.ts';
import { REPO } from '../helpers/manifests.ts';
import { saved } from '../helpers/pages.ts';

/** Width and height from a PNG's IHDR chunk. */
function pngSize(data: Buffer): { width: number; height: number } {
  assert.deepEqual([...data.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'a PNG');
  assert.equal(data.subarray(12, 16).toString('latin1'), 'IHDR');
  return { width: data.readUInt32BE(16), height: data.readUInt32BE(20) };
}

/** Every picture a Markdown file of the docs shows, as a path from the repository's root. */
async function shownPictures(): Promise<Set<string>> {
  const docs = ['README.md', ...(await readdir(path.join(REPO, 'docs'))).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
  const shown = new Set<string>();
  for (const doc of docs) {
    const text = await readFile(path.join(REPO, doc), 'utf8');
    for (const [, target] of text.matchAll(/!\[[^\]]*\]\(([^)\s]+)\)/g)) shown.add(path.posix.normalize(path.posix.join(path.posix.dirname(doc), target as string)));
  }
  return shown;
}

test('the docs show exactly the pictures scripts/pictures.ts makes, each a screenshot laid out for 1 280 px', async () => {
  assert.deepEqual([...await shownPictures()].sort(), Object.keys(PICTURES).sort());
  const pngs = (await readdir(path.join(REPO, 'docs'), { recursive: true })).filter((f) => f.endsWith('.png')).map((f) => `docs/${f}`);
  assert.deepEqual(pngs.sort(), Object.keys(PICTURES).sort(), 'no other picture under docs/ (the layout-only dashboard picture is gone)');
  for (const picture of Object.keys(PICTURES)) {
    const { width, height } = pngSize(await readFile(path.join(REPO, picture)));
    assert.ok(width > PAGE_WIDTH * 0.8 && width <= PAGE_WIDTH && height > 300, `${picture}: ${width}×${height}`);
  }
});

test('the saved runs it leaves are the seeds\' before/after on one hollow kubelet: 5/10, then 50/100', async () => {
  const before = await saved(path.basename(RUNS.before));
  const after = await saved(path.basename(RUNS.after));
  for (const [m, qps, burst] of [[before, 5, 10], [after, 50, 100]] as const) {
    assert.deepEqual([m.counts.created, m.counts.ready, m.samples.length, m.validity?.valid], [100, 100, 100, true]);
    assert.deepEqual([m.advisor.facts['kubelet.kubeAPIQPS'], m.advisor.facts['kubelet.kubeAPIBurst']].map((f) => ('value' in f ? f.value : f.unknown)), [qps, burst]);
  }
  assert.equal(before.node, after.node);
  assert.ok(before.startedAt < after.startedAt);
  assert.ok((before.statusDelay?.p99Ms ?? 0) > 2 * (after.statusDelay?.p99Ms ?? Infinity), 'the 5/10 kubelet waited far longer to write its statuses');
});
