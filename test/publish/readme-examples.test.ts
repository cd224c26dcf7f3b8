// The README's `scan` examples are what the code prints, so they cannot go stale: each ```text block
// that starts with `$ npm run -s scan -- …--host-root /mnt…` is run as written on seed 000's "before"
// host (the README mounts test/fixtures/hosts/seed-000-before at /mnt) and compared byte for byte.
// No mount here (tests run unprivileged, from any clone): the scan reads the fixture where it lies, the
// fixture's path in the report becomes /mnt, and the report is then laid out as the CLI lays it out
// piped (100 columns). Substituting before the layout keeps the README's wrapping, which depends on the
// path's length; the README's text itself came from a real bind mount at /mnt.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { renderReport } from '../../src/cli/commands/scan.ts';
import type { Report } from '../../src/report/types.ts';
import { runCli } from '../helpers/cli.ts';
import { fixtureHost } from '../helpers/fixtures.ts';
import { REPO } from '../helpers/manifests.ts';

const SHOWN_ROOT = '/mnt';
const FIXTURE = fixtureHost('seed-000-before');
const PROMPT = '$ npm run -s scan -- ';
const REGENERATE = `regenerate the block from a real run (as root, in a private mount namespace):
  unshare -m sh -c 'mount --bind test/fixtures/hosts/seed-000-before /mnt && npm run -s scan -- ARGS | cat'
(piped: 100 columns) and paste it under its "$ npm run -s scan -- ARGS" line, indented as the block is;
or paste the output printed above, which this test laid out exactly so`;

interface Example {
  line: number;
  args: string[];
  shown: string;
}

/** Every ```text block of the README that starts with the scan prompt: its arguments and the output shown. */
function scanExamples(): Example[] {
  const lines = readFileSync(path.join(REPO, 'README.md'), 'utf8').split('\n');
  const examples: Example[] = [];
  lines.forEach((fence, at) => {
    const indent = /^( *)```text$/.exec(fence)?.[1];
    const prompt = lines[at + 1];
    if (indent === undefined || !prompt?.startsWith(`${indent}${PROMPT}`)) return;
    const end = lines.indexOf(`${indent}\`\`\``, at + 2);
    assert.ok(end > at, `README.md:${at + 1}: the block has no closing fence`);
    const body = lines.slice(at + 2, end).map((l) => (l.startsWith(indent) ? l.slice(indent.length) : l));
    examples.push({ line: at + 2, args: prompt.slice(indent.length + PROMPT.length).split(/ +/), shown: `${body.join('\n')}\n` });
  });
  return examples;
}

/** What `scan ARGS` prints piped with the host root at /mnt, the fixture read where it lies. */
async function printedAtMnt(args: string[]): Promise<string> {
  assert.ok(args.includes(SHOWN_ROOT), `the example reads ${SHOWN_ROOT}: ${args.join(' ')}`);
  const run = await runCli(['scan', ...args.map((a) => (a === SHOWN_ROOT ? FIXTURE : a)), '--output', 'json']);
  assert.equal(run.stderr, '');
  // The fixture's path as given and as the kernel names it (a clone below a symlinked directory).
  let json = run.stdout;
  for (const root of new Set([realpathSync(FIXTURE), FIXTURE])) json = json.split(JSON.stringify(root).slice(1, -1)).join(SHOWN_ROOT);
  const report = JSON.parse(json) as Report;
  assert.equal(report.hostRoot, SHOWN_ROOT);
  const piped = { stdout: Object.assign(new PassThrough(), { isTTY: false }), stderr: new PassThrough(), env: {} };
  return renderReport(report, 'table', piped, { verbose: args.includes('--verbose'), all: args.includes('--all'), hostRoot: SHOWN_ROOT });
}

function firstDifference(printed: string, shown: string): string {
  const [a, b] = [printed.split('\n'), shown.split('\n')];
  const at = a.findIndex((line, i) => line !== b[i]);
  const i = at < 0 ? a.length : at;
  return `line ${i + 1} of the block:\n  README: ${JSON.stringify(b[i] ?? '(none)')}\n  prints: ${JSON.stringify(a[i] ?? '(none)')}`;
}

const examples = scanExamples();

test('the README shows the scan of seed 000 and its --verbose example', () => {
  assert.ok(examples.some((e) => e.args.join(' ') === '--host-root /mnt'), examples.map((e) => e.args.join(' ')).join('\n'));
  assert.ok(examples.some((e) => e.args.includes('--verbose')), examples.map((e) => e.args.join(' ')).join('\n'));
});

for (const example of examples) {
  test(`the README's "scan ${example.args.join(' ')}" is what the code prints`, async () => {
    const printed = await printedAtMnt(example.args);
    if (printed === example.shown) return;
    assert.fail(`README.md:${example.line}, "scan ${example.args.join(' ')}": the README's output is stale; ${firstDifference(printed, example.shown)}\n\n` +
      `The code prints:\n${printed}\n${REGENERATE.replaceAll('ARGS', example.args.join(' '))}`);
  });
}
