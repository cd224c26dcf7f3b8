// npm run image:build: the image node-tuning-advisor:<version> from the Dockerfile, with podman
// (Debian: podman, runc), into podman's own store (or --root/--runroot). When the store lacks the
// Dockerfile's base image (no registry reachable), it is assembled offline first
// (scripts/image/base.ts). --test-cache builds into the tests' cache instead (scripts/image/build.ts;
// .ci/run does, so the suite finds the image built), and prints the time and the image's size.
//   npm run image:build [-- --tag NAME] [--root DIR --runroot DIR] [--test-cache]
// Exit 2 on bad flags (naming the flag), 1 when podman, mmdebstrap or npm fail (their message).
import { parseArgs } from 'node:util';
import { IMAGE_TAG, buildImage, imageArchive } from './image/build.ts';
import { type Store, mustPodman } from './image/podman.ts';

const log = (line: string) => process.stderr.write(`image: ${line}\n`);

async function main(argv: string[]): Promise<number> {
  let flags;
  try {
    flags = parseArgs({ args: argv, options: { tag: { type: 'string' }, root: { type: 'string' }, runroot: { type: 'string' }, 'test-cache': { type: 'boolean' } } }).values;
  } catch (e) {
    log(`${(e as Error).message} (flags: --tag NAME, --root DIR --runroot DIR, --test-cache)`);
    return 2;
  }
  if ((flags.root === undefined) !== (flags.runroot === undefined)) {
    log('--root and --runroot go together: the store\'s image data and its run state');
    return 2;
  }
  if (flags['test-cache']) {
    const started = performance.now();
    const { file, image } = await imageArchive(log);
    const size = Number((await mustPodman(image.store, ['image', 'inspect', '--format', '{{.Size}}', image.name])).trim());
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    log(`${image.name}: ${(size / 1e6).toFixed(1)} MB, ${image.built ? `built in ${image.built.seconds.toFixed(1)} s (base ${image.built.base})` : 'cached'}; archive ${file} (${seconds} s in all)`);
    return 0;
  }
  const store: Store | undefined = flags.root && flags.runroot ? { root: flags.root, runroot: flags.runroot } : undefined;
  const built = await buildImage(store, flags.tag ?? IMAGE_TAG, log, true);
  log(`built ${built.tag} in ${built.seconds.toFixed(1)} s (base ${built.base})`);
  return 0;
}

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (e) {
  log((e as Error).message);
  process.exitCode = 1;
}
