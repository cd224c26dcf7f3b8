// Real kubelets for the real-server tier: `kubemark --morph=kubelet` (hollow node) runs the
// kubelet's own code (registration, status manager, pod workers, its API client with its own
// --kube-api-qps/--kube-api-burst limiter) against a fake container runtime. Each node here runs as
// the node would (a `system:node:NAME` client certificate: the Node authorizer and NodeRestriction
// apply), on its own free ports, with its own TMPDIR, and is started through a symlink named
// `kubelet` so its process looks like the kubelet (argv[0], /proc/PID/comm) to a collector. `stop()`
// signals exactly the PID this module started, then removes what it left: its dir, and the root dir
// kubemark makes under /tmp whatever TMPDIR says (MakeTempDirOrDie("hollow-kubelet.", "")), which its
// log names ("Using /tmp/hollow-kubelet.N as root dir for hollow-kubelet"), one per launch, and the
// fake runtime's sockets (/tmp/kubelet_remote_N.sock, a fixed place) no process listens on any more.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, symlink, unlink } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort, type ControlPlane } from './control-plane.ts';

export interface Limits {
  qps: number;
  burst: number;
}

export interface HollowNodeOptions extends Limits {
  /** 'node' (default): a system:node:NAME client certificate; 'admin': the control plane's admin token. */
  identity?: 'node' | 'admin';
  maxPods?: number;
  /** How long to wait for the Node to be Ready (default 60 s). */
  readyTimeoutMs?: number;
  /**
   * Run it as PID 1 of its own PID namespace (unshare, with its own /proc): a scan or agent started
   * there with `inNamespace()` sees this kubelet and no other (tests and other kubelets on the
   * machine run beside it). Needs root (CAP_SYS_ADMIN).
   */
  ownPidNamespace?: boolean;
}

const STOP_GRACE_MS = 10_000;
const running = new Set<ChildProcess>();
process.once('exit', () => { for (const child of running) child.kill('SIGKILL'); });

/**
 * kubemark's fake runtime listens on /tmp/kubelet_remote_N.sock whatever TMPDIR says and never
 * removes it. It binds a temp name and renames it, so a socket at that name refusing connections
 * has no process left behind it: removed. One that accepts (another suite's kubelet) is left alone.
 */
async function removeDeadRuntimeSockets(): Promise<void> {
  const names = (await readdir('/tmp').catch(() => [] as string[])).filter((n) => /^kubelet_remote_\d+\.sock$/.test(n));
  await Promise.all(names.map(async (name) => {
    const socket = path.join('/tmp', name);
    const refused = await new Promise<boolean>((resolve) => {
      const probe = connect({ path: socket, timeout: 2000 });
      probe.once('connect', () => { probe.destroy(); resolve(false); });
      probe.once('timeout', () => { probe.destroy(); resolve(false); });
      probe.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
    });
    if (refused) await unlink(socket).catch(() => undefined);
  }));
}

/** The hollow kubelet binary, or why this tier cannot run (an older assets dir has none). */
export function kubemarkPath(cp: ControlPlane): { path: string } | { missing: string } {
  const file = path.join(cp.assets, 'kubemark');
  return existsSync(file) ? { path: file } : { missing: `${cp.assets} has no kubemark: the real-kubelet tier needs the envtest assets with kubemark (../shared/envtest/assets)` };
}

export class HollowNode {
  readonly name: string;
  readonly dir: string;
  /** The `kubelet` symlink the process is started through. */
  readonly binary: string;
  readonly kubeconfig: string;
  kubeletPort = 0;
  readOnlyPort = 0;
  limits: Limits;
  private child: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();
  private readonly cp: ControlPlane;
  private readonly opts: HollowNodeOptions;

  private constructor(cp: ControlPlane, name: string, dir: string, opts: HollowNodeOptions) {
    this.cp = cp;
    this.name = name;
    this.dir = dir;
    this.opts = opts;
    this.limits = { qps: opts.qps, burst: opts.burst };
    this.binary = path.join(dir, 'bin', 'kubelet');
    this.kubeconfig = path.join(dir, 'kubeconfig');
  }

