// An in-process stand-in for kube-apiserver on 127.0.0.1, speaking the real wire format for what
// the agent and `kubectl describe node` use: discovery, Nodes (list/get/watch/merge-patch), Events,
// the agent's watched Pods, CSIDriver, CSINode (test/helpers/fake-watchable.ts). resourceVersion increments on every write; watches stream newline-delimited JSON events.
// Faults (409/429 with Retry-After/500/hang) are injected per method and path prefix.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeCollections, parseSelector } from './fake-collections.ts';
import { WatchableCollection } from './fake-watchable.ts';

export interface RecordedRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  contentType: string | undefined;
  body: unknown;
  /** performance.now() when the request arrived. */
  at: number;
}

export interface Fault {
  status: number;
  retryAfter?: number;
  /** Never answer (the client's timeout must handle it). */
  hang?: boolean;
  /** Answer normally, but only after this many milliseconds. */
  delayMs?: number;
  /** Match only watch requests (true) or only the rest (false); either when unset. */
  watch?: boolean;
  /** Answer `status` with these raw lines as the body (a malformed watch stream or list), then close. */
  lines?: string[];
  /** Send `status` and the headers, then nothing, keeping the connection open (a silent watch). */
  silent?: boolean;
}

type Obj = Record<string, any>;

interface Watcher {
  res: ServerResponse;
  name: string | undefined;
  /** allowWatchBookmarks=true: kube-apiserver sends BOOKMARK events only to watches that ask. */
  bookmarks: boolean;
}

const JSON_TYPE = 'application/json';

const leftAtExit = new Set<string>();

function removeAtExit(dir: string): void {
  if (leftAtExit.size === 0) process.once('exit', () => { for (const d of leftAtExit) rmSync(d, { recursive: true, force: true }); });
  leftAtExit.add(dir);
}

export class FakeApiServer {
  readonly requests: RecordedRequest[] = [];
  readonly events: Obj[] = [];
  /** Leases (the agent's heartbeat) by "namespace/name": GET, merge PATCH, POST. */
  readonly leases = new Map<string, Obj>();
  /** ConfigMaps, Pods (+ logs), PVCs, StorageClasses, CSIDrivers, PipelineRuns: see fake-collections.ts. */
  readonly collections = new FakeCollections();
  private readonly nodes = new Map<string, Obj>();
  private readonly watchers = new Set<Watcher>();
  private readonly faults: { method: string; prefix: string; fault: Fault }[] = [];
  private readonly hung = new Set<ServerResponse>();
  private readonly sockets = new Set<import('node:net').Socket>();
  /** Hung or silent responses whose connection the client closed (a timeout or stop that really aborted). */
  abandoned = 0;
  private rv = 100;
  /** Watches asking for an older resourceVersion get 410 Gone (as after etcd compaction). */
  oldestWatchableRv = 0;
  /** Close each watch after this long, as kube-apiserver does (30–60 min by default); 0 = never. */
  watchTimeoutMs = 0;
  private server: Server | undefined;
  port = 0;
  private readonly versions = { next: () => this.nextRv(), current: () => String(this.rv), oldestWatchable: () => this.oldestWatchableRv, watchTimeoutMs: () => this.watchTimeoutMs };
  /** Pods (namespaced; list/watch across namespaces with fieldSelector spec.nodeName), CSIDriver, CSINode. */
  readonly pods = new WatchableCollection('Pod', 'v1', this.versions);
  readonly csiDrivers = new WatchableCollection('CSIDriver', 'storage.k8s.io/v1', this.versions);
  readonly csiNodes = new WatchableCollection('CSINode', 'storage.k8s.io/v1', this.versions);
  private readonly watchable: Record<string, WatchableCollection> = {
    '/api/v1/pods': this.pods,
    '/apis/storage.k8s.io/v1/csidrivers': this.csiDrivers,
    '/apis/storage.k8s.io/v1/csinodes': this.csiNodes,
  };

