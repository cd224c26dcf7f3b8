// A real node for the real control plane: the envtest `real-node` script (../shared/envtest/real-node,
// or $REAL_NODE) runs a real kubelet v1.36.2 with Debian's containerd, runc and CNI bridge in
// namespaces of its own, in a temp dir removed after. Images come from archives (no registry): the
// kubelet's pods run them with imagePullPolicy Never. Needs root.
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runCommand } from '../../scripts/run-command.ts';
import type { ControlPlane } from './control-plane.ts';
import { REPO } from './manifests.ts';
import { tier } from './tier.ts';
import { toolPath } from './tools.ts';

/** The script: $REAL_NODE, else the envtest folder beside the project. */
export function realNodeScript(): string | undefined {
  const script = process.env.REAL_NODE ?? path.join(REPO, '../shared/envtest/real-node');
  return existsSync(script) ? script : undefined;
}

/** What a real node needs that this machine lacks; undefined when nothing is. */
export function realNodeMissing(): string | undefined {
  if (!realNodeScript()) return 'no real-node script: set REAL_NODE to the envtest real-node script (.ci/run sets it)';
  if (process.getuid?.() !== 0) return 'a real node needs root (containerd, cgroups, network namespaces)';
  const needed = ['containerd', 'runc', 'socat'].filter((tool) => !toolPath(tool));
  if (!existsSync('/usr/lib/cni/bridge')) needed.push('containernetworking-plugins');
  if (needed.length > 0) return `${needed.join(', ')} not found: apt-get install containerd runc socat containernetworking-plugins (.ci/run does this)`;
  const assets = process.env.KUBEBUILDER_ASSETS;
  if (assets && !existsSync(path.join(assets, 'kubelet'))) return `KUBEBUILDER_ASSETS=${assets} has no kubelet`;
  return undefined;
}

/** For `describe(name, realNodeTier(), …)`. */
export function realNodeTier(): { skip?: string } {
  return tier(realNodeMissing(), 'the real node');
}

async function script(args: string[], env: NodeJS.ProcessEnv = {}): Promise<string> {
  const result = await runCommand(realNodeScript() as string, args, { env: { ...process.env, ...env } });
  if (result.code !== 0) throw new Error(`real-node ${args.slice(0, 2).join(' ')}: exit ${result.code}\n${result.stderr.trim()}`);
  return result.stdout;
}

/** `real-node prepare`'s directory and the kube-apiserver flags it prints: start the control plane with them. */
export async function prepareRealNode(): Promise<{ dir: string; apiserverArgs: string[] }> {
  const dir = await mkdtemp(path.join(tmpdir(), 'nta-node-'));
  return { dir, apiserverArgs: (await script(['prepare', dir])).trim().split(/\s+/) };
}

export interface RealNodeOptions { name: string; images?: string[]; kubeApiQps?: number; kubeApiBurst?: number }

export class RealNode {
  readonly name: string;
  readonly dir: string;
  /** DIR/env: REAL_NODE_IP, REAL_NODE_KUBELET_URL, … */
  readonly env: Record<string, string>;

  private constructor(name: string, dir: string) {
    this.name = name;
    this.dir = dir;
    this.env = Object.fromEntries(readFileSync(path.join(dir, 'env'), 'utf8').split('\n')
      .map((line) => /^export (\w+)=(.*)$/.exec(line)).filter((m) => m !== null).map((m) => [m[1], m[2]]));
  }

  /** Starts the node in `dir` (from prepareRealNode) against `cp`; resolves once its Node is Ready. */
  static async start(cp: ControlPlane, dir: string, options: RealNodeOptions): Promise<RealNode> {
    const env: NodeJS.ProcessEnv = {};
    if (options.kubeApiQps !== undefined) env.REAL_NODE_KUBE_API_QPS = String(options.kubeApiQps);
    if (options.kubeApiBurst !== undefined) env.REAL_NODE_KUBE_API_BURST = String(options.kubeApiBurst);
    const images = (options.images ?? []).flatMap((image) => ['--image', image]);
    await cp.writeEnvFile();
    try {
      await script(['start', dir, '--control-plane', cp.dir, '--name', options.name, ...images], env);
    } catch (e) {
      await script(['stop', dir]).catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
      throw e;
    }
    return new RealNode(options.name, dir);
  }

  /** The kubelet's config file, as the kubelet's --config names it. */
  get kubeletConfig(): string {
    return path.join(this.dir, 'kubelet/config.yaml');
  }

  /** Stops the kubelet, containerd and every pod (the node's namespaces go with them) and removes the dir. */
  async stop(): Promise<void> {
    await script(['stop', this.dir]).catch(() => undefined);
    await rm(this.dir, { recursive: true, force: true });
  }
}
