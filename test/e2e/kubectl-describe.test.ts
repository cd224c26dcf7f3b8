// What an operator sees in `kubectl describe node` (the real kubectl, the real API server) after the
// real agent published a real scan: a few readable lines, none cut, and one Event line per failure.
// Budget: ≤ 2 advisor lines where nothing fails (the summary, with the settings `measure pod-startup`
// records, and a one-line report), otherwise ≤ 2 + 2 × (failing + unknown): summary and the report's
// head, then per rule one findings line and one report line. kubectl adds a bare "key:" line above
// each multi-line value; those carry nothing and are counted separately.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { REPORT_KEY } from '../../src/wire/annotations.ts';
import { byteLength } from '../../src/text/bytes.ts';
import { runAgent } from '../helpers/agent-harness.ts';
import { ControlPlane, realServerTier } from '../helpers/control-plane.ts';
import { fixtureHost } from '../helpers/fixtures.ts';
import { advisorLines } from '../helpers/describe-lines.ts';
import { createReadyNode } from '../helpers/kube-objects.ts';
import { finding, seedReport } from '../helpers/reports.ts';
import { SOURCE_NODE_FLAGS } from '../helpers/source-node.ts';

const run = promisify(execFile);
const BIN = fileURLToPath(new URL('../../bin/node-tuning-advisor.js', import.meta.url));

const isCut = (line: string) => line.endsWith('...') || line.includes('…');

async function publish(cp: ControlPlane, node: string, host: string, extra: string[] = []): Promise<void> {
  const { stderr } = await run(process.execPath, [...SOURCE_NODE_FLAGS, BIN, 'agent', '--kubeconfig', cp.kubeconfig, '--node-name', node,
    '--host-root', fixtureHost(host), '--once', ...extra], { encoding: 'utf8', timeout: 60_000 });
  assert.doesNotMatch(stderr, /internal error/);
}

