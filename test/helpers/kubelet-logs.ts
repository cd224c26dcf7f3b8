// The kubelet's side of `kubectl logs` for a real control plane without a kubelet: an HTTPS server on
// loopback answering GET /containerLogs/NAMESPACE/POD/CONTAINER the way the kubelet does. A Node
// whose status names 127.0.0.1 and this port (daemonEndpoints.kubeletEndpoint) gets its pods' logs
// proxied here by the real kube-apiserver, which forwards tailLines, limitBytes and sinceSeconds.
import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:https';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** A stored log as the kubelet returns it: sinceSeconds, tailLines, timestamps, then limitBytes. */
export function tailLog(stored: string, params: URLSearchParams): string {
  let lines = stored.split('\n');
  if (lines.at(-1) === '') lines.pop();
  const since = params.get('sinceSeconds');
  if (since !== null) {
    const from = Date.now() - Number(since) * 1000;
    lines = lines.filter((line) => { const t = Date.parse(line.split(' ')[0] ?? ''); return Number.isNaN(t) || t >= from; });
  }
  const tail = params.get('tailLines');
  if (tail !== null) lines = lines.slice(-Number(tail));
  if (params.get('timestamps') !== 'true') lines = lines.map((line) => line.replace(/^\d{4}-\d{2}-\d{2}T\S+ /, ''));
  const text = lines.map((line) => `${line}\n`).join('');
  const limit = params.get('limitBytes');
  return limit === null ? text : Buffer.from(text).subarray(0, Number(limit)).toString('utf8');
}

export class KubeletLogs {
  readonly requests: string[] = [];
  private readonly logs = new Map<string, string>();
  private readonly server: Server;
  port = 0;

  private constructor(server: Server) {
    this.server = server;
  }

  /** Starts on 127.0.0.1 with a throwaway self-signed certificate written into `dir`. */
  static async start(dir: string): Promise<KubeletLogs> {
    const [key, cert] = [path.join(dir, 'kubelet.key'), path.join(dir, 'kubelet.crt')];
    await run('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', key, '-out', cert,
      '-subj', '/CN=kubelet', '-days', '1', '-addext', 'subjectAltName=IP:127.0.0.1']);
    let self: KubeletLogs | undefined;
    const server = createServer({ key: await readFile(key), cert: await readFile(cert) }, (req, res) => {
      const url = new URL(req.url ?? '/', 'https://127.0.0.1');
      self?.requests.push(`${url.pathname}${url.search}`);
      const match = /^\/containerLogs\/([^/]+)\/([^/]+)\/([^/]+)$/.exec(url.pathname);
      const stored = match ? self?.logs.get(`${match[1]}/${match[2]}/${match[3]}`) : undefined;
      if (stored === undefined) return void res.writeHead(404, { 'content-type': 'text/plain' }).end('no such container log\n');
      res.writeHead(200, { 'content-type': 'text/plain' }).end(tailLog(stored, url.searchParams));
    });
    self = new KubeletLogs(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    self.port = (server.address() as { port: number }).port;
    return self;
  }

  set(namespace: string, pod: string, container: string, text: string): void {
    this.logs.set(`${namespace}/${pod}/${container}`, text);
  }

  /** The Node status fields that point kube-apiserver's kubelet client here. */
  nodeStatus(): Record<string, unknown> {
    return { addresses: [{ type: 'InternalIP', address: '127.0.0.1' }], daemonEndpoints: { kubeletEndpoint: { Port: this.port } } };
  }

  stop(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