  /** Registers `name` and waits until its Node is Ready (about 5 s). */
  static async start(cp: ControlPlane, name: string, opts: HollowNodeOptions): Promise<HollowNode> {
    const found = kubemarkPath(cp);
    if ('missing' in found) throw new Error(found.missing);
    const dir = await mkdtemp(path.join(tmpdir(), `nta-hollow-${name}-`));
    const node = new HollowNode(cp, name, dir, opts);
    try {
      await mkdir(path.join(dir, 'bin'));
      await mkdir(path.join(dir, 'tmp'));
      await symlink(found.path, node.binary);
      if (opts.identity === 'admin') await cp.writeKubeconfig(node.kubeconfig, 'admin', cp.adminToken);
      else {
        const { cert, key } = await cp.clientCert(`system:node:${name}`, 'system:nodes');
        await cp.writeKubeconfigWith(node.kubeconfig, `system:node:${name}`, {
          'client-certificate-data': Buffer.from(cert).toString('base64'), 'client-key-data': Buffer.from(key).toString('base64'),
        });
      }
      node.kubeletPort = await freePort();
      node.readOnlyPort = await freePort();
      await node.launch();
    } catch (err) {
      await node.stop();
      throw err;
    }
    return node;
  }

  /** Several at once (each registers in parallel): [name, limits] pairs. */
  static async startAll(cp: ControlPlane, nodes: [string, HollowNodeOptions][]): Promise<HollowNode[]> {
    const started = await Promise.allSettled(nodes.map(([name, opts]) => HollowNode.start(cp, name, opts)));
    const failed = started.find((s) => s.status === 'rejected');
    if (failed) {
      await Promise.all(started.map((s) => (s.status === 'fulfilled' ? s.value.stop() : undefined)));
      throw (failed as PromiseRejectedResult).reason;
    }
    return started.map((s) => (s as PromiseFulfilledResult<HollowNode>).value);
  }

  /** The kubelet's PID as this process sees it (inside its own namespace it is 1). */
  get pid(): number | undefined {
    if (!this.child) return undefined;
    return this.opts.ownPidNamespace ? this.kubeletPid(this.child) : this.child.pid;
  }