  addNode(name: string, annotations: Record<string, string> = {}): Obj {
    const node = {
      kind: 'Node', apiVersion: 'v1',
      metadata: {
        name, uid: `uid-${name}`, resourceVersion: this.nextRv(), creationTimestamp: '2026-01-01T00:00:00Z',
        labels: { 'kubernetes.io/hostname': name }, annotations,
      },
      spec: {},
      status: { conditions: [], addresses: [{ type: 'Hostname', address: name }], nodeInfo: {}, capacity: {}, allocatable: {} },
    };
    this.nodes.set(name, node);
    this.broadcast('ADDED', node);
    return node;
  }

  node(name: string): Obj | undefined {
    return this.nodes.get(name);
  }

  /** Someone else edits the Node (kubectl annotate, another controller). */
  editNode(name: string, edit: (node: Obj) => void): void {
    const node = this.nodes.get(name) as Obj;
    edit(node);
    node.metadata.resourceVersion = this.nextRv();
    this.broadcast('MODIFIED', node);
  }

  /** The next matching requests get these faults, in order. */
  inject(method: string, pathPrefix: string, ...faults: Fault[]): void {
    for (const fault of faults) this.faults.push({ method, prefix: pathPrefix, fault });
  }

  clearFaults(): void {
    this.faults.length = 0;
  }

  count(method: string, pathPrefix = '/', filter: (r: RecordedRequest) => boolean = () => true): number {
    return this.requests.filter((r) => r.method === method && r.path.startsWith(pathPrefix) && filter(r)).length;
  }

  /** TCP connections open to the server right now. */
  openConnections(): number {
    return this.sockets.size;
  }

  writes(): number {
    return this.requests.filter((r) => r.method !== 'GET').length;
  }

  bookmark(): void {
    this.broadcast('BOOKMARK', { kind: 'Node', apiVersion: 'v1', metadata: { resourceVersion: String(this.rv) } });
  }

  /**
   * kube-apiserver restarted: open watches end, and its new watch cache starts at the current
   * resourceVersion, so a re-watch from any older one is answered 410 (on a real server even
   * without etcd compaction; test/e2e/agent.test.ts).
   */
  restartWatchCache(): void {
    this.oldestWatchableRv = this.rv;
    for (const w of this.watchers) w.res.end();
    this.watchers.clear();
    for (const c of Object.values(this.watchable)) { c.close(); }
  }

  /** Simulate compaction: every open watch gets ERROR 410 and is closed; resuming from its rv fails too. */
  expireWatches(): void {
    this.oldestWatchableRv = this.rv;
    for (const w of this.watchers) {
      w.res.end(`${JSON.stringify({ type: 'ERROR', object: status(410, 'Expired', 'too old resource version') })}\n`);
    }
    this.watchers.clear();
    for (const c of Object.values(this.watchable)) c.expire();
  }

  async start(): Promise<void> {
    this.server = createServer((req, res) => void this.handle(req, res));
    this.server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    for (const w of this.watchers) w.res.end();
    for (const c of Object.values(this.watchable)) c.close();
    const hung = [...this.hung];
    this.hung.clear();
    for (const res of hung) res.destroy();
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }

  /**
   * A kubeconfig for this server; client-node 2.x needs insecure-skip-tls-verify for plain HTTP. Its
   * temp dir stays until the test file's process exits: a test may use it after stop() (a refused connection).
   */
  writeKubeconfig(): string {
    const dir = mkdtempSync(join(tmpdir(), 'nta-kubeconfig-'));
    removeAtExit(dir);
    const file = join(dir, 'kubeconfig');
    writeFileSync(file, [
      'apiVersion: v1', 'kind: Config', 'current-context: fake',
      'clusters:', `- name: fake`, '  cluster:', `    server: http://127.0.0.1:${this.port}`, '    insecure-skip-tls-verify: true',
      'users:', '- name: agent', '  user:', '    token: test-token',
      'contexts:', '- name: fake', '  context:', '    cluster: fake', '    user: agent', '',
    ].join('\n'));
    return file;
  }

