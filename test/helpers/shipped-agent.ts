// The agent's command line as it ships: the image's ENTRYPOINT (or the DaemonSet's `command`, which
// replaces it), the DaemonSet's args and the literal values of its env (NODE_OPTIONS, malloc
// tunables). Tests and benches run the local bundle with exactly these Node flags and environment,
// swapping only what points into the container (the bundle path, /host, the rules ConfigMap).
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parse } from 'yaml';
import { parseDockerfile } from './dockerfile.ts';
import { REPO } from './manifests.ts';

export interface ShippedCommand {
  /** Flags before the script: `node --lite-mode /app/…` → ['--lite-mode']. */
  nodeFlags: string[];
  /** The script the image runs. */
  script: string;
  /** The DaemonSet's args (`agent`, `--host-root=/host`, …). */
  args: string[];
  /** Env entries with a literal value (NODE_OPTIONS, GLIBC_TUNABLES, …); fieldRefs left out. */
  env: Record<string, string>;
  /** The container's memory request and limit as written (e.g. "64Mi"). */
  memory: { request?: string; limit?: string };
}

/** The DaemonSet's agent container. */
export async function agentContainer(): Promise<any> {
  const ds = parse(await readFile(path.join(REPO, 'manifests/base/daemonset/daemonset.yaml'), 'utf8'));
  return ds.spec.template.spec.containers.find((c: { name: string }) => c.name === 'agent');
}

/** The image's ENTRYPOINT, JSON form: ['node', …flags, script]. */
export async function imageEntrypoint(): Promise<string[]> {
  const { stages } = parseDockerfile(await readFile(path.join(REPO, 'Dockerfile'), 'utf8'));
  const entry = stages.at(-1)?.steps.filter((s) => s.keyword === 'ENTRYPOINT').at(-1)?.args;
  if (!entry?.length) throw new Error('Dockerfile: the runtime stage has no ENTRYPOINT');
  return entry;
}

/** Node flags and script of a `node [flags] script` command line. */
export function splitNodeCommand(command: string[]): { nodeFlags: string[]; script: string } {
  const [binary, ...rest] = command;
  if (binary !== 'node') throw new Error(`expected "node …", got ${JSON.stringify(command)}`);
  const at = rest.findIndex((a) => !a.startsWith('-'));
  if (at < 0) throw new Error(`no script in ${JSON.stringify(command)}`);
  return { nodeFlags: rest.slice(0, at), script: rest[at] as string };
}

export async function shippedAgentCommand(): Promise<ShippedCommand> {
  const container = await agentContainer();
  const command: string[] = container.command ?? await imageEntrypoint();
  const env: Record<string, string> = {};
  for (const e of container.env ?? []) if (typeof e.value === 'string') env[e.name] = e.value;
  return {
    ...splitNodeCommand(command), args: container.args ?? [], env,
    memory: { request: container.resources?.requests?.memory, limit: container.resources?.limits?.memory },
  };
}

/**
 * The DaemonSet's args with `--name=value` flags replaced (or dropped, for undefined) by name;
 * flags not in the DaemonSet are appended. Flags without a value (`--no-bundled-rules`) are
 * dropped when named with undefined.
 */
export function withFlags(args: string[], overrides: Record<string, string | undefined>): string[] {
  const nameOf = (arg: string) => arg.replace(/^--/, '').split('=')[0] as string;
  const kept = args.filter((a) => !(a.startsWith('--') && nameOf(a) in overrides));
  const added = Object.entries(overrides).flatMap(([name, value]) => (value === undefined ? [] : [`--${name}=${value}`]));
  return [...kept, ...added];
}

/** The local equivalent of the DaemonSet's argv: node flags, the local bundle, args with overrides. */
export function localArgv(shipped: ShippedCommand, bundle: string, overrides: Record<string, string | undefined>): string[] {
  return [...shipped.nodeFlags, bundle, ...withFlags(shipped.args, overrides)];
}

/** "96Mi" → 96 (MiB); undefined for a missing or unparsable quantity. */
export function mebibytes(quantity: string | undefined): number | undefined {
  const m = /^(\d+)(Mi|Gi)$/.exec(quantity ?? '');
  if (!m) return undefined;
  return Number(m[1]) * (m[2] === 'Gi' ? 1024 : 1);
}
