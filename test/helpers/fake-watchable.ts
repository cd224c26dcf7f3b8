// Watchable collections for the apiserver stand-in (the agent's pods, CSIDriver, CSINode): LIST and
// watch with field selectors (parseSelector's forms), newline-delimited JSON watch events replayed from
// the requested resourceVersion, 410 for one older than the server's oldest watchable one.
import type { ServerResponse } from 'node:http';
import { apiDefaults, parseSelector } from './fake-collections.ts';

type Obj = Record<string, any>;

export interface Versions {
  next(): string;
  current(): string;
  oldestWatchable(): number;
  /** Close each watch after this long (kube-apiserver's 30–60 min); 0 = never. */
  watchTimeoutMs(): number;
}

interface CollectionWatcher {
  res: ServerResponse;
  selector: string;
}

/** Field selector match with the stand-in's selector parser (an unparsable selector matches nothing). */
export function matchesFieldSelector(obj: Obj, selector: string): boolean {
  const terms = parseSelector(selector);
  if (typeof terms === 'string') return false;
  const field = (path: string): string => path.split('.').reduce((o: any, k) => o?.[k], obj) ?? '';
  return terms.every((t) => t.matches(String(field(t.key))));
}

export class WatchableCollection {
  readonly kind: string;
  readonly apiVersion: string;
  private readonly versions: Versions;
  private readonly objects = new Map<string, Obj>();
  private readonly watchers = new Set<CollectionWatcher>();
  /** Recent events, replayed to a watch that starts from an older resourceVersion (as etcd's watch cache does). */
  private readonly history: { type: string; object: Obj }[] = [];
  historyLimit = 20_000;

  constructor(kind: string, apiVersion: string, versions: Versions) {
    this.kind = kind;
    this.apiVersion = apiVersion;
    this.versions = versions;
  }

  get size(): number {
    return this.objects.size;
  }

  get watching(): number {
    return this.watchers.size;
  }

  /** Create or replace (ADDED / MODIFIED); a fresh resourceVersion each time. */
  upsert(given: Obj): Obj {
    const obj = this.kind === 'CSIDriver' ? apiDefaults('csidrivers', given) : given;
    const key = keyOf(obj);
    const type = this.objects.has(key) ? 'MODIFIED' : 'ADDED';
    const stored = { kind: this.kind, apiVersion: this.apiVersion, ...obj, metadata: { ...obj.metadata, resourceVersion: this.versions.next() } };
    this.objects.set(key, stored);
    this.broadcast(type, stored);
    return stored;
  }

  remove(name: string, namespace?: string): void {
    const key = namespace ? `${namespace}/${name}` : name;
    const obj = this.objects.get(key);
    if (!obj) return;
    this.objects.delete(key);
    this.broadcast('DELETED', { ...obj, metadata: { ...obj.metadata, resourceVersion: this.versions.next() } });
  }

  get(name: string, namespace?: string): Obj | undefined {
    return this.objects.get(namespace ? `${namespace}/${name}` : name);
  }

  listOrWatch(url: URL, res: ServerResponse, send: (res: ServerResponse, code: number, body: unknown) => void): void {
    const selector = url.searchParams.get('fieldSelector') ?? '';
    if (url.searchParams.get('watch') !== 'true') {
      const items = [...this.objects.values()].filter((o) => matchesFieldSelector(o, selector));
      return send(res, 200, { kind: `${this.kind}List`, apiVersion: this.apiVersion, metadata: { resourceVersion: this.versions.current() }, items });
    }
    res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
    const from = Number(url.searchParams.get('resourceVersion') ?? '0');
    if (from > 0 && from < this.versions.oldestWatchable()) {
      res.end(`${JSON.stringify({ type: 'ERROR', object: { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Expired', code: 410, message: `too old resource version: ${from}` } })}\n`);
      return;
    }
    const watcher = { res, selector };
    this.watchers.add(watcher);
    const limit = this.versions.watchTimeoutMs();
    const timeout = limit > 0 ? setTimeout(() => res.end(), limit) : undefined;
    res.on('close', () => { clearTimeout(timeout); this.watchers.delete(watcher); });
    res.flushHeaders();
    for (const event of this.history) {
      if (Number(event.object.metadata.resourceVersion) > from && matchesFieldSelector(event.object, selector)) res.write(`${JSON.stringify(event)}\n`);
    }
  }

  /** Every open watch gets ERROR 410 and is closed. */
  expire(): void {
    for (const w of this.watchers) {
      w.res.end(`${JSON.stringify({ type: 'ERROR', object: { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Expired', code: 410, message: 'too old resource version' } })}\n`);
    }
    this.watchers.clear();
  }

  close(): void {
    for (const w of this.watchers) w.res.end();
    this.watchers.clear();
  }

  private broadcast(type: string, object: Obj): void {
    this.history.push({ type, object });
    if (this.history.length > this.historyLimit) this.history.splice(0, this.history.length - this.historyLimit);
    for (const w of this.watchers) {
      if (matchesFieldSelector(object, w.selector)) w.res.write(`${JSON.stringify({ type, object })}\n`);
    }
  }
}

function keyOf(obj: Obj): string {
  const ns = obj.metadata?.namespace;
  return ns ? `${ns}/${obj.metadata.name}` : obj.metadata.name;
}