// Each test publishes on its own Node (an agent --once waits on its 1 request/s client limit): side by side.
describe('kubectl describe node after the agent published (real API server, real kubectl)', { ...realServerTier(), concurrency: true }, () => {
  let cp: ControlPlane;
  let overrides: string;
  before(async () => {
    cp = await ControlPlane.start();
    overrides = await mkdtemp(path.join(tmpdir(), 'nta-describe-'));
    // intel-pstate-epp-performance passes everything but its 250 Hz tick: accept that tick to get a healthy node.
    await writeFile(path.join(overrides, 'tick.yaml'),
      'apiVersion: node-tuning-advisor.io/v1\nkind: RuleOverrides\noverrides:\n  - id: kernel-tick-rate\n    params: { minHz: 250 }\n');
  });
  after(async () => {
    await cp?.stop();
    if (overrides) await rm(overrides, { recursive: true, force: true });
  });

  test('a node where nothing fails: 2 lines, the summary with its settings and a one-line report, each on its key line', async (t) => {
    await createReadyNode(cp, 'describe-healthy');
    await publish(cp, 'describe-healthy', 'intel-pstate-epp-performance', ['--rules', overrides]);
    const { stdout } = await cp.kubectl(['describe', 'node', 'describe-healthy']);
    const lines = advisorLines(stdout);
    t.diagnostic(`healthy: ${lines.content.length} advisor lines (+${lines.bareKeys.length} bare key lines)`);
    assert.equal(lines.content.length, 2, stdout);
    assert.equal(lines.bareKeys.length, 0, stdout);
    assert.match(lines.content.join('\n'), /node-tuning-advisor\.io\/report: \{"schemaVersion":2,"score":100,"grade":"A","counts":\{[^}]*"fail":0,[^}]*\}\}$/m);
    assert.match(lines.content.join('\n'), /node-tuning-advisor\.io\/summary: 100\/100 A: 0 failing, 0 unknown; hz=250 gov=\S+ tuned=\S+$/m);
    for (const line of lines.content) assert.ok(!isCut(line), `cut: ${line}`);
    assert.doesNotMatch(stdout, /TuningRecommendation/);
  });

  test('seed 000 "before": within 2 + 2 × (failing + unknown) lines, none cut, one Event line per failing rule', async (t) => {
    // The agent takes the kubelet's version from the Node: seed 000 ran kubelet 1.20.2.
    await createReadyNode(cp, 'describe-failing', { kubeletVersion: 'v1.20.2' });
    await publish(cp, 'describe-failing', 'seed-000-before');
    const { stdout } = await cp.kubectl(['describe', 'node', 'describe-failing']);
    const node = await cp.must('GET', '/api/v1/nodes/describe-failing');
    const report = JSON.parse(node.metadata.annotations[REPORT_KEY]);
    const nonPassing = report.counts.fail + report.counts.unknown;
    // The seed-000 "before" picture: four failing rules, and the unknown ones a tree without /proc leaves.
    assert.equal(report.counts.fail, 4);
    assert.ok(report.counts.unknown >= 5, `${report.counts.unknown} unknown`);
    const lines = advisorLines(stdout);
    t.diagnostic(`failing: ${lines.content.length} advisor lines for ${nonPassing} failing or unknown rules, budget ${2 + 2 * nonPassing} (+${lines.bareKeys.length} bare key lines)`);
    assert.ok(lines.content.length <= 2 + 2 * nonPassing, stdout);
    assert.match(stdout, /node-tuning-advisor\.io\/summary: \d+\/100 F: 4 failing, \d+ unknown; hz=\? gov=\? tuned=- kubelet=5\/10 sched=50\/100 cm=20\/30 events=shared$/m);
    assert.equal(lines.bareKeys.length, 2, 'findings: and report:');
    for (const line of lines.content) {
      assert.ok(!isCut(line), `cut: ${line}`);
      assert.ok(byteLength(line.trimStart()) <= 138, line);
    }
    const findings = lines.content.filter((l) => /^\s+(CRIT|WARN|INFO|UNKN) /.test(l));
    assert.equal(findings.length, nonPassing);
    assert.ok(findings.some((l) => l.trim() === 'WARN kubelet-api-qps: kubeAPIQPS 5, kubeAPIBurst 10 (kubelet 1.20.2) — raise kubeAPIQPS/kubeAPIBurst to 170/220'), findings.join('\n'));

    const events = stdout.slice(stdout.indexOf('\nEvents:')).split('\n').filter((l) => /TuningRecommendation/.test(l));
    assert.equal(events.length, report.counts.fail, stdout);
    for (const event of events) assert.match(event, /(Warning\s+TuningRecommendation\s+\S+\s+node-tuning-advisor\s+(WARN|CRIT)|Normal\s+TuningRecommendation\s+\S+\s+node-tuning-advisor\s+INFO) [a-z-]+: .+ — .+$/);
    assert.ok(events.some((e) => e.endsWith('— raise kubeAPIQPS/kubeAPIBurst to 170/220')), events.join('\n'));
  });

  test('long multi-byte values are cut by us on a character boundary, never by kubectl', async () => {
    await createReadyNode(cp, 'worker-1');
    const report = seedReport();
    report.findings.push(finding('multi-byte-observed', 'fail', {
      severity: 'info', observed: `median ${'µs '.repeat(60)}`, remediation: { summary: 'ß'.repeat(30), text: 'ß'.repeat(80), commands: [] },
    }));
    report.counts.fail += 1;
    assert.equal(await runAgent(cp.kubeconfig, () => report, { agent: { once: true } }).result, 0);
    const { stdout } = await cp.kubectl(['describe', 'node', 'worker-1']);
    const lines = advisorLines(stdout);
    assert.ok(lines.content.length <= 2 + 2 * 5, stdout);
    for (const line of lines.content) {
      assert.ok(!line.endsWith('...'), `cut by kubectl: ${line}`);
      assert.ok(byteLength(line.trimStart()) <= 140 && !line.includes('\uFFFD'), line);
    }
    assert.ok(lines.content.some((l) => l.trim().startsWith('INFO multi-byte-observed: median µs') && l.endsWith(`… — ${'ß'.repeat(30)}`)), stdout);
  });
});
