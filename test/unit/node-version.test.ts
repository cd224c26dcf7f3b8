// The CLI and the kubectl plugin refuse a Node older than package.json "engines" with one line and
// exit 2, before they load code that Node could not run: the bundle (what `npm install -g` installs)
// started with an older Node (Debian's or the system's node, when older than 24).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { MINIMUM_NODE_MAJOR, unsupportedNode } from '../../src/cli/node-version.ts';
import { bundleTo } from '../helpers/bundle-cache.ts';
import { REPO } from '../helpers/manifests.ts';

const run = promisify(execFile);

test('the minimum is package.json\'s engines; older majors get the line, 24 and later none', () => {
  const engines = JSON.parse(readFileSync(path.join(REPO, 'package.json'), 'utf8')).engines.node as string;
  assert.equal(engines, `>=${MINIMUM_NODE_MAJOR}`);
  assert.equal(unsupportedNode('v20.20.2', 'node-tuning-advisor'), 'node-tuning-advisor: needs Node.js 24 or later, this is Node.js v20.20.2: install Node.js 24 (or run the container image)');
  assert.match(unsupportedNode('v18.19.0', 'kubectl node-tuning') ?? '', /^kubectl node-tuning: needs Node\.js 24 or later/);
  for (const version of ['v24.0.0', 'v24.21.0', 'v26.1.0']) assert.equal(unsupportedNode(version, 'x'), undefined, version);
});

/** A node binary older than the minimum on this machine (/usr/bin/node), or undefined. */
function olderNode(): { binary: string; version: string } | undefined {
  try {
    const version = execFileSync('/usr/bin/node', ['--version'], { encoding: 'utf8' }).trim();
    return Number(/^v(\d+)/.exec(version)?.[1]) < MINIMUM_NODE_MAJOR ? { binary: '/usr/bin/node', version } : undefined;
  } catch {
    return undefined;
  }
}

test('the bundle and its kubectl plugin under an older Node: one line on stderr, exit 2', async (t) => {
  const older = olderNode();
  if (!older) return t.skip(`no Node older than ${MINIMUM_NODE_MAJOR} at /usr/bin/node to try (Debian's nodejs package is one)`);
  const dir = await mkdtemp(path.join(tmpdir(), 'nta-old-node-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const { file } = await bundleTo(path.join(dir, 'dist/bundle'));
  for (const [script, command] of [[file, 'node-tuning-advisor'], [path.join(path.dirname(file), 'kubectl-node_tuning.mjs'), 'kubectl node-tuning']] as const) {
    type Failed = { code: number; stdout: string; stderr: string };
    const refused: Failed = await run(older.binary, [script, 'scan'], { cwd: dir }).then(() => assert.fail(`${script} ran on ${older.version}`), (e: Failed) => e);
    assert.equal(refused.code, 2);
    assert.equal(refused.stdout, '');
    assert.equal(refused.stderr, `${command}: needs Node.js 24 or later, this is Node.js ${older.version}: install Node.js 24 (or run the container image)\n`);
  }
});
