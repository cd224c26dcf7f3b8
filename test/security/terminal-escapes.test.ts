// Issue 17 item 11: escape sequences in a Node's annotations (anyone allowed to patch Nodes writes
// them) must not reach the terminal through `report` (table, markdown, json): they could clear the
// screen, set the window title or rewrite earlier lines. API errors are printed the same way.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renderAnnotations } from '../../src/publish/annotations.ts';
import { FakeApiServer } from '../helpers/fake-apiserver.ts';
import { runCli } from '../helpers/cli.ts';
import { finding, report } from '../helpers/reports.ts';
import { stripControls } from '../../src/text/terminal.ts';

const ESCAPES = '\u001b]0;pwned\u0007\u001b[2J\u001b[1A\r\u009b31m\u202eevil';
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

test('report prints no control character that a Node annotation carried, in any format', async (t) => {
  const server = new FakeApiServer();
  await server.start();
  t.after(() => server.stop());
  // As a hand edit of the Node would leave them: raw in the text annotations, JSON-escaped in the report.
  const annotations = renderAnnotations(report([finding('kernel-tick-rate', 'fail', { scoreImpact: 5, observed: 'CONFIG_HZ 250' })]));
  const key = (name: string) => `node-tuning-advisor.io/${name}`;
  annotations[key('report')] = (annotations[key('report')] as string).replace('CONFIG_HZ 250', `CONFIG_HZ 250${JSON.stringify(ESCAPES).slice(1, -1)}`);
  annotations[key('summary')] = `${annotations[key('summary')]}${ESCAPES}`;
  annotations[key('findings')] = `${annotations[key('findings')]}${ESCAPES}`;
  assert.ok(annotations[key('report')]?.includes('\\u001b'), 'the escapes are in the annotation');
  server.addNode(`worker-1`, annotations);
  for (const output of ['table', 'markdown', 'json']) {
    const result = await runCli(['report', '--kubeconfig', server.writeKubeconfig(), '--output', output, '--fail-on', 'never']);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /kernel-tick-rate/);
    assert.doesNotMatch(result.stdout, CONTROL, `${output} output carries a control character`);
    assert.doesNotMatch(result.stdout, /\\u001b|\\u0007/, `${output} output carries an escaped control character`);
  }
});

test('stripControls keeps text, tabs and newlines, drops the rest', () => {
  assert.equal(stripControls(`a\tb\nc${ESCAPES}`), 'a\tb\nc]0;pwned[2J[1A31mevil');
});
