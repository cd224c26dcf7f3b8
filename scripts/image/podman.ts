// podman as this project runs it (Debian's podman 4 and runc): the global flags for a store of the
// caller's own (--root/--runroot, for tests that must not share one), and the flags a machine needs:
//   - cgroups v1 with a hybrid unified mount: crun refuses it, runc works (--runtime runc);
//   - a process without CAP_SYS_RESOURCE cannot raise rlimits, so podman's defaults (nofile 1048576)
//     fail: --ulimit nofile=10000:10000 --ulimit nproc=4096:4096 stays under the hard limits.
// Where neither holds (cgroup v2, a normal root) nothing is added: podman's defaults apply.
import { existsSync, readFileSync } from 'node:fs';
import { type CommandResult, runCommand } from '../run-command.ts';

export interface Store { root: string; runroot: string }

/** CAP_SYS_RESOURCE is capability 24: its bit in CapEff of /proc/self/status. */
export function hasCapSysResource(status = readFileSync('/proc/self/status', 'utf8')): boolean {
  const hex = /^CapEff:\s*([0-9a-f]+)$/m.exec(status)?.[1];
  return hex !== undefined && (BigInt(`0x${hex}`) & (1n << 24n)) !== 0n;
}

/** True when /sys/fs/cgroup is cgroup v2 alone (its root has cgroup.controllers). */
export function unifiedCgroups(): boolean {
  return existsSync('/sys/fs/cgroup/cgroup.controllers');
}

/** podman's global flags: the store, and the runtime this machine's cgroups allow. */
export function globalFlags(store?: Store): string[] {
  return [
    ...(store ? ['--root', store.root, '--runroot', store.runroot] : []),
    ...(unifiedCgroups() ? [] : ['--runtime', 'runc']),
  ];
}

/** Flags for `podman build` and `podman run`: rlimits this process may set. */
export function limitFlags(): string[] {
  return hasCapSysResource() ? [] : ['--ulimit', 'nofile=10000:10000', '--ulimit', 'nproc=4096:4096'];
}

/** Runs podman to its end; `echo` streams its output to our stderr as well (a build's progress). */
export async function podman(store: Store | undefined, args: string[], opts: { echo?: boolean; input?: string } = {}): Promise<CommandResult> {
  const result = await runCommand('podman', [...globalFlags(store), ...args], opts);
  return result.code === 127 ? { ...result, stderr: `${result.stderr} (Debian: apt-get install podman runc)` } : result;
}

/** Like podman(), but throws with podman's stderr unless it succeeded; returns stdout. */
export async function mustPodman(store: Store | undefined, args: string[], opts: { echo?: boolean; input?: string } = {}): Promise<string> {
  const result = await podman(store, args, opts);
  if (result.code !== 0) throw new Error(`podman ${args.slice(0, 2).join(' ')} failed (exit ${result.code}): ${result.stderr.trim().split('\n').slice(-8).join('\n')}`);
  return result.stdout;
}

/** Whether the store holds an image of that name. */
export async function imageExists(store: Store | undefined, name: string): Promise<boolean> {
  return (await podman(store, ['image', 'exists', name])).code === 0;
}
