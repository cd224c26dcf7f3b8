// The Dockerfile's FROM image where no container registry is reachable: node:<version>-bookworm-slim
// assembled offline as the official image is made, from what this machine has:
//   - Debian bookworm by mmdebstrap --variant=minbase, /usr merged by directory links (as debootstrap
//     does, without the usrmerge package and the perl it pulls in), /usr/share/{doc,man,locale,info}
//     left out as debian:bookworm-slim leaves them out (dpkg path-exclude, copyright files kept);
//   - the Node binary of the `node` devDependency (the very release the FROM names) at /usr/local/bin/node;
//   - the npm that Node release bundles (the last "upgrade npm to X" of its CHANGELOG, `npm pack
//     npm@X`) at /usr/local/lib/node_modules/npm, with npm and npx linked in /usr/local/bin;
//   - the node user (1000), PATH, NODE_VERSION and CMD ["node"] of the official image (no yarn).
// The Debian tree is cached under ~/.cache/node-tuning-advisor/image/ by its recipe (mmdebstrap takes
// minutes), renamed into place so two builds at once both find a whole file.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { cp, mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import path from 'node:path';
import { runCommand } from '../run-command.ts';
import { type Store, limitFlags, mustPodman } from './podman.ts';

/** mmdebstrap's recipe for the Debian part (its arguments but the output file). */
export const DEBIAN_RECIPE = [
  '--variant=minbase', '--quiet', '--hook-dir=/usr/share/mmdebstrap/hooks/merged-usr',
  ...['/usr/share/man/*', '/usr/share/locale/*', '/usr/share/doc/*', '/usr/share/info/*'].map((p) => `--dpkgopt=path-exclude=${p}`),
  '--dpkgopt=path-include=/usr/share/doc/*/copyright',
  'bookworm',
];

/** ~/.cache/node-tuning-advisor/image (or $NTA_IMAGE_CACHE): assembled bases and built images. */
export function imageCache(): string {
  return process.env.NTA_IMAGE_CACHE
    ?? path.join(process.env.XDG_CACHE_HOME ?? path.join(homedir(), '.cache'), 'node-tuning-advisor/image');
}

/** The `node` devDependency's Node: its version, binary and its platform package's CHANGELOG. */
export function pinnedNode(): { version: string; binary: string; changelog: string } {
  const require = createRequire(import.meta.url);
  const nodePackage = path.dirname(require.resolve('node/package.json'));
  const version = (JSON.parse(readFileSync(path.join(nodePackage, 'package.json'), 'utf8')) as { version: string }).version;
  const platform = path.join(nodePackage, 'node_modules', `node-linux-${process.arch}`);
  // The node package's install script puts its platform package there, outside the lockfile: a
  // later `npm install` of anything prunes it.
  if (!existsSync(path.join(platform, 'CHANGELOG.md'))) throw new Error(`${path.relative(process.cwd(), platform)} is missing (a later npm install prunes it): run npm ci`);
  return { version, binary: path.join(nodePackage, 'bin/node'), changelog: path.join(platform, 'CHANGELOG.md') };
}

/** The npm a Node release bundles: the newest "upgrade npm to X" of its CHANGELOG (newest first). */
export function bundledNpmVersion(changelog: string): string {
  const version = /\*\*deps\*\*: upgrade npm to (\d+\.\d+\.\d+)/.exec(readFileSync(changelog, 'utf8'))?.[1];
  if (!version) throw new Error(`${changelog}: no "upgrade npm to X" line, so the npm of this Node release is not known`);
  return version;
}

/** The Debian tree as a tar, from the cache or made now (needs mmdebstrap and the Debian mirror). */
async function debianTar(log: (line: string) => void): Promise<string> {
  const key = createHash('sha256').update(DEBIAN_RECIPE.join('\0')).digest('hex').slice(0, 16);
  const file = path.join(imageCache(), `bookworm-minbase-${key}.tar`);
  if (existsSync(file)) return file;
  await mkdir(imageCache(), { recursive: true });
  const temp = `${file}.${process.pid}.tmp`;
  log(`assembling the base: mmdebstrap ${DEBIAN_RECIPE.join(' ')} (a few minutes, once per machine)`);
  const made = await runCommand('mmdebstrap', [...DEBIAN_RECIPE, temp]);
  if (made.code !== 0) {
    await rm(temp, { force: true });
    throw new Error(`mmdebstrap failed (Debian: apt-get install mmdebstrap): ${made.stderr.trim().split('\n').slice(-5).join('\n')}`);
  }
  await rename(temp, file);
  return file;
}

/** npm@version unpacked into `dir/npm` (npm pack from the registry, cached as a tarball). */
async function npmInto(version: string, dir: string): Promise<void> {
  const tarball = path.join(imageCache(), `npm-${version}.tgz`);
  if (!existsSync(tarball)) {
    const packed = execFileSync('npm', ['pack', `npm@${version}`, '--pack-destination', imageCache(), '--silent'], { encoding: 'utf8' }).trim();
    if (path.join(imageCache(), packed) !== tarball) await rename(path.join(imageCache(), packed), tarball);
  }
  await mkdir(path.join(dir, 'npm'));
  execFileSync('tar', ['-xzf', tarball, '-C', path.join(dir, 'npm'), '--strip-components=1']);
}

/** The Containerfile that puts Node and npm on the imported Debian tree. */
function baseContainerfile(debianImage: string, nodeVersion: string): string {
  return [
    `FROM ${debianImage}`,
    'RUN groupadd --gid 1000 node && useradd --uid 1000 --gid node --shell /bin/bash --create-home node',
    'COPY node /usr/local/bin/node',
    'COPY npm /usr/local/lib/node_modules/npm',
    'RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx'
      + ' && ln -s node /usr/local/bin/nodejs && node --version && npm --version',
    `ENV NODE_VERSION=${nodeVersion} PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin`,
    'CMD ["node"]',
    '',
  ].join('\n');
}

/** Makes the image `name` (node:<version>-bookworm-slim) in `store` from Debian, the pinned Node and its npm. */
export async function assembleBase(store: Store | undefined, name: string, log: (line: string) => void): Promise<void> {
  const node = pinnedNode();
  if (!name.startsWith(`node:${node.version}-`)) throw new Error(`the Dockerfile's FROM ${name} is not the node devDependency's Node ${node.version}: make ARG NODE_VERSION ${node.version}`);
  const tar = await debianTar(log);
  const context = await mkdtemp(path.join(imageCache(), 'base-context-'));
  const debianImage = `localhost/nta-bookworm-minbase:${path.basename(tar, '.tar').split('-').at(-1)}`;
  try {
    await mustPodman(store, ['import', '--quiet', tar, debianImage]);
    await cp(node.binary, path.join(context, 'node'));
    await npmInto(bundledNpmVersion(node.changelog), context);
    await writeFile(path.join(context, 'Containerfile'), baseContainerfile(debianImage, node.version));
    log(`assembling ${name}: ${debianImage} + node ${node.version} + npm ${bundledNpmVersion(node.changelog)}`);
    await mustPodman(store, ['build', '--quiet', '--pull=never', '--network=host', ...limitFlags(), '-f', path.join(context, 'Containerfile'), '-t', name, context]);
    await mustPodman(store, ['rmi', debianImage]);
  } finally {
    await rm(context, { recursive: true, force: true });
  }
}
