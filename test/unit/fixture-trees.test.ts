// git keeps no empty directories: a fixture that needs one passes in the working tree where it was
// made and fails on a clean clone. Every directory under test/fixtures/hosts must hold a file
// (a `.keep` where the host's directory is empty).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { REPO } from '../helpers/manifests.ts';

async function emptyDirectories(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  if (entries.length === 0) return [path.relative(REPO, dir)];
  const nested = await Promise.all(entries.filter((e) => e.isDirectory()).map((e) => emptyDirectories(path.join(dir, e.name))));
  return nested.flat();
}

test('no fixture host tree has an empty directory (git would drop it on clone)', async () => {
  assert.deepEqual(await emptyDirectories(path.join(REPO, 'test/fixtures/hosts')), []);
});