  private nextRv(): string {
    this.rv += 1;
    return String(this.rv);
  }

  private broadcast(type: string, object: Obj): void {
    for (const w of this.watchers) {
      if (type === 'BOOKMARK' ? w.bookmarks : w.name === undefined || w.name === object.metadata?.name) {
        w.res.write(`${JSON.stringify({ type, object })}\n`);
      }
    }
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const raw = await readBody(req);
    const contentType = req.headers['content-type'];
    let body: unknown = undefined;
    if (raw) {
      try { body = JSON.parse(raw); } catch { body = raw; }
    }
    this.requests.push({ method: req.method ?? 'GET', path: url.pathname, query: url.searchParams, contentType, body, at: performance.now() });
    const isWatch = url.searchParams.get('watch') === 'true' || url.searchParams.get('watch') === '1';
    const i = this.faults.findIndex((f) => f.method === req.method && url.pathname.startsWith(f.prefix)
      && (f.fault.watch === undefined || f.fault.watch === isWatch));
    if (i >= 0) {
      const { fault } = this.faults.splice(i, 1)[0] as { fault: Fault };
      if (fault.hang || fault.silent) {
        this.hung.add(res);
        res.on('close', () => { if (this.hung.delete(res)) this.abandoned += 1; });
        if (fault.silent) res.writeHead(fault.status, { 'content-type': JSON_TYPE, 'transfer-encoding': 'chunked' }).flushHeaders();
        return;
      }
      if (fault.lines) {
        res.writeHead(fault.status, { 'content-type': JSON_TYPE }).end(fault.lines.map((l) => `${l}\n`).join(''));
        return;
      }
      if (fault.delayMs !== undefined) {
        await new Promise((resolve) => setTimeout(resolve, fault.delayMs));
        return this.route(req.method ?? 'GET', url, contentType, body, res);
      }
      const headers: Record<string, string> = fault.retryAfter !== undefined ? { 'retry-after': String(fault.retryAfter) } : {};
      return send(res, fault.status, status(fault.status, reasonFor(fault.status), `injected ${fault.status}`), headers);
    }
    this.route(req.method ?? 'GET', url, contentType, body, res);
  }

