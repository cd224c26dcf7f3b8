// The release pipeline (.github/workflows/release.yml): action-validator (npm: @action-validator/cli,
// GitHub's workflow schema) accepts it and refuses a broken copy; it runs on a version tag and
// publishes what the shipped defaults name: the image for amd64 and arm64 as values.yaml's
// image.repository (a registry's image, the manifests' too), the chart as an OCI artifact, the npm
// tarball with the krew manifest generated from it. scripts/release-info.ts refuses a tag the files
// do not carry.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { parse } from 'yaml';
import { releaseInfo } from '../../scripts/release-info.ts';
import { REPO } from '../helpers/manifests.ts';

const run = promisify(execFile);
const WORKFLOW = path.join(REPO, '.github/workflows/release.yml');
const VALIDATOR = path.join(REPO, 'node_modules/@action-validator/cli/cli.mjs');
const text = readFileSync(WORKFLOW, 'utf8');
const workflow = parse(text);
type Step = { name?: string; uses?: string; run?: string; with?: Record<string, string>; env?: Record<string, string> };
const steps: Step[] = workflow.jobs.release.steps;

async function validate(file: string): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [VALIDATOR, file]);
    return { code: 0, output: stdout + stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, output: err.stdout + err.stderr };
  }
}

test('action-validator accepts the release workflow, and refuses it with a misspelt key', async (t) => {
  const accepted = await validate(WORKFLOW);
  assert.equal(accepted.code, 0, accepted.output);
  const dir = await mkdtemp(path.join(tmpdir(), 'nta-workflow-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const broken = path.join(dir, 'release.yml');
  await writeFile(broken, text.replace('runs-on:', 'runs_on:'));
  const refused = await validate(broken);
  assert.equal(refused.code, 1);
  assert.match(refused.output, /Additional property 'runs_on' is not allowed/);
});

test('on a version tag it pushes the image for amd64 and arm64 under the chart\'s default name, the chart as OCI, and the tarball with its krew manifest', () => {
  assert.deepEqual(workflow.on, { push: { tags: ['v*.*.*'] } });
  const info = steps.find((s) => s.run?.includes('scripts/release-info.ts'));
  assert.match(info?.run ?? '', /--tag "\$GITHUB_REF_NAME" >> "\$GITHUB_OUTPUT"/, 'the tag is checked first');
  const build = steps.find((s) => s.uses?.startsWith('docker/build-push-action@')) as Step;
  assert.deepEqual(build.with?.platforms?.split(','), ['linux/amd64', 'linux/arm64']);
  assert.equal(String(build.with?.push), 'true');
  assert.equal(build.with?.tags, '${{ steps.info.outputs.image }}:${{ steps.info.outputs.version }}');
  const login = steps.find((s) => s.uses?.startsWith('docker/login-action@')) as Step;
  assert.equal(login.with?.registry, '${{ steps.info.outputs.registry }}');
  const chart = steps.find((s) => s.run?.includes(' push ')) as Step;
  assert.match(chart.run ?? '', /"\$helm" package charts\/node-tuning-advisor/);
  assert.match(chart.run ?? '', /"\$helm" push "dist\/chart\/node-tuning-advisor-\$VERSION\.tgz" "\$CHART_REPOSITORY"/);
  const krew = steps.find((s) => s.run?.includes('krew:manifest')) as Step;
  assert.match(krew.run ?? '', /npm pack\n/);
  assert.match(krew.run ?? '', /--archive "node-tuning-advisor-\$VERSION\.tgz"/, 'sha256 of the very tarball released');
  assert.match(krew.env?.URL ?? '', /\/releases\/download\/\$\{\{ github\.ref_name \}\}\/node-tuning-advisor-\$\{\{ steps\.info\.outputs\.version \}\}\.tgz$/);
  const release = steps.find((s) => s.run?.includes('gh release create')) as Step;
  for (const asset of ['"node-tuning-advisor-$VERSION.tgz"', 'dist/krew/node-tuning.yaml', '"dist/chart/node-tuning-advisor-$VERSION.tgz"']) assert.ok(release.run?.includes(asset), asset);
});

test('release-info: the shipped files agree on the version; the default image names a registry, as the manifests do; another tag is refused', () => {
  const { info, problems } = releaseInfo();
  assert.deepEqual(problems, []);
  assert.match(info.image, /^[a-z0-9-]+(\.[a-z0-9-]+)+\/[a-z0-9-]+\/node-tuning-advisor$/, 'registry host / namespace / name');
  assert.equal(info.chartRepository, `oci://${info.image.replace(/\/node-tuning-advisor$/, '/charts')}`);
  const values = parse(readFileSync(path.join(REPO, 'charts/node-tuning-advisor/values.yaml'), 'utf8'));
  assert.equal(values.image.repository, info.image);
  assert.deepEqual(releaseInfo(`v${info.version}`).problems, []);
  assert.deepEqual(releaseInfo('v99.0.0').problems, [`the tag is "v99.0.0", not "v${info.version}"`]);
});
