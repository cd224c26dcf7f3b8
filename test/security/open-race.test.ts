// Issue 22 item 3: paths were checked with stat() and then opened by name, so the owner of a file the
// advisor reads (the kubelet's --config, say) could swap it for a symlink to a device between the
// two: a root `facts` opened /dev/ptmx in 2 of 15 runs (/dev/watchdog would reboot the host). Now
// the path is opened with O_PATH first (the kernel opens nothing: no driver, no FIFO reader), the
// descriptor is checked (type, place), and only a regular file or directory is reopened for reading.
// The attack: a swapper as nobody turns the file (or, below a --host-root, a directory above it) into
// a symlink to a FIFO or to /dev/ptmx and back while root reads it; a writer blocked in open() on
// the FIFO would return the moment anyone opens it for reading, and never may.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chown, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { HostRoot } from '../../src/host/host-root.ts';
import { asNobody, NOBODY, raceSetup, startSwapper, type SwapMode } from '../helpers/swap-race.ts';

const READS = 500;
const READERS = 4;

// Opens the FIFO for writing: blocks until someone opens it for reading, then says so.
const FIFO_WRITER = 'exec 3>"$1"; echo OPENED';

interface Attack {
  /** The HostRoot's root, and the path it reads. */
  root: string;
  file: string;
  fifo: string;
  swapper: [SwapMode, string, string, string];
}

/**
 * The real root: the kubelet's --config (in a directory nobody owns) is itself swapped; symlinks
 * are the host's own there, so the kernel follows them. A --host-root tree: a directory above the
 * file is swapped for a symlink out of the tree (O_NOFOLLOW guards only the last component).
 */
async function plant(where: 'the real root' | 'a --host-root tree', base: string): Promise<Attack> {
  const tree = path.join(base, 'tree');
  const kubelet = path.join(tree, 'var/lib/kubelet');
  await mkdir(kubelet, { recursive: true });
  await chown(kubelet, NOBODY, NOBODY);
  const outside = path.join(base, 'outside');
  await mkdir(outside);
  await chown(outside, NOBODY, NOBODY);
  if (where === 'the real root') {
    const fifo = path.join(outside, 'fifo');
    await ownedFifo(fifo);
    await ownedFile(path.join(kubelet, 'config.yaml'));
    return { root: '/', file: path.join(kubelet, 'config.yaml'), fifo, swapper: ['file', kubelet, 'config.yaml', fifo] };
  }
  const confD = path.join(kubelet, 'conf.d');
  await mkdir(confD);
  await chown(confD, NOBODY, NOBODY);
  await ownedFile(path.join(confD, 'config.yaml'));
  const fifo = path.join(outside, 'config.yaml');
  await ownedFifo(fifo);
  return { root: tree, file: '/var/lib/kubelet/conf.d/config.yaml', fifo, swapper: ['directory', kubelet, 'conf.d', outside] };
}

async function ownedFile(file: string): Promise<void> {
  await writeFile(file, 'a: 1\n');
  await chown(file, NOBODY, NOBODY);
}

async function ownedFifo(fifo: string): Promise<void> {
  execFileSync('mkfifo', [fifo]);
  await chown(fifo, NOBODY, NOBODY);
}

for (const where of ['the real root', 'a --host-root tree'] as const) {
  test(`a symlink swapped in to a FIFO or /dev/ptmx while root reads (${where}): never opened`, { timeout: 120_000 }, async (t) => {
    const setup = await raceSetup(t, 'nta-open-race-');
    if (!setup) return;
    const { setpriv, base, own } = setup;
    const attack = await plant(where, base);
    const writer = own(asNobody(setpriv, ['bash', '-c', FIFO_WRITER, 'x', attack.fifo]));
    let opened = false;
    writer.stdout?.on('data', () => { opened = true; });
    own(startSwapper(setpriv, attack.swapper));

    const seen = { read: 0, refused: 0 };
    await new Promise((resolve) => setTimeout(resolve, 300)); // the swapper is running
    const readLoop = async (): Promise<void> => {
      for (let i = 0; i < READS && !opened; i++) {
        // A fresh HostRoot per read: nothing remembered from the last walk.
        const result = await new HostRoot(attack.root).readText(attack.file, { maxBytes: 4096 });
        if (result.ok) {
          assert.equal(result.text, 'a: 1\n', 'only the regular file is ever read');
          seen.read += 1;
        } else seen.refused += 1;
      }
    };
    await Promise.all(Array.from({ length: READERS }, readLoop));
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(opened, false, `the FIFO was opened for reading (${JSON.stringify(seen)})`);
    assert.ok(seen.read > 0 && seen.refused > 0, `the swap raced the reads both ways: ${JSON.stringify(seen)}`);
  });
}
