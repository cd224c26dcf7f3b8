// Issue 22 items 7 and 8: escape sequences in host data (a process's arguments, which any local user
// or tenant container chooses; /etc/hostname of a copied host tree) reached root's terminal through
// `scan` (the table and --verbose), markdown, `explain` and `facts`; annotations, Events and metric
// labels stripped only C0 and DEL. The real CLI in a real pseudo-terminal (colours on, so our own
// SGR codes are there and must be the only escapes), the text formats in-process, the publishers
// over the same report.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';
import { runScan } from '../../src/scan.ts';
import { renderAnnotations } from '../../src/publish/annotations.ts';
import { transitions } from '../../src/publish/events.ts';
import { createAgentMetrics } from '../../src/publish/metrics.ts';
import { CONTROL_RANGES, isControl, oneLine, stripControls } from '../../src/text/controls.ts';
import { runCli } from '../helpers/cli.ts';
import { cliInTerminal } from '../helpers/pty.ts';

const FIXTURE = path.resolve(import.meta.dirname, '../fixtures/hosts/kubelet-relative-config');
/** OSC window title, clear screen, cursor up, C1 CSI, a bidi override, a zero-width space, a tag character. */
const PAYLOAD = '\u001b]0;pwned\u0007\u001b[2J\u001b[1A\u009b31m\u202eevil\u200b\u{e0041}';
/** What may be left of a line: our own colours (SGR) removed, then no character of the table but tab and newline. */
const OUR_SGR = /\u001b\[[0-9;]*m/g;

function leftovers(text: string): string[] {
  return [...text.replace(OUR_SGR, '').replace(/\r/g, '')].filter((c) => c !== '\n' && c !== '\t' && isControl(c)).map((c) => `U+${(c.codePointAt(0) as number).toString(16)}`);
}

async function hostileHost(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'nta-escapes-'));
  const root = path.join(dir, 'host');
  await cp(FIXTURE, root, { recursive: true, verbatimSymlinks: true });
  await writeFile(path.join(root, 'etc/hostname'), `node-1${PAYLOAD}\n`);
  // The kubelet as a local user could start one: its flag value is quoted in the unknown reason.
  const argv = ['/usr/local/bin/kubelet', '--config=kubelet_conf.json', '--kubeconfig=kubelet.kubeconfig', `--kube-api-qps=5${PAYLOAD}`];
  await writeFile(path.join(root, 'proc/2001/cmdline'), `${argv.join('\0')}\0`);
  return root;
}

test('scan, scan -v and explain in a real terminal print no escape sequence from host data', async (t) => {
  const root = await hostileHost();
  t.after(() => rm(path.dirname(root), { recursive: true, force: true }));
  const runs = await Promise.all([
    cliInTerminal(t, ['scan', '--host-root', root, '--fail-on', 'never'], 120),
    cliInTerminal(t, ['scan', '--host-root', root, '--fail-on', 'never', '-v'], 120),
    cliInTerminal(t, ['explain', 'kubelet-api-qps', '--host-root', root], 120),
  ]);
  for (const [i, run] of runs.entries()) {
    if (!run) return;
    assert.equal(run.code, 0, run.raw);
    assert.match(run.raw, OUR_SGR, 'colours are on: a terminal');
    assert.deepEqual(leftovers(run.raw), [], `run ${i}: ${JSON.stringify(run.raw.slice(0, 300))}`);
    assert.match(run.raw.replace(OUR_SGR, ''), /node-1\]0;pwned\[2J\[1A31mevil/, 'the text stays, without its controls');
  }
  assert.match(runs[1]!.raw.replace(OUR_SGR, ''), /--kube-api-qps=5\]0;pwned/, '-v shows the kubelet flag');
});

test('markdown, json, yaml and facts carry the host data without raw controls; json and yaml say exactly what was read', async (t) => {
  const root = await hostileHost();
  t.after(() => rm(path.dirname(root), { recursive: true, force: true }));
  for (const args of [['scan', '-o', 'markdown'], ['scan', '-o', 'json'], ['scan', '-o', 'yaml'], ['facts'], ['facts', '-o', 'yaml']]) {
    const result = await runCli([...args, '--host-root', root, ...(args[0] === 'scan' ? ['--fail-on', 'never'] : [])]);
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(leftovers(result.stdout), [], `${args.join(' ')}: ${JSON.stringify(result.stdout.slice(0, 200))}`);
    if (args.includes('markdown')) continue;
    const doc = args.includes('yaml') ? parse(result.stdout) : JSON.parse(result.stdout);
    assert.equal(doc.node, `node-1${PAYLOAD}`, `${args.join(' ')}: the value itself, escaped in the text`);
  }
});

test('annotations, Events and metric labels keep host text on one line without any character of the table', async () => {
  const root = await hostileHost();
  try {
    const report = await runScan({ hostRoot: root, bundledRules: true, ruleLocations: [], nodeName: 'node-1' });
    const failing = report.findings.find((f) => f.status === 'fail' || f.status === 'unknown');
    assert.ok(failing, 'a finding to publish');
    // A failing finding whose observed text carries the payload, as a rule template would render host data.
    const forged = { ...report, findings: report.findings.map((f) => ({ ...f, status: 'fail' as const, observed: `seen ${PAYLOAD}`, remediation: { ...f.remediation, summary: `fix ${PAYLOAD}` } })) };
    const annotations = renderAnnotations(forged);
    for (const [key, value] of Object.entries(annotations)) {
      const text = key.endsWith('/report') ? JSON.parse(value as string) : value;
      assert.deepEqual(leftovers(JSON.stringify(text).replace(/\\n/g, '')), [], key);
      assert.deepEqual(leftovers(String(value).replace(/\n/g, '')), [], key);
    }
    for (const e of transitions(new Map(), forged)) assert.deepEqual(leftovers(e.message), [], e.message);
    const metrics = createAgentMetrics('test');
    const withFacts = { ...forged, facts: { ...forged.facts, 'tuned.activeProfiles': { value: [`throughput${PAYLOAD}`], source: '/etc/tuned/active_profile' } } };
    metrics.setReport(withFacts, 1, Date.now());
    const text = await metrics.render();
    assert.match(text, /tuned_profile_info\{profile="throughput ?\]0;pwned/);
    assert.deepEqual(leftovers(text), [], 'metrics text');
  } finally {
    await rm(path.dirname(root), { recursive: true, force: true });
  }
});

test('one table: C0, DEL, C1, bidi and invisible format characters; tab and newline kept only by stripControls', () => {
  for (const [from, to] of CONTROL_RANGES) {
    for (const code of [from, to]) assert.ok(isControl(String.fromCodePoint(code)), `U+${code.toString(16)}`);
  }
  for (const kept of ['a', ' ', 'é', 'µ', '→', '…', '·', '\u00a0', '😀']) assert.equal(isControl(kept), false, kept);
  assert.equal(stripControls(`a\tb\nc${PAYLOAD}`), 'a\tb\nc]0;pwned[2J[1A31mevil');
  assert.equal(oneLine(`a\tb\n c${PAYLOAD}`), 'a b c ]0;pwned [2J [1A 31m evil');
});