  /** unshare's forked child: the kubelet. */
  private kubeletPid(child: ChildProcess): number | undefined {
    try {
      const [first] = readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean);
      return first === undefined ? undefined : Number(first);
    } catch {
      return undefined;
    }
  }

  /** argv prefix that runs a command in this kubelet's PID and mount namespaces (where /proc shows only it). */
  inNamespace(argv: string[]): string[] {
    if (!this.opts.ownPidNamespace) return argv;
    return ['nsenter', '-t', String(this.pid), '-p', '-m', '--', ...argv];
  }

  /** The kubelet's HTTPS endpoint (/metrics, /pods; its own authn/authz). */
  get url(): string {
    return `https://127.0.0.1:${this.kubeletPort}`;
  }

  get logFile(): string {
    return path.join(this.dir, 'kubelet.log');
  }

  /** The flags the process runs with (argv after the binary). */
  args(): string[] {
    return [
      '--morph=kubelet', `--name=${this.name}`, `--kubeconfig=${this.kubeconfig}`,
      `--kube-api-qps=${this.limits.qps}`, `--kube-api-burst=${this.limits.burst}`, '--use-host-image-service=false',
      `--kubelet-port=${this.kubeletPort}`, `--kubelet-read-only-port=${this.readOnlyPort}`, `--max-pods=${this.opts.maxPods ?? 110}`,
    ];
  }

  /** Stop, then start again with other client limits (as after editing the kubelet's config and restarting it). */
  async restart(limits: Limits): Promise<void> {
    await this.stopProcess();
    this.limits = limits;
    await this.launch();
  }

  /** SIGSTOP / SIGCONT to its PID: a kubelet that is there (its Node still Ready for a while) but writes nothing. */
  pause(): void {
    this.child?.kill('SIGSTOP');
  }

  resume(): void {
    this.child?.kill('SIGCONT');
  }

  /** SIGTERM to its PID (KILL after 10 s), then its dir (TMPDIR, log), the kubelet root dirs its log names and dead runtime sockets removed. */
  async stop(): Promise<void> {
    await this.stopProcess();
    await Promise.all([...this.rootDirs().map((dir) => rm(dir, { recursive: true, force: true })), removeDeadRuntimeSockets()]);
    await rm(this.dir, { recursive: true, force: true });
  }

  /** The root dirs kubemark made for this node's launches, as its log names them. */
  private rootDirs(): string[] {
    const log = existsSync(this.logFile) ? readFileSync(this.logFile, 'utf8') : '';
    return [...log.matchAll(/Using (\/tmp\/hollow-kubelet\.\d+) as root dir for hollow-kubelet/g)].map((m) => m[1] as string);
  }

  private async launch(): Promise<void> {
    // The last heartbeat before this process exists (a stopped kubelet's, on a restart): Ready counts
    // only with a newer one, which only this process can have written.
    const before = await this.readyCondition();
    const log = openSync(this.logFile, 'a');
    try {
      const [command, argv] = this.opts.ownPidNamespace
        ? ['unshare', ['--pid', '--fork', '--mount-proc', '--kill-child=SIGTERM', '--', this.binary, ...this.args()]]
        : [this.binary, this.args()];
      const child = spawn(command, argv, { stdio: ['ignore', log, log], env: { PATH: process.env.PATH, TMPDIR: path.join(this.dir, 'tmp') } });
      running.add(child);
      this.child = child;
      this.exited = new Promise<void>((resolve) => child.once('exit', () => { running.delete(child); resolve(); }));
    } finally {
      closeSync(log);
    }
    await this.waitReady(before?.lastHeartbeatTime);
  }

  private async readyCondition(): Promise<{ status: string; lastHeartbeatTime: string } | undefined> {
    const res = await this.cp.request('GET', `/api/v1/nodes/${this.name}`);
    return res.status === 200 ? res.body.status?.conditions?.find((c: any) => c.type === 'Ready') : undefined;
  }

  private async stopProcess(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    // In its own namespace: signal the kubelet itself; unshare exits when it has.
    const kubelet = this.opts.ownPidNamespace ? this.kubeletPid(child) : undefined;
    const signal = (name: NodeJS.Signals): void => {
      if (kubelet !== undefined) { try { process.kill(kubelet, name); } catch { /* gone */ } } else child.kill(name);
    };
    signal('SIGCONT');
    signal('SIGTERM');
    const timer = setTimeout(() => { signal('SIGKILL'); child.kill('SIGKILL'); }, STOP_GRACE_MS);
    await this.exited;
    clearTimeout(timer);
  }

  /**
   * Ready=True with a heartbeat after `previousHeartbeat` (the one before this process started: a
   * heartbeat after it is this process's own, whatever the clocks), the not-ready taint gone
   * (removed here when no controller manager does).
   */
  private async waitReady(previousHeartbeat: string | undefined): Promise<void> {
    const deadline = Date.now() + (this.opts.readyTimeoutMs ?? 60_000);
    const after = previousHeartbeat === undefined ? -Infinity : Date.parse(previousHeartbeat);
    while (Date.now() < deadline) {
      if (this.child === undefined || this.child.exitCode !== null) throw new Error(`hollow kubelet ${this.name} exited; see ${this.logFile}`);
      const res = await this.cp.request('GET', `/api/v1/nodes/${this.name}`);
      const ready = res.status === 200 ? res.body.status?.conditions?.find((c: any) => c.type === 'Ready') : undefined;
      if (ready?.status === 'True' && Date.parse(ready.lastHeartbeatTime) > after) {
        const taints = (res.body.spec?.taints ?? []) as { key: string }[];
        if (!taints.some((t) => t.key === 'node.kubernetes.io/not-ready')) return;
        const kept = taints.filter((t) => t.key !== 'node.kubernetes.io/not-ready');
        await this.cp.request('PATCH', `/api/v1/nodes/${this.name}`, { spec: { taints: kept } }, { contentType: 'application/merge-patch+json' });
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error(`hollow kubelet ${this.name} not Ready within ${(this.opts.readyTimeoutMs ?? 60_000) / 1000} s; see ${this.logFile}`);
  }
}