  private route(method: string, url: URL, contentType: string | undefined, body: unknown, res: ServerResponse): void {
    const path = url.pathname;
    const nodeMatch = /^\/api\/v1\/nodes\/([^/]+)$/.exec(path);
    const eventsPost = /^\/api\/v1\/namespaces\/([^/]+)\/events$/.exec(path);
    if (method === 'GET' && path === '/version') return send(res, 200, { major: '1', minor: '34', gitVersion: 'v1.34.0-fake', platform: 'linux/amd64' });
    if (method === 'GET' && path === '/api') return send(res, 200, { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: '127.0.0.1' }] });
    if (method === 'GET' && path === '/apis') return send(res, 200, { kind: 'APIGroupList', apiVersion: 'v1', groups: [] });
    if (method === 'GET' && path === '/api/v1') return send(res, 200, apiResourceList());
    if (method === 'GET' && path === '/api/v1/nodes') return this.listOrWatchNodes(url, res);
    const watchable = this.watchable[path];
    if (method === 'GET' && watchable && this.servesWatchable(watchable, path, url)) return watchable.listOrWatch(url, res, send);
    if (this.collections.route(method, url, this.rv, res)) return;
    if (nodeMatch && method === 'GET') return this.withNode(nodeMatch[1] as string, res, (node) => send(res, 200, node));
    if (nodeMatch && method === 'PATCH') return this.patchNode(nodeMatch[1] as string, contentType, body, res);
    if (eventsPost && method === 'POST') return this.createEvent(eventsPost[1] as string, body as Obj, res);
    const lease = /^\/apis\/coordination\.k8s\.io\/v1\/namespaces\/([^/]+)\/leases(?:\/([^/]+))?$/.exec(path);
    if (lease) return this.routeLease(method, lease[1] as string, lease[2], body as Obj, res);
    if (method === 'GET' && (path === '/api/v1/events' || /^\/api\/v1\/namespaces\/[^/]+\/events$/.test(path))) {
      return send(res, 200, { kind: 'EventList', apiVersion: 'v1', metadata: { resourceVersion: String(this.rv) }, items: this.matchEvents(url) });
    }
    send(res, 404, status(404, 'NotFound', `the server could not find the requested resource (${method} ${path})`));
  }

  /** Watches, and lists while only the watchable store holds objects of the kind (report tests fill `collections`). */
  private servesWatchable(watchable: WatchableCollection, path: string, url: URL): boolean {
    const plural = path.split('/').at(-1) as string;
    return url.searchParams.get('watch') === 'true' || watchable.size > 0 || this.collections.count(plural) === 0;
  }

  private listOrWatchNodes(url: URL, res: ServerResponse): void {
    const name = /metadata\.name=([^,]+)/.exec(url.searchParams.get('fieldSelector') ?? '')?.[1];
    if (url.searchParams.get('watch') === 'true') {
      const from = Number(url.searchParams.get('resourceVersion') ?? '0');
      res.writeHead(200, { 'content-type': JSON_TYPE, 'transfer-encoding': 'chunked' });
      if (from > 0 && from < this.oldestWatchableRv) {
        res.end(`${JSON.stringify({ type: 'ERROR', object: status(410, 'Expired', `too old resource version: ${from}`) })}\n`);
        return;
      }
      const watcher = { res, name, bookmarks: url.searchParams.get('allowWatchBookmarks') === 'true' };
      this.watchers.add(watcher);
      const timeout = this.watchTimeoutMs > 0 ? setTimeout(() => res.end(), this.watchTimeoutMs) : undefined;
      res.on('close', () => { clearTimeout(timeout); this.watchers.delete(watcher); });
      res.flushHeaders();
      // As a real server does, a watch from resourceVersion N first delivers what changed after N
      // (here: each such Node as it is now), so a change between the LIST and the watch is not lost.
      for (const node of this.nodes.values()) {
        if (from > 0 && Number(node.metadata.resourceVersion) > from && (name === undefined || node.metadata.name === name)) {
          res.write(`${JSON.stringify({ type: 'MODIFIED', object: node })}\n`);
        }
      }
      return;
    }
    const labels = parseSelector(url.searchParams.get('labelSelector') ?? '');
    if (typeof labels === 'string') return send(res, 400, status(400, 'BadRequest', labels));
    const items = [...this.nodes.values()].filter((n) => name === undefined || n.metadata.name === name)
      .filter((n) => labels.every((term) => term.matches(n.metadata.labels?.[term.key])));
    send(res, 200, { kind: 'NodeList', apiVersion: 'v1', metadata: { resourceVersion: String(this.rv) }, items });
  }

  private withNode(name: string, res: ServerResponse, then: (node: Obj) => void): void {
    const node = this.nodes.get(name);
    if (!node) return send(res, 404, status(404, 'NotFound', `nodes "${name}" not found`));
    then(node);
  }

  private patchNode(name: string, contentType: string | undefined, body: unknown, res: ServerResponse): void {
    if (contentType !== 'application/merge-patch+json') {
      return send(res, 415, status(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: application/merge-patch+json (got ${contentType})`));
    }
    this.withNode(name, res, (node) => {
      const patched = mergePatch(node, body) as Obj;
      patched.metadata.resourceVersion = this.nextRv();
      this.nodes.set(name, patched);
      this.broadcast('MODIFIED', patched);
      send(res, 200, patched);
    });
  }

  private createEvent(namespace: string, event: Obj, res: ServerResponse): void {
    const name = event?.metadata?.name;
    if (event?.metadata?.namespace !== undefined && event.metadata.namespace !== namespace) {
      return send(res, 400, status(400, 'BadRequest', 'the namespace of the provided object does not match the namespace sent on the request'));
    }
    // kube-apiserver's validation of core/v1 Events (without eventTime): one about a cluster-scoped
    // object (a Node) must live in "default"; one about a namespaced object in that object's namespace.
    const involved = event?.involvedObject?.namespace ?? '';
    if (event?.eventTime == null && (involved === '' ? namespace !== 'default' : namespace !== involved)) {
      return send(res, 422, status(422, 'Invalid', `Event "${name}" is invalid: involvedObject.namespace: Invalid value: "${involved}": does not match event.namespace`));
    }
    if (this.events.some((e) => e.metadata.name === name && e.metadata.namespace === namespace)) {
      return send(res, 409, status(409, 'AlreadyExists', `events "${name}" already exists`));
    }
    const stored = { ...event, metadata: { ...event.metadata, namespace, uid: `ev-${this.events.length}`, resourceVersion: this.nextRv() } };
    this.events.push(stored);
    send(res, 201, stored);
  }

  private routeLease(method: string, namespace: string, name: string | undefined, body: Obj, res: ServerResponse): void {
    const key = `${namespace}/${name ?? body?.metadata?.name}`;
    const stored = this.leases.get(key);
    if (method === 'POST' && name === undefined) {
      if (stored) return send(res, 409, status(409, 'AlreadyExists', `leases.coordination.k8s.io "${body?.metadata?.name}" already exists`));
      const created = { ...body, metadata: { ...body.metadata, namespace, resourceVersion: this.nextRv() } };
      this.leases.set(key, created);
      return send(res, 201, created);
    }
    if (name === undefined || !stored || !['GET', 'PATCH'].includes(method)) {
      return send(res, 404, status(404, 'NotFound', `leases.coordination.k8s.io "${name ?? ''}" not found`));
    }
    if (method === 'GET') return send(res, 200, stored);
    const patched = mergePatch(stored, body) as Obj;
    patched.metadata.resourceVersion = this.nextRv();
    this.leases.set(key, patched);
    send(res, 200, patched);
  }

  private matchEvents(url: URL): Obj[] {
    const selector = new Map((url.searchParams.get('fieldSelector') ?? '').split(',').filter(Boolean)
      .map((part) => part.split('=') as [string, string]));
    const field = (e: Obj, path: string): string => path.split('.').reduce((o: any, k) => o?.[k], e) ?? '';
    return this.events.filter((e) => [...selector].every(([path, want]) => field(e, path) === want));
  }
}

function apiResourceList(): Obj {
  const r = (name: string, kind: string, namespaced: boolean, shortNames?: string[]) => ({
    name, singularName: kind.toLowerCase(), namespaced, kind, shortNames,
    verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
  });
  return { kind: 'APIResourceList', groupVersion: 'v1', resources: [r('nodes', 'Node', false, ['no']), r('events', 'Event', true, ['ev']), r('pods', 'Pod', true, ['po'])] };
}

/** RFC 7386 JSON merge patch. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return patch;
  const out: Obj = target !== null && typeof target === 'object' && !Array.isArray(target) ? { ...(target as Obj) } : {};
  for (const [key, value] of Object.entries(patch as Obj)) {
    if (value === null) delete out[key];
    else out[key] = mergePatch(out[key], value);
  }
  return out;
}

function status(code: number, reason: string, message: string): Obj {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code };
}

function reasonFor(code: number): string {
  return ({ 409: 'Conflict', 429: 'TooManyRequests', 500: 'InternalError', 503: 'ServiceUnavailable' } as Record<number, string>)[code] ?? 'Unknown';
}

function send(res: ServerResponse, code: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(code, { 'content-type': JSON_TYPE, ...headers }).end(JSON.stringify(body));
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let data = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => { data += chunk; });
    req.on('end', () => resolve(data));
  });
}
