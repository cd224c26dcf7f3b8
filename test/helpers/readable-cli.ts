// Tests that run the CLI as another user (uid 65534) cannot run it from the checkout: a clone under
// /root or in a `mktemp -d` directory is closed to other users, and so is the Node binary in its
// node_modules. They run a copy made readable instead: the bundle (as the image ships it), the rules
// and package.json beside it, and the Node binary, in a fresh directory under os.tmpdir().
import { constants as fsConstants } from 'node:fs';
import { access, chmod, copyFile, cp, link, mkdir, mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestContext } from 'node:test';
import { bundleTo } from './bundle-cache.ts';

const REPO = fileURLToPath(new URL('../..', import.meta.url));

export interface ReadableCli {
  /** The Node binary, readable and executable by every user. */
  node: string;
  /** The bundled CLI entry point. */
  cli: string;
}

/** Why other users cannot reach files under `dir`, or undefined when every directory up to it is traversable. */
async function closedToOthers(dir: string): Promise<string | undefined> {
  for (let at = dir; ; at = path.dirname(at)) {
    if (((await stat(at)).mode & 0o001) === 0) return `${at} is not traversable by other users`;
    if (at === path.dirname(at)) return undefined;
  }
}

async function linkOrCopy(from: string, to: string): Promise<void> {
  await link(from, to).catch(() => copyFile(from, to));
  await chmod(to, 0o755);
}

/**
 * The CLI as other users can run it, or undefined after skipping the test with the reason (locally)
 * or failing it (CI=true), when even os.tmpdir() is closed to them.
 */
export async function readableCli(t: TestContext): Promise<ReadableCli | undefined> {
  const closed = await closedToOthers(os.tmpdir());
  if (closed) {
    const message = `cannot give another user a copy of the CLI: ${closed} (set TMPDIR to a directory such as /tmp)`;
    if (process.env.CI === 'true') throw new Error(message);
    t.skip(message);
    return undefined;
  }
  const base = await mkdtemp(path.join(os.tmpdir(), 'nta-readable-'));
  t.after(() => rm(base, { recursive: true, force: true }));
  await chmod(base, 0o755);
  const app = path.join(base, 'app');
  // The bundle resolves rules/ and package.json two directories above itself, as in the image.
  const { file } = await bundleTo(path.join(app, 'dist', 'bundle'));
  await cp(path.join(REPO, 'rules'), path.join(app, 'rules'), { recursive: true });
  await copyFile(path.join(REPO, 'package.json'), path.join(app, 'package.json'));
  await mkdir(path.join(base, 'bin'));
  const node = path.join(base, 'bin', 'node');
  await linkOrCopy(process.execPath, node);
  await chmodTree(app);
  await access(node, fsConstants.X_OK);
  return { node, cli: file };
}

async function chmodTree(dir: string): Promise<void> {
  await chmod(dir, 0o755);
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) await chmodTree(full);
    else await chmod(full, 0o644);
  }
}
