// Issue 37 item 6: rule files bounded by what the agent's heap can parse. Under the 1 MiB size cap,
// a valid 786 KB overrides file ran the shipped agent (the image's `node --lite-mode`, the
// DaemonSet's --max-old-space-size=64) out of heap on its first scan; the overrides ConfigMap is
// mounted on every node, so every agent crash-looped. 1 MiB of "[" did the same to `scan`. Now a
// file is lexed first and refused with the reason when it holds more YAML tokens, deeper flow
// nesting or more documents than the agent's heap parses; what is accepted parses within it.
import { describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { AgentProcess, buildApp } from '../helpers/bundled-agent.ts';
import { FakeApiServer } from '../helpers/fake-apiserver.ts';
import { fixtureHost } from '../helpers/fixtures.ts';
import { REPO } from '../helpers/manifests.ts';
import { shippedAgentCommand, withFlags, type ShippedCommand } from '../helpers/shipped-agent.ts';
import { MAX_FLOW_DEPTH, MAX_RULE_FILE_TOKENS, MAX_RULE_TOKENS_TOTAL, yamlCost } from '../../src/rules/yaml-budget.ts';
import { MAX_RULE_FILE_BYTES } from '../../src/rules/load.ts';

const HEAD = 'apiVersion: node-tuning-advisor.io/v1\nkind: RuleOverrides\noverrides:';
const HOST = fixtureHost('seed-000-before');

/** A valid overrides file of about `bytes`: one override repeated (each entry is valid). */
function validOverrides(bytes: number): string {
  const entry = '  - id: kernel-tick-rate\n    severity: info\n';
  return `${HEAD}\n${entry.repeat(Math.floor((bytes - HEAD.length) / entry.length))}`;
}

/** `head`, `unit` repeated as often as `tokens` YAML tokens allow, then `tail`. */
function upToTokens(head: string, unit: string, tail: string, tokens: number): string {
  const costOf = (n: number): number => { const cost = yamlCost(`${head}${unit.repeat(n)}${tail}`, Infinity); return cost.ok ? cost.tokens : Infinity; };
  let low = 0;
  let high = tokens;
  while (high - low > 1) {
    const mid = (low + high) >> 1;
    if (costOf(mid) <= tokens) low = mid;
    else high = mid;
  }
  return `${head}${unit.repeat(low)}${tail}`;
}

/** Copies of the bundled rule files (ids renamed), as many whole sets as MAX_RULE_TOKENS_TOTAL takes. */
async function ruleSetsUpToTotal(): Promise<Record<string, string>> {
  const bundled = await Promise.all((await readdir(path.join(REPO, 'rules'))).sort().map(async (f) => [f, await readFile(path.join(REPO, 'rules', f), 'utf8')] as const));
  const copies: Record<string, string> = {};
  let tokens = 0;
  for (let copy = 0; ; copy++) {
    const set = bundled.map(([file, text]) => {
      let n = 0;
      return [`c${String(copy).padStart(3, '0')}-${file}`, text.replace(/\n {2}- id: [a-z0-9-]+/g, () => `\n  - id: r${copy}-${file.slice(0, 2)}-${++n}`)] as const;
    });
    const cost = set.reduce((sum, [, text]) => sum + (yamlCost(text, Infinity) as { tokens: number }).tokens, 0);
    if (tokens + cost > MAX_RULE_TOKENS_TOTAL) return copies;
    tokens += cost;
    for (const [file, text] of set) copies[file] = text;
  }
}

interface Shipped { bundle: string; shipped: ShippedCommand; dir: string }

async function shippedApp(t: TestContext): Promise<Shipped> {
  const dir = await mkdtemp(path.join(tmpdir(), 'nta-rule-heap-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const [bundle, shipped] = await Promise.all([buildApp(path.join(dir, 'app')), shippedAgentCommand()]);
  return { bundle, shipped, dir };
}

async function rulesDir(dir: string, name: string, files: Record<string, string>): Promise<string> {
  const rules = path.join(dir, name);
  await mkdir(rules, { recursive: true });
  for (const [file, text] of Object.entries(files)) await writeFile(path.join(rules, file), text);
  return rules;
}

/** The shipped agent (the DaemonSet's args, env and the image's node flags) with `rules`, against the API stand-in. */
async function shippedAgent(t: TestContext, app: Shipped, rules: string): Promise<AgentProcess> {
  const server = new FakeApiServer();
  await server.start();
  t.after(() => server.stop());
  server.addNode('worker-1');
  const args = withFlags(app.shipped.args, {
    kubeconfig: server.writeKubeconfig(), 'node-name': 'worker-1', 'host-root': HOST, rules,
    'metrics-addr': '127.0.0.1:0', interval: '2s', 'startup-jitter': '1ms', 'probe-interval': 'off',
  });
  const agent = AgentProcess.start(app.bundle, args, app.shipped.env);
  t.after(() => agent.stop());
  return agent;
}

/** GNU time, when installed, for the peak RSS figure the diagnostics print (not asserted: the exit code says whether the heap held). */
const GNU_TIME = existsSync('/usr/bin/time') ? '/usr/bin/time' : undefined;

/** `scan` of the shipped bundle with the image's node flags and the DaemonSet's NODE_OPTIONS. */
async function shippedScan(app: Shipped, rules: string): Promise<{ code: number | null; signal: string | null; stderr: string; peak: string }> {
  const argv = [process.execPath, ...app.shipped.nodeFlags, app.bundle, 'scan', '--host-root', HOST, '--rules', rules, '--fail-on', 'never', '--output', 'json'];
  const [command, ...args] = GNU_TIME ? [GNU_TIME, '-f', 'peak-rss-kb %M exit %x', ...argv] : argv;
  const child = spawn(command as string, args, { stdio: ['ignore', 'ignore', 'pipe'], env: { PATH: process.env.PATH ?? '', ...app.shipped.env } });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => { stderr += d.toString(); });
  const [code, signal] = await new Promise<[number | null, string | null]>((resolve) => child.on('close', (c, s) => resolve([c, s])));
  const timed = /peak-rss-kb (\d+) exit (\d+)/.exec(stderr);
  const peak = timed ? `${(Number(timed[1]) / 1024).toFixed(1)} MiB` : 'not measured (no /usr/bin/time)';
  // GNU time exits with the command's status, or 128 + the signal that ended it.
  return { code, signal, stderr, peak };
}

describe('rule files against the agent\'s heap', { concurrency: true }, () => {
  test('a valid 786 KB overrides file in the shipped agent\'s rules: refused with the reason; the agent keeps running', { timeout: 180_000 }, async (t) => {
    const app = await shippedApp(t);
    const rules = await rulesDir(app.dir, 'overrides', { 'overrides.yaml': validOverrides(786_000) });
    const agent = await shippedAgent(t, app, rules);
    await agent.waitForLog(/overrides\.yaml:0:0: is larger than 256 KiB; a rule file is at most that/, 120_000);
    await agent.waitForLog(/scan failed[\s\S]*attempt 2, retrying/, 120_000);
    assert.ok(agent.running, agent.log.slice(-2000));
    assert.doesNotMatch(agent.log, /heap out of memory/);
  });

  test('the shipped agent with as many rule files as the budgets accept scans and publishes', { timeout: 180_000 }, async (t) => {
    const app = await shippedApp(t);
    const rules = await rulesDir(app.dir, 'accepted', await ruleSetsUpToTotal());
    const agent = await shippedAgent(t, app, rules);
    await agent.waitForCycles(2);
    const peak = Number(/^VmHWM:\s+(\d+) kB/m.exec(await readFile(`/proc/${agent.pid}/status`, 'utf8'))?.[1]) / 1024;
    t.diagnostic(`${(await readdir(rules)).length} files, peak RSS ${peak.toFixed(1)} MiB`);
    assert.ok(agent.running, agent.log.slice(-2000));
    assert.doesNotMatch(agent.log, /scan failed|heap out of memory/);
  });

  test('under the size cap: more tokens than the heap parses, 1 MiB-deep brackets, endless documents are refused by `scan`, exit 2, the file named', { timeout: 180_000 }, async (t) => {
    const app = await shippedApp(t);
    const cases: [string, string, RegExp][] = [
      ['brackets', '['.repeat(MAX_RULE_FILE_BYTES - 1), new RegExp(`nests \\[ \\] and \\{ \\} more than ${MAX_FLOW_DEPTH} deep`)],
      ['valid-250k', validOverrides(250_000), new RegExp(`holds more than ${MAX_RULE_FILE_TOKENS} YAML tokens, more than the agent's heap parses safely`)],
      ['dense', `${HEAD} [${'0,'.repeat(120_000)}]\n`, /holds more than \d+ YAML tokens/],
      ['documents', '---\n'.repeat(60_000), /holds more than 64 YAML documents/],
    ];
    for (const [name, text, message] of cases) {
      const rules = await rulesDir(app.dir, name, { 'overrides.yaml': text });
      const scan = await shippedScan(app, rules);
      t.diagnostic(`${name} (${text.length} bytes): exit ${scan.code ?? scan.signal}, peak RSS ${scan.peak}`);
      assert.equal(scan.code, 2, `${name}: ${scan.stderr.slice(0, 600)}`);
      assert.match(scan.stderr, new RegExp(`${name}/overrides\\.yaml:0:0: ${message.source}`), name);
    }
  });

  test('what the budgets accept parses within the agent\'s heap: the worst shapes at their limits, and the total', { timeout: 300_000 }, async (t) => {
    const app = await shippedApp(t);
    // Each at its limit: the densest tokens (a flow sequence of "0"), the deepest flow nesting, the
    // largest scalar, and as many valid rule sets as the total budget takes.
    const copies = await ruleSetsUpToTotal();
    const cases: [string, Record<string, string>, number][] = [
      ['dense', { 'overrides.yaml': upToTokens(`${HEAD} [`, '0,', ']\n', MAX_RULE_FILE_TOKENS) }, 2],
      ['deep', { 'overrides.yaml': `${HEAD} ${'['.repeat(MAX_FLOW_DEPTH)}${']'.repeat(MAX_FLOW_DEPTH)}\n` }, 2],
      ['scalar', { 'overrides.yaml': `${HEAD}\n  - id: "${'x'.repeat(MAX_RULE_FILE_BYTES - 200)}"\n` }, 2],
      ['total', copies, 0],
    ];
    for (const [name, files, exit] of cases) {
      const scan = await shippedScan(app, await rulesDir(app.dir, `accepted-${name}`, files));
      t.diagnostic(`${name}: exit ${scan.code ?? scan.signal}, peak RSS ${scan.peak}`);
      assert.equal(scan.code, exit, `${name}: ${scan.stderr.slice(0, 600)}`);
      assert.doesNotMatch(scan.stderr, /heap out of memory|YAML tokens|nests/, name);
    }
  });
});
