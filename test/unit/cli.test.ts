import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { runCli } from '../helpers/cli.ts';
import { fixtureHost, tempHost } from '../helpers/fixtures.ts';
import { readableCli } from '../helpers/readable-cli.ts';
import { toolPath } from '../helpers/tools.ts';

const BIN = fileURLToPath(new URL('../../bin/node-tuning-advisor.js', import.meta.url));

test('scan exits 1 at --fail-on warning, 0 at the default critical, 0 with never', async () => {
  const host = fixtureHost('intel-pstate-epp-power');
  assert.equal((await runCli(['scan', '--host-root', host, '--fail-on', 'warning'])).code, 1);
  assert.equal((await runCli(['scan', '--host-root', host])).code, 0);
  assert.equal((await runCli(['scan', '--host-root', host, '--fail-on', 'never'])).code, 0);
});

test('table output: score and counts, then per failing rule found → want, why and the short fix; no colour when piped', async () => {
  const { stdout } = await runCli(['scan', '--host-root', fixtureHost('intel-pstate-epp-power')]);
  assert.match(stdout, /^node build-node-01 · score 80\/100, grade B\n2 failing \(2 warning\) · 0 unknown · 0 pass · 23 not applicable · checked 2 of 2 rules\nhost root \S+intel-pstate-epp-power\n/);
  assert.match(stdout, /^FAIL {5}warning {3}cpu-governor {6}CPU frequency policy favours power over start-up latency$/m);
  assert.match(stdout, /^ {2}found {2}governor powersave, driver intel_pstate, EPP power → want performance \(adaptive drivers:\n {9}EPP performance, balance_performance\)$/m);
  assert.match(stdout, /^ {2}fix {4}tuned-adm profile throughput-performance$/m);
  assert.match(stdout, /^not applicable {2}api-client ×8 \(a kubelet on this node: no;/m);
  assert.doesNotMatch(stdout, /\$ tuned-adm|cpu\.driver = intel_pstate/, 'evidence and commands only with --verbose');
  assert.doesNotMatch(stdout, /\u001b\[/);
  const verbose = (await runCli(['scan', '--host-root', fixtureHost('intel-pstate-epp-power'), '--verbose'])).stdout;
  assert.match(verbose, /^ {9}\$ tuned-adm profile throughput-performance$/m);
  assert.match(verbose, /^ {2}facts {2}cpu\.\w+ = /m);
  assert.match(verbose, /^ {9}cpu\.governor = powersave \(/m);
  assert.match(verbose, /^ {2}refs {3}field report 001 \(docs\/field-reports\.md\)$/m);
  const all = (await runCli(['scan', '--host-root', fixtureHost('intel-pstate-epp-power'), '--all'])).stdout;
  assert.match(all, /^N\/A {6}warning {3}tuned-profile/m);
  assert.doesNotMatch(all, /^not applicable/m);
});

test('json, yaml and markdown outputs carry the same findings', async () => {
  const host = fixtureHost('mixed-governors');
  const json = JSON.parse((await runCli(['scan', '--host-root', host, '-o', 'json'])).stdout);
  assert.equal(json.findings[0].ruleId, 'cpu-governor');
  assert.match((await runCli(['scan', '--host-root', host, '--output', 'yaml'])).stdout, /ruleId: cpu-governor/);
  assert.match((await runCli(['scan', '--host-root', host, '--output', 'markdown'])).stdout, /\| FAIL \| warning \| `cpu-governor` \|/);
});

test('--only limits the rules and rejects unknown ids with exit 2', async () => {
  const host = fixtureHost('mixed-governors');
  const only = JSON.parse((await runCli(['scan', '--host-root', host, '--only', 'kernel-tick-rate', '-o', 'json'])).stdout);
  assert.deepEqual(only.findings.map((finding: { ruleId: string }) => finding.ruleId), ['kernel-tick-rate']);
  const bad = await runCli(['scan', '--host-root', host, '--only', 'kernel-tick']);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--only names unknown rule ids: kernel-tick/);
});

test('a rules file with a typo exits 2 with file:line:col and the key', async (t) => {
  const dir = await tempHost(t, {
    'rules/site.yaml': 'apiVersion: node-tuning-advisor.io/v1\nkind: RuleOverrides\noverrides:\n  - id: kernel-tick-rate\n    severty: info\n',
  });
  for (const args of [['scan', '--rules', `${dir}/rules`], ['rules', 'lint', `${dir}/rules`]]) {
    const result = await runCli(args);
    assert.equal(result.code, 2);
    assert.match(result.stderr, new RegExp(`${dir}/rules/site\\.yaml:5:5: overrides\\.0\\.severty: unknown key "severty" \\(did you mean "severity"\\?\\)`));
    assert.doesNotMatch(result.stderr, /\n\s+at /);
  }
});

test('overrides from --rules change the verdict without editing bundled files', async (t) => {
  const dir = await tempHost(t, {
    'r/o.yaml': 'apiVersion: node-tuning-advisor.io/v1\nkind: RuleOverrides\noverrides:\n  - id: kernel-tick-rate\n    params: { minHz: 250 }\n  - id: cpu-governor\n    disabled: true\n',
  });
  const args = ['scan', '--host-root', fixtureHost('intel-pstate-epp-power'), '--rules', `${dir}/r`, '--only', 'kernel-tick-rate,cpu-governor,tuned-profile', '-o', 'json'];
  const report = JSON.parse((await runCli(args)).stdout);
  assert.deepEqual(report.findings.map((finding: { ruleId: string; status: string }) => `${finding.ruleId}:${finding.status}`), [
    'kernel-tick-rate:pass', 'tuned-profile:not-applicable',
  ]);
});

test('a missing --host-root exits 2 with one sentence; bad flags exit 2 and point at --help', async () => {
  const missing = await runCli(['scan', '--host-root', '/nonexistent/host']);
  assert.equal(missing.code, 2);
  assert.equal(missing.stderr, "node-tuning-advisor scan: --host-root /nonexistent/host does not exist; pass the directory where the host's / is mounted.\n");
  const badFlag = await runCli(['scan', '--hostroot', '/']);
  assert.equal(badFlag.code, 2);
  assert.match(badFlag.stderr, /Unknown option '--hostroot'[\s\S]*node-tuning-advisor scan --help/);
  const badOutput = await runCli(['scan', '--output', 'xml']);
  assert.equal(badOutput.stderr, 'node-tuning-advisor scan: --output must be one of table, json, yaml, markdown (got "xml")\n');
});

test('an unreadable --host-root (permission denied) exits 2 with a clear sentence', async (t) => {
  const setpriv = toolPath('setpriv');
  if (!setpriv || process.getuid?.() !== 0) return t.skip('needs root and setpriv (apt-get install util-linux) to drop privileges');
  // uid 65534 may not be able to read this checkout (a clone under /root): it runs a readable copy.
  const copy = await readableCli(t);
  if (!copy) return;
  const dir = await tempHost(t, { 'host/etc/hostname': 'x\n' });
  await chmod(`${dir}/host`, 0o700);
  await chmod(dir, 0o755);
  const result = spawnSync(setpriv, ['--reuid=65534', '--regid=65534', '--clear-groups', copy.node, copy.cli, 'scan', '--host-root', `${dir}/host`], { encoding: 'utf8' });
  assert.equal(result.status, 2, result.stderr);
  assert.equal(result.stderr, `node-tuning-advisor scan: --host-root ${dir}/host is not readable by this user; run as a user that can read it, or mount it readable.\n`);
});

test('every command answers --help with exit 0', async () => {
  for (const args of [['--help'], ['scan', '--help'], ['facts', '--help'], ['rules', '--help'], ['rules', 'list', '--help'], ['explain', '--help']]) {
    const result = await runCli(args);
    assert.equal(result.code, 0, args.join(' '));
    assert.match(result.stdout, /Usage/);
  }
});

test('facts prints every fact with value and source as JSON', async () => {
  const { stdout, code } = await runCli(['facts', '--host-root', fixtureHost('rhel-hz1000-tuned-merged')]);
  assert.equal(code, 0);
  const document = JSON.parse(stdout);
  assert.deepEqual(document.facts['kernel.hz'], { value: 1000, source: '/boot/config-5.14.0-427.13.1.el9_4.x86_64' });
  assert.equal(document.node, 'cp-1.example.internal');
});

test('rules list and explain show the bundled rules', async () => {
  const list = await runCli(['rules', 'list']);
  assert.match(list.stdout, /kernel-tick-rate\s+node\s+warning\s+1\s+kernel/);
  const explain = await runCli(['explain', 'cpu-governor']);
  assert.match(explain.stdout, /Applies when:\n  all of:\n    cpu\.virtualized IsFalse\n    cpu\.cpufreq IsTrue/);
  assert.equal((await runCli(['explain', 'nope'])).code, 2);
  const onHost = await runCli(['explain', 'cpu-governor', '--host-root', fixtureHost('intel-pstate-epp-power')]);
  // The heading wraps at the width like any text: a long checkout path (a clone under /tmp) puts the root on the next line.
  assert.match(onHost.stdout, /^On node build-node-01 \(host root\s+\S+intel-pstate-epp-power\):\n\nFAIL {5}warning {3}cpu-governor/m);
  const cluster = await runCli(['explain', 'tekton-attach-workspaces', '--host-root', fixtureHost('intel-pstate-epp-power')]);
  assert.equal(cluster.code, 2);
  assert.match(cluster.stderr, /tekton-attach-workspaces is a cluster rule: "report" checks it through the API, not on a host; drop --host-root/);
});

test('the installed bin runs the same CLI as a process (this host, real root)', () => {
  const result = spawnSync(process.execPath, [BIN, 'scan', '-o', 'json', '--fail-on', 'never'], { encoding: 'utf8' });
  assert.equal(result.status, 0, result.stderr);
  const report = JSON.parse(result.stdout);
  assert.equal(report.hostRoot, '/');
  // On a host whose kernel exposes /proc/config.gz, the tick must be the value that file states.
  if (existsSync('/proc/config.gz')) {
    const line = execFileSync('sh', ['-c', "gzip -dc /proc/config.gz | grep '^CONFIG_HZ='"], { encoding: 'utf8' }).trim();
    assert.deepEqual(report.facts['kernel.hz'], { value: Number(line.split('=')[1]), source: '/proc/config.gz' });
  }
});

test('colour only on a terminal, and never with NO_COLOR', async () => {
  const { PassThrough } = await import('node:stream');
  const { main } = await import('../../src/cli/main.ts');
  const render = async (env: NodeJS.ProcessEnv) => {
    const stdout = Object.assign(new PassThrough(), { isTTY: true, columns: 120 });
    const chunks: Buffer[] = [];
    stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    await main(['scan', '--host-root', fixtureHost('intel-pstate-epp-power')], { stdout, stderr: new PassThrough(), env });
    return Buffer.concat(chunks).toString('utf8');
  };
  assert.match(await render({}), /\u001b\[31mFAIL\u001b\[0m/);
  assert.doesNotMatch(await render({ NO_COLOR: '1' }), /\u001b\[/);
});

test('a closed output pipe (| head) ends the CLI quietly, without a stack trace', () => {
  const result = spawnSync('sh', ['-c', `"${process.execPath}" "${BIN}" rules list | head -1`], { encoding: 'utf8' });
  assert.equal(result.status, 0);
  assert.match(result.stdout, /^ID\s+SCOPE|^ID\s+/);
  assert.doesNotMatch(result.stderr, /EPIPE|Error/);
});
