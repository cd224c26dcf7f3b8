// The image as it ships, for tests: built from the Dockerfile with podman into the tests' cache
// (scripts/image/build.ts: once per state of its inputs; .ci/run builds it before the suite), run as
// the DaemonSet runs its container (the manifest's securityContext, memory limit, emptyDir /tmp and
// env, the host read-only at /host), each container under a name of its own and removed after.
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import type { CommandResult } from '../../scripts/run-command.ts';
import { type CachedImage, cachedImage, imageArchive } from '../../scripts/image/build.ts';
import { limitFlags, podman, unifiedCgroups } from '../../scripts/image/podman.ts';
import { tier } from './tier.ts';
import { toolPath } from './tools.ts';
import { agentContainer } from './shipped-agent.ts';

/** What is missing to build and run the image here, with the packages to install; undefined when nothing is. */
export function imageMissing(): string | undefined {
  const needed = ['podman', ...(unifiedCgroups() ? [] : ['runc']), 'mmdebstrap'].filter((tool) => !toolPath(tool));
  if (needed.length > 0) return `${needed.join(', ')} not found: install with "apt-get install podman runc mmdebstrap" (.ci/run does this)`;
  if (process.getuid?.() !== 0) return 'the image tests run podman as root (rootless podman needs subuid ranges this test does not set up)';
  return undefined;
}

/** For `describe(name, imageTier(), …)`. */
export function imageTier(): { skip?: string } {
  return tier(imageMissing(), 'the image built with podman');
}

let image: Promise<CachedImage> | undefined;
/** The image of the sources as they are, in the tests' cache (built now when it is not there). */
export function testImage(): Promise<CachedImage> {
  image ??= cachedImage((line) => process.stderr.write(`image: ${line}\n`));
  return image;
}

let archive: Promise<string> | undefined;
/** That image as an OCI archive (containerd imports archives). */
export function testImageArchive(): Promise<string> {
  archive ??= imageArchive((line) => process.stderr.write(`image: ${line}\n`)).then((a) => a.file);
  return archive;
}

/** podman run flags for the DaemonSet's agent container as its manifest sets it up (manifests/base/daemonset). */
export async function asDeployedFlags(): Promise<string[]> {
  const container = await agentContainer();
  const security = container.securityContext ?? {};
  const flags = ['--user', `${security.runAsUser ?? 65534}:${security.runAsGroup ?? 65534}`];
  if (security.readOnlyRootFilesystem) flags.push('--read-only');
  if (security.allowPrivilegeEscalation === false) flags.push('--security-opt', 'no-new-privileges');
  for (const cap of security.capabilities?.drop ?? []) flags.push('--cap-drop', cap);
  const limit = /^(\d+)Mi$/.exec(container.resources?.limits?.memory ?? '');
  if (limit) flags.push('--memory', `${limit[1]}m`, '--memory-swap', `${limit[1]}m`);
  // /tmp: the pod's emptyDir (sizeLimit 16Mi) over the read-only root.
  flags.push('--tmpfs', '/tmp:rw,size=16m');
  for (const e of container.env ?? []) if (typeof e.value === 'string') flags.push('--env', `${e.name}=${e.value}`);
  return flags;
}

/** `podman run --rm` of the test image: `flags` before the image, `args` after it (the entrypoint's arguments). */
export async function runImage(flags: string[], args: string[]): Promise<CommandResult> {
  const { store, name } = await testImage();
  const container = `nta-test-${process.pid}-${randomBytes(4).toString('hex')}`;
  const network = flags.some((f) => f.startsWith('--network')) ? [] : ['--network=none'];
  return podman(store, ['run', '--rm', '--name', container, ...network, ...limitFlags(), ...flags, name, ...args]);
}

/** A host path for a bind mount exists (podman refuses a missing one). */
export function mount(host: string, container: string, mode = 'ro'): string[] {
  if (!existsSync(host)) throw new Error(`bind mount source ${host} does not exist`);
  return ['--volume', `${host}:${container}:${mode}`];
}
