// A real node for a test file: `../shared/envtest/real-node` (or $REAL_NODE_SCRIPT) runs a real kubelet
// v1.36.2 with Debian's containerd, runc and CNI bridge in its own PID, mount and network namespaces,
// registered with a ControlPlane of test/helpers/control-plane.ts (started with
// REAL_NODE_APISERVER_ARGS). Its HTTPS port does real authentication and authorization (TokenReview,
// SubjectAccessReview) and serves /configz; the root network namespace reaches it and its pods at the
// node's addresses. Images come from archives (no registry): pods run them with imagePullPolicy Never.
// `hostRoot` is the kubelet's own view of the machine (/proc/<pid>/root): its /proc shows the node's
// PID namespace only, so a scan there sees this kubelet and no other on the machine. Its pods' hostPath
// volumes are the machine's: a DirectoryOrCreate one the machine lacks would be made on it. Root only;
// heavy (~4-30 s to start, more with images to import): one per test file.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { ControlPlane } from './control-plane.ts';
import { envtestAssets } from './control-plane.ts';
import { tier } from './tier.ts';

const run = promisify(execFile);
/** The shared envtest beside the project (as .ci/run finds it), or REAL_NODE_SCRIPT (a worktree elsewhere). */
const SCRIPT = process.env.REAL_NODE_SCRIPT ?? fileURLToPath(new URL('../../../shared/envtest/real-node', import.meta.url));
const MISSING_TOOLS = ['containerd', 'runc', 'socat', 'nsenter', 'unshare', 'ip'];

/** The apiserver flag real-node requires: the apiserver reaches kubelets by their InternalIP. */
export const REAL_NODE_APISERVER_ARGS = ['--kubelet-preferred-address-types=InternalIP'];

function missing(): string | undefined {
  if (process.getuid?.() !== 0) return 'the real node needs root (containerd, runc, cgroups, network namespaces)';
  if (!existsSync(SCRIPT)) return `no ${SCRIPT} (the shared envtest's real-node; set REAL_NODE_SCRIPT to it)`;
  const assets = envtestAssets();
  if (!('dir' in assets)) return assets.missing;
  if (!existsSync(path.join(assets.dir, 'kubelet'))) return `KUBEBUILDER_ASSETS=${assets.dir} has no kubelet`;
  const paths = (process.env.PATH ?? '').split(':').concat(['/usr/sbin', '/sbin', '/usr/bin']);
  const absent = MISSING_TOOLS.filter((tool) => !paths.some((dir) => existsSync(path.join(dir, tool))));
  if (!existsSync('/usr/lib/cni/bridge')) absent.push('the CNI bridge plugin');
  return absent.length > 0 ? `the real node needs ${absent.join(', ')} (apt-get install containerd runc socat util-linux iproute2 containernetworking-plugins)` : undefined;
}

/** For `describe(name, realNodeTier(), …)`: skips locally with what is missing; under CI=true that is an error. */
export function realNodeTier(): { skip?: string } {
  return tier(missing(), 'the real node');
}

function parseEnv(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const m = /^export ([A-Z_]+)=(.*)$/.exec(line);
    if (m) out[m[1] as string] = (m[2] as string).replace(/^'(.*)'$/, '$1');
  }
  return out;
}

export class RealNode {
  readonly dir: string;
  readonly env: Record<string, string>;
  readonly cpDir: string;

  private constructor(dir: string, cpDir: string, env: Record<string, string>) {
    this.dir = dir;
    this.cpDir = cpDir;
    this.env = env;
  }

  /**
   * Starts a node named `name` on `cp` (which must run with REAL_NODE_APISERVER_ARGS), with `images`
   * (OCI or docker archives) imported into its containerd; waits until it is Ready. `env`: the
   * script's REAL_NODE_* settings (REAL_NODE_KUBE_API_QPS, …).
   */
  static async start(cp: ControlPlane, name: string, env: Record<string, string> = {}, images: string[] = []): Promise<RealNode> {
    const dir = await mkdtemp(path.join(tmpdir(), 'nta-real-node-'));
    const cpDir = await mkdtemp(path.join(tmpdir(), 'nta-real-node-cp-'));
    const apiserver = cp.pidOf('kube-apiserver');
    await writeFile(path.join(cpDir, 'env'), [
      `export KUBE_URL=${cp.url}`, `export KUBE_CA_FILE=${cp.caFile}`, `export KUBE_CA_KEY_FILE=${cp.caKeyFile}`,
      `export KUBE_ADMIN_TOKEN=${cp.adminToken}`, `export KUBE_ASSETS=${cp.assets}`, `export KUBE_APISERVER_PID=${apiserver ?? ''}`, '',
    ].join('\n'));
    const node = new RealNode(dir, cpDir, {});
    try {
      await run(SCRIPT, ['start', dir, '--control-plane', cpDir, '--name', name, ...images.flatMap((image) => ['--image', image])],
        { env: { ...process.env, ...env }, timeout: 180_000 });
    } catch (err) {
      const log = await readFile(path.join(dir, 'logs/kubelet.log'), 'utf8').catch(() => '');
      await node.stop();
      throw new Error(`real-node start failed: ${(err as { stderr?: string }).stderr ?? (err as Error).message}\n${log.split('\n').slice(-20).join('\n')}`);
    }
    return new RealNode(dir, cpDir, parseEnv(await readFile(path.join(dir, 'env'), 'utf8')));
  }

  get configFile(): string {
    return path.join(this.dir, 'kubelet/config.yaml');
  }

  /** The kubelet's PID in this (the root) PID namespace: the process whose --config is this node's. */
  async kubeletPid(): Promise<number> {
    const wanted = `--config=${this.configFile}`;
    for (const entry of await readdir('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      const cmdline = await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '');
      const argv = cmdline.split('\0');
      if (path.basename(argv[0] ?? '') === 'kubelet' && argv.includes(wanted)) return Number(entry);
    }
    throw new Error(`no kubelet with ${wanted} runs`);
  }

  /** The kubelet's own view of the machine: its mount namespace, whose /proc shows the node's PIDs only. */
  async hostRoot(): Promise<string> {
    return `/proc/${await this.kubeletPid()}/root`;
  }

  async stop(): Promise<void> {
    await run(SCRIPT, ['stop', this.dir], { timeout: 60_000 }).catch(() => undefined);
    await rm(this.dir, { recursive: true, force: true });
    await rm(this.cpDir, { recursive: true, force: true });
  }
}
