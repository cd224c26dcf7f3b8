// The Dockerfile, without a container engine: its build steps replayed in a clean temporary copy
// (npm ci, the bundle, a smoke run), then the runtime stage's files alone run `--help` and a scan
// of a fixture host. Plus the linter and the image policy (pinned base, non-root, OCI labels).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, stat, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { validate, ValidationSeverity } from 'dockerfile-utils';
import { hostPath, parseDockerfile, replayStage, type Stage, type StageRun } from '../helpers/dockerfile.ts';
import { splitNodeCommand } from '../helpers/shipped-agent.ts';

const REPO = path.resolve(import.meta.dirname, '../..');
const content = await readFile(path.join(REPO, 'Dockerfile'), 'utf8');
const { args, stages } = parseDockerfile(content);
const runtime = stages.at(-1) as Stage;
const steps = (stage: Stage, keyword: string) => stage.steps.filter((s) => s.keyword === keyword);

test('dockerfile-utils finds nothing, with every optional check raised to error', () => {
  const E = ValidationSeverity.ERROR;
  const diagnostics = validate(content, {
    deprecatedMaintainer: E, directiveCasing: E, emptyContinuationLine: E, instructionCasing: E,
    instructionCmdMultiple: E, instructionEntrypointMultiple: E, instructionHealthcheckMultiple: E,
    instructionJSONInSingleQuotes: E, instructionWorkdirRelative: E,
  });
  assert.deepEqual(diagnostics.map((d) => `${d.range.start.line + 1}: ${d.message}`), []);
  const broken = validate(content.replace(/^USER .*$/m, 'USER'));
  assert.ok(broken.length > 0, 'the linter does flag a USER without arguments');
});

test('policy: bases pinned to the Node the project tests with, short Docker Hub names, non-root, OCI labels', async () => {
  const pinned = JSON.parse(await readFile(path.join(REPO, 'node_modules/node/package.json'), 'utf8')).version as string;
  assert.equal(args.NODE_VERSION, pinned, 'ARG NODE_VERSION = the node devDependency');
  assert.ok(stages.length >= 2, 'multi-stage');
  for (const stage of stages) {
    assert.equal(stage.image, `node:${pinned}-bookworm-slim`);
    assert.doesNotMatch(stage.image.split('/')[0] as string, /[.:].*\//, 'no registry host');
  }
  const user = steps(runtime, 'USER').at(-1)?.args[0] ?? '';
  assert.match(user, /^[1-9]\d*(:\d+)?$/, 'numeric non-root USER, so runAsNonRoot can verify it');
  const labels = steps(runtime, 'LABEL').flatMap((s) => s.args.map((a) => a.split('=')[0]));
  for (const key of ['title', 'description', 'version', 'licenses']) assert.ok(labels.includes(`org.opencontainers.image.${key}`), key);
  assert.deepEqual(steps(runtime, 'RUN'), [], 'the runtime stage installs nothing');
  const ignore = await readFile(path.join(REPO, '.dockerignore'), 'utf8');
  for (const stage of stages) for (const copy of steps(stage, 'COPY').filter((s) => s.from === undefined)) {
    for (const src of copy.args.slice(0, -1)) assert.match(ignore, new RegExp(`^!${src}/?$`, 'm'), `.dockerignore lets ${src} in`);
  }
});

test('build steps in a clean copy; the runtime files alone run --help, --version and a fixture scan', async (t) => {
  const tmp = await mkdtemp(path.join(tmpdir(), 'nta-image-'));
  t.after(() => rm(tmp, { recursive: true, force: true }));
  const env = { PATH: `${path.dirname(process.execPath)}:${process.env.PATH ?? ''}`, npm_config_prefer_offline: 'true' };
  const done: Record<string, StageRun> = {};
  for (const [i, stage] of stages.entries()) {
    const run = await replayStage(stage, path.join(tmp, `stage${i}`), REPO, done, env);
    if (stage.name) done[stage.name] = run;
    if (stage === runtime) await runImage(t, run, stage);
  }
});

async function runImage(t: { diagnostic(m: string): void }, run: StageRun, stage: Stage): Promise<void> {
  // The ENTRYPOINT's node flags (--lite-mode: no WebAssembly, so no type stripping either) apply to every run below.
  const { nodeFlags, script: entryScript } = splitNodeCommand(steps(stage, 'ENTRYPOINT').at(-1)?.args ?? []);
  const script = hostPath(run, entryScript);
  await assert.rejects(stat(hostPath(run, '/app/node_modules')), 'no node_modules in the image');
  const bundleFiles = await readdir(path.dirname(script));
  const bundleBytes = (await Promise.all(bundleFiles.map(async (f) => (await stat(path.join(path.dirname(script), f))).size))).reduce((a, b) => a + b, 0);
  t.diagnostic(`bundle ${(bundleBytes / 1048576).toFixed(2)} MiB in ${bundleFiles.length} files; /app: ${(await readdir(hostPath(run, '/app'))).join(' ')}; node ${nodeFlags.join(' ')}`);
  const exec = (argv: string[]) => promisify(execFile)(process.execPath, [...nodeFlags, script, ...argv], { cwd: tmpdir(), env: { ...run.env, PATH: '/usr/bin:/bin' } });
  assert.match((await exec(['--help'])).stdout, /^Usage: node-tuning-advisor <command>/);
  const pkg = JSON.parse(await readFile(path.join(REPO, 'package.json'), 'utf8')) as { version: string };
  assert.match((await exec(['--version'])).stdout, new RegExp(`^node-tuning-advisor ${pkg.version.replaceAll('.', '\\.')} `));
  const fixture = path.join(REPO, 'test/fixtures/hosts/mixed-governors');
  const scan = await exec(['scan', '--host-root', fixture, '--output', 'json', '--fail-on', 'never']);
  const report = JSON.parse(scan.stdout) as { findings: { ruleId: string; status: string }[] };
  const status = Object.fromEntries(report.findings.map((f) => [f.ruleId, f.status]));
  assert.equal(status['kernel-tick-rate'], 'fail', 'bundled rules found and evaluated: CONFIG_HZ=250 fails');
  assert.equal(status['cpu-governor'], 'fail');
  // The fsync probe's worker thread is a separate file of the bundle: it must have been copied too.
  const probeDir = await mkdtemp(path.join(tmpdir(), 'nta-image-probe-'));
  try {
    const probe = JSON.parse((await exec(['probe', 'fsync', '--dir', probeDir, '--size', '256KiB', '--output', 'json'])).stdout) as { ok: boolean; samples: number };
    assert.equal(probe.ok, true);
    assert.ok(probe.samples > 100, `${probe.samples} fdatasync samples`);
  } finally {
    await rm(probeDir, { recursive: true, force: true });
  }
}
