// One esbuild bundle per source state, shared by every test file (and by two suites running at
// once): `scripts/bundle.ts`'s bundleTo() into a cache under os.tmpdir() keyed by a hash of what
// the bundle is built from (src/, bin/, scripts/, package.json, package-lock.json), then copied to
// where the test wants it (a copy, not a link: the bundle finds rules/ and package.json two
// directories above its real path). A build goes to a temporary name and is renamed into place;
// when another process renamed first, its copy is used and ours removed.
import { cp, mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { contentKey } from '../../scripts/content-key.ts';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Metafile } from 'esbuild';
import { bundleTo as build } from '../../scripts/bundle.ts';
import { REPO } from './manifests.ts';

export interface Bundled { file: string; workers: string[]; metafile: Metafile }

const INPUTS = ['src', 'bin', 'scripts', 'package.json', 'package-lock.json'];
const CACHE = path.join(tmpdir(), 'nta-bundle-cache');
const STALE_MS = 24 * 60 * 60 * 1000;
const RESULT = 'bundled.json';

/** sha256 over the path and content of every file the bundle is built from. */
export function sourceKey(): Promise<string> {
  return contentKey(REPO, INPUTS, [process.version]);
}

let pending: Promise<{ dir: string; result: Bundled }> | undefined;

/** The cached build for the current sources: built once (by this process or another), reused after. */
function cachedBuild(): Promise<{ dir: string; result: Bundled }> {
  pending ??= (async () => {
    const key = await sourceKey();
    const dir = path.join(CACHE, key);
    const read = async (): Promise<Bundled> => JSON.parse(await readFile(path.join(dir, RESULT), 'utf8')) as Bundled;
    try {
      return { dir, result: await read() };
    } catch { /* not built yet */ }
    await mkdir(CACHE, { recursive: true });
    await removeStale(key);
    const temp = path.join(CACHE, `.build-${process.pid}-${Date.now()}`);
    try {
      const built = await build(path.join(temp, 'bundle'));
      const result: Bundled = { file: path.basename(built.file), workers: built.workers, metafile: built.metafile };
      // Written last: a directory with this file is a whole build.
      await writeFile(path.join(temp, RESULT), JSON.stringify(result));
      await rename(temp, dir).catch(async (err: NodeJS.ErrnoException) => {
        if (err.code !== 'ENOTEMPTY' && err.code !== 'EEXIST') throw err;
      });
    } finally {
      await rm(temp, { recursive: true, force: true });
    }
    return { dir, result: await read() };
  })();
  pending.catch(() => { pending = undefined; });
  return pending;
}

/** Builds of other sources, untouched for a day. */
async function removeStale(keep: string): Promise<void> {
  for (const name of await readdir(CACHE).catch(() => [] as string[])) {
    if (name === keep) continue;
    const entry = path.join(CACHE, name);
    const info = await stat(entry).catch(() => undefined);
    if (info && Date.now() - info.mtimeMs > STALE_MS) await rm(entry, { recursive: true, force: true });
  }
}

/** As scripts/bundle.ts bundleTo(outDir): the bundle, its chunks and workers in outDir (replaced). */
export async function bundleTo(outDir: string): Promise<Bundled> {
  const { dir, result } = await cachedBuild();
  await rm(outDir, { recursive: true, force: true });
  await mkdir(path.dirname(outDir), { recursive: true });
  await cp(path.join(dir, 'bundle'), outDir, { recursive: true });
  return { ...result, file: path.join(outDir, result.file) };
}
