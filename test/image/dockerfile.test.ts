// The Dockerfile as text: the linter and the image policy (pinned base, non-root, OCI labels, the
// build context). test/image/image.test.ts builds it with podman and runs the image.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { validate, ValidationSeverity } from 'dockerfile-utils';
import { parseDockerfile, type Stage } from '../helpers/dockerfile.ts';

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
