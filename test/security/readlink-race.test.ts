// HostRoot.readLink resolved the link's directory by name (the chroot resolver's lstat walk) and then
// called readlink(2) on the joined path: the owner of a directory on the way could swap it for a
// symlink out of the --host-root between the two steps, and root read the target of a link outside
// the tree (what /proc/<pid>/cwd, /proc/<pid>/exe and snapd's `current` are read for: a working
// directory, a binary to trust, a revision). Now the directory is held by descriptor by the same
// walk reads use and the link is read relative to it (/proc/self/fd/<dir>/<name>): a swap after the
// walk changes nothing, one before it is expanded inside the tree.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chown, mkdir, symlink } from 'node:fs/promises';
import path from 'node:path';
import { HostRoot } from '../../src/host/host-root.ts';
import { NOBODY, raceSetup, startSwapper } from '../helpers/swap-race.ts';

const READS = 500;
const READERS = 4;
const INSIDE = '9044';
const OUTSIDE = '/outside-the-host-root';

test('a directory swapped for a symlink out of the host root while root reads a link in it: the outside link is never read', { timeout: 120_000 }, async (t) => {
  const setup = await raceSetup(t, 'nta-readlink-race-');
  if (!setup) return;
  const { setpriv, base, own } = setup;
  const tree = path.join(base, 'tree');
  const owned = path.join(tree, 'var/snap/microk8s');
  await mkdir(path.join(owned, 'revisions'), { recursive: true });
  await symlink(INSIDE, path.join(owned, 'revisions/current'));
  const outside = path.join(base, 'outside');
  await mkdir(outside);
  await symlink(OUTSIDE, path.join(outside, 'current'));
  await chown(owned, NOBODY, NOBODY);
  await chown(path.join(owned, 'revisions'), NOBODY, NOBODY);
  own(startSwapper(setpriv, ['directory', owned, 'revisions', outside]));

  const seen = { read: 0, refused: 0, outside: 0 };
  await new Promise((resolve) => setTimeout(resolve, 300)); // the swapper is running
  const readLoop = async (): Promise<void> => {
    for (let i = 0; i < READS; i++) {
      // A fresh HostRoot per read: nothing remembered from the last walk.
      const result = await new HostRoot(tree).readLink('/var/snap/microk8s/revisions/current');
      if (!result.ok) seen.refused += 1;
      else if (result.text === INSIDE) seen.read += 1;
      else seen.outside += 1;
    }
  };
  await Promise.all(Array.from({ length: READERS }, readLoop));
  assert.equal(seen.outside, 0, `the link outside the host root was read (${JSON.stringify(seen)})`);
  assert.ok(seen.read > 0 && seen.refused > 0, `the swap raced the reads both ways: ${JSON.stringify(seen)}`);
});
