// The image built from the Dockerfile with podman, and the cache the tests use: one podman store of
// the cache's own (~/.cache/node-tuning-advisor/image/store; its build layers make a rebuild after a
// source change skip the base and npm ci), where each state of the build's inputs (the Dockerfile,
// what .dockerignore lets into the context, the base's recipe) is the image nta-cache:<key>, and its
// OCI archive beside it for what imports archives (the real node's containerd). Builds and saves run
// one at a time (a lock directory holding the builder's pid); containers of any key may run meanwhile.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readFile, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { contentKey } from '../content-key.ts';
import { DEBIAN_RECIPE, assembleBase, bundledNpmVersion, imageCache, pinnedNode } from './base.ts';
import { type Store, imageExists, limitFlags, mustPodman, podman } from './podman.ts';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const PACKAGE = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { name: string; version: string };
/** What `podman build` / `docker build` tags by default: the package's name and version. */
export const IMAGE_TAG = `${PACKAGE.name}:${PACKAGE.version}`;
/** The CA bundle given to the build stage's npm as the secret npm-ca, when the machine has one. */
const CA_BUNDLES = [process.env.NODE_EXTRA_CA_CERTS, '/etc/ssl/certs/ca-certificates.crt'];

/** The Dockerfile's base image: its first FROM with the ARG defaults put in (node:<version>-bookworm-slim). */
export function baseImage(dockerfile = readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8')): string {
  const args = Object.fromEntries([...dockerfile.matchAll(/^ARG (\w+)=(\S+)$/gm)].map((m) => [m[1], m[2]]));
  const from = /^FROM (?:--\S+ )*(\S+)/m.exec(dockerfile)?.[1];
  if (!from) throw new Error('Dockerfile: no FROM');
  return from.replace(/\$\{(\w+)\}/g, (whole, name: string) => args[name] ?? whole);
}

/** The files .dockerignore lets into the build context (its `!path` lines). */
function contextInputs(): string[] {
  return [...readFileSync(path.join(ROOT, '.dockerignore'), 'utf8').matchAll(/^!(\S+?)\/?$/gm)].map((m) => m[1] as string);
}

/** The key of the image the inputs build now. */
export async function imageKey(): Promise<string> {
  const node = pinnedNode();
  return contentKey(ROOT, ['Dockerfile', '.dockerignore', ...contextInputs()], [...DEBIAN_RECIPE, node.version, bundledNpmVersion(node.changelog)]);
}

export interface Built { tag: string; seconds: number; base: 'present' | 'assembled' }

/** `podman build` of the Dockerfile into `store`, the base assembled first when the store lacks it. */
export async function buildImage(store: Store | undefined, tag: string, log: (line: string) => void, echo = false): Promise<Built> {
  const started = performance.now();
  const from = baseImage();
  const present = await imageExists(store, from);
  if (!present) await assembleBase(store, from, log);
  const ca = CA_BUNDLES.find((file) => file && existsSync(file));
  log(`podman build -t ${tag} (FROM ${from}${present ? '' : ', assembled'})`);
  await mustPodman(store, [
    'build', '--pull=never', '--network=host', ...limitFlags(), '--build-arg', `VERSION=${PACKAGE.version}`,
    ...(ca ? ['--secret', `id=npm-ca,src=${ca}`] : []), '-t', tag, '-f', path.join(ROOT, 'Dockerfile'), ROOT,
  ], { echo });
  return { tag, seconds: (performance.now() - started) / 1000, base: present ? 'present' : 'assembled' };
}

const LOCK_STALE_MS = 30 * 60 * 1000;
const CACHE_TAG = 'localhost/nta-cache';
const STALE_AGE = '24h';

/** The cache's podman store: its root under the cache, its run state under /tmp (podman refuses a runroot over 50 characters). */
export function cacheStore(): Store {
  const id = createHash('sha256').update(imageCache()).digest('hex').slice(0, 8);
  return { root: path.join(imageCache(), 'store'), runroot: path.join(tmpdir(), `nta-podman-${id}`) };
}

/** Holds the cache's build lock (a directory with the holder's pid) while `work` runs. */
async function withLock<T>(work: () => Promise<T>): Promise<T> {
  await mkdir(imageCache(), { recursive: true });
  const lock = path.join(imageCache(), '.build-lock');
  const deadline = Date.now() + LOCK_STALE_MS;
  for (;;) {
    try {
      await mkdir(lock);
      break;
    } catch {
      const holder = Number(await readFile(path.join(lock, 'pid'), 'utf8').catch(() => '0'));
      if (holder > 0 && !processAlive(holder)) await rm(lock, { recursive: true, force: true });
      if (Date.now() > deadline) throw new Error(`${lock}: another build held it for 30 min`);
      await new Promise((r) => setTimeout(r, 500));
    }
  }
  try {
    await writeFile(path.join(lock, 'pid'), String(process.pid));
    return await work();
  } finally {
    await rm(lock, { recursive: true, force: true });
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export interface CachedImage { store: Store; name: string; key: string; built?: Built }

/** The image of the inputs as they are now, in the cache's store: there already, or built now. */
export async function cachedImage(log: (line: string) => void): Promise<CachedImage> {
  const key = await imageKey();
  const store = cacheStore();
  const name = `${CACHE_TAG}:${key}`;
  if (await imageExists(store, name)) return { store, name, key };
  return withLock(async () => {
    if (await imageExists(store, name)) return { store, name, key };
    const built = await buildImage(store, IMAGE_TAG, log);
    await mustPodman(store, ['tag', IMAGE_TAG, name]);
    // Other keys' images and build layers unused for a day go (tagged ones in use by a container stay).
    await podman(store, ['image', 'prune', '--force', '--filter', `until=${STALE_AGE}`]);
    return { store, name, key, built };
  });
}

/** The cached image as an OCI archive (for containerd's import), saved once per key. */
export async function imageArchive(log: (line: string) => void): Promise<{ file: string; image: CachedImage }> {
  const image = await cachedImage(log);
  const file = path.join(imageCache(), `${PACKAGE.name}-${image.key}.oci.tar`);
  if (!existsSync(file)) {
    await withLock(async () => {
      if (existsSync(file)) return;
      await mustPodman(image.store, ['save', '--quiet', '--format', 'oci-archive', '-o', `${file}.tmp`, image.name]);
      await rename(`${file}.tmp`, file);
      await removeStaleArchives(file);
    });
  }
  return { file, image };
}

/** Archives of other keys not written for a day. */
async function removeStaleArchives(keep: string): Promise<void> {
  const dayAgo = Date.now() - 24 * 60 * 60 * 1000;
  for (const name of await readdir(imageCache())) {
    const file = path.join(imageCache(), name);
    if (file === keep || !name.startsWith(`${PACKAGE.name}-`) || !name.endsWith('.oci.tar')) continue;
    if ((await stat(file)).mtimeMs < dayAgo) await rm(file, { force: true });
  }
}
