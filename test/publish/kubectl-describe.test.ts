// The real `kubectl describe node` against the stand-in after a real agent publish: every line of
// our annotations is shown whole, and our Events are listed under the Node.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { renderAnnotations, FINDINGS_KEY, REPORT_KEY, SUMMARY_KEY } from '../../src/publish/annotations.ts';
import { byteLength } from '../../src/publish/text-bytes.ts';
import { FakeApiServer } from '../helpers/fake-apiserver.ts';
import { runAgent } from '../helpers/agent-harness.ts';
import { finding, seedReport } from '../helpers/reports.ts';
import { requireTool } from '../helpers/tools.ts';

const run = promisify(execFile);

function reportWithLongLines() {
  const r = seedReport();
  r.findings.push(finding('multi-byte-observed', 'fail', {
    severity: 'info', observed: `median ${'µs '.repeat(60)}`, remediation: { text: 'ß'.repeat(80), commands: [] },
  }));
  r.counts.fail += 1;
  return r;
}

test('kubectl describe node shows every advisor line uncut and lists our Events', async (t) => {
  const kubectl = requireTool(t, 'kubectl', 'kubernetes-client');
  if (!kubectl) return;
  const server = new FakeApiServer();
  await server.start();
  t.after(() => server.stop());
  server.addNode('worker-1');
  const kubeconfig = server.writeKubeconfig();
  const report = reportWithLongLines();
  assert.equal(await runAgent(kubeconfig, () => report, { agent: { once: true } }).result, 0);

  // Async exec: the stand-in answers kubectl from this very process.
  const { stdout } = await run(kubectl, ['--kubeconfig', kubeconfig, 'describe', 'node', 'worker-1'], { encoding: 'utf8' });
  const printed = stdout.split('\n');
  const rendered = renderAnnotations(report);
  const ourLines = [FINDINGS_KEY, REPORT_KEY].flatMap((key) => (rendered[key] as string).split('\n'));
  assert.ok(ourLines.length >= 12);
  for (const line of ourLines) {
    const shown = printed.find((p) => p.trimStart() === line);
    assert.ok(shown !== undefined, `not shown whole: ${line}`);
    assert.ok(byteLength(shown.trimStart()) <= 140, `longer than 140 bytes: ${shown}`);
  }
  assert.ok(printed.some((p) => /^\s*node-tuning-advisor\.io\/summary: score 73\/100 grade C/.test(p)), 'summary on its key line');
  assert.ok(!printed.some((p) => p.includes('node-tuning-advisor') && p.endsWith('...')), 'nothing cut by kubectl');
  assert.ok(byteLength(`${SUMMARY_KEY}: ${rendered[SUMMARY_KEY]}`) <= 140);

  const events = printed.slice(printed.findIndex((p) => p.startsWith('Events:')));
  const warnings = events.filter((p) => /Warning\s+TuningRecommendation\s+.*node-tuning-advisor/.test(p));
  assert.equal(warnings.length, 4, events.join('\n'));
});
