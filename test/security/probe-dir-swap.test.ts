// The fsync probe below a --host-root found etcd's data dir by name (the chroot resolver's lstat
// walk) and then opened that name: the owner of a directory on the way could swap it for a symlink
// out of the tree between the two, and root created, filled and removed its probe file in a directory
// outside the host root (any root-owned directory passes the probe's owner check). Now the data dir
// is held by descriptor by the walk reads use, and the probe works through /proc/self/fd/<dir>.
// Evidence: the outside directory's mtime, which any file created or removed in it moves.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chown, mkdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { createEtcdFsyncCollector } from '../../src/collectors/etcd/fsync.ts';
import { FactSet } from '../../src/facts/fact-set.ts';
import { HostRoot } from '../../src/host/host-root.ts';
import { NOBODY, raceSetup, startSwapper } from '../helpers/swap-race.ts';

const PROBES = 60;

test('etcd\'s data dir swapped for a symlink out of the host root while the probe starts: no file is ever made outside', { timeout: 120_000 }, async (t) => {
  const setup = await raceSetup(t, 'nta-probe-dir-swap-');
  if (!setup) return;
  const { setpriv, base, own } = setup;
  const tree = path.join(base, 'tree');
  const owned = path.join(tree, 'var/lib');
  await mkdir(owned, { recursive: true });
  await mkdir(path.join(owned, 'etcd'), { mode: 0o700 });
  await chown(owned, NOBODY, NOBODY);
  const outside = path.join(base, 'outside');
  await mkdir(outside, { mode: 0o700 });
  const before = (await stat(outside)).mtimeMs;
  own(startSwapper(setpriv, ['directory', owned, 'etcd', outside]));
  await new Promise((resolve) => setTimeout(resolve, 300)); // the swapper is running

  const probe = createEtcdFsyncCollector({ run: true, sizeBytes: 4600, blockSize: 2300 });
  const seen = { probed: 0, refused: 0 };
  // At least PROBES, and on until the swap has raced them both ways (a loaded machine may schedule the
  // swapper late); the cap only ends a swapper that never runs.
  for (let i = 0; i < PROBES || (i < 20 * PROBES && (seen.probed === 0 || seen.refused === 0)); i++) {
    const facts = new FactSet();
    facts.set('etcd.present', true, 'test');
    facts.set('etcd.dataDir', '/var/lib/etcd', 'test');
    const host = new HostRoot(tree);
    await probe.collect({ host, facts, sleep: async () => undefined, now: () => performance.now(), liveProc: async () => false });
    if (typeof facts.value('etcd.fsync.samples') === 'number') seen.probed += 1;
    else seen.refused += 1;
  }
  assert.equal((await stat(outside)).mtimeMs, before, `a probe file was created outside the host root (${JSON.stringify(seen)})`);
  assert.ok(seen.probed > 0 && seen.refused > 0, `the swap raced the probes both ways: ${JSON.stringify(seen)}`);
});
