// HTTP endpoint for Prometheus and the kubelet probes. Serves cached values only.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';

/**
 * 20263: outside 9100-9999 (the Prometheus exporter port allocations, fully taken since 2023),
 * away from NPD (20256/20257) and the 102xx ports of kubelet, kube-proxy, scheduler and controller-manager.
 */
export const DEFAULT_METRICS_PORT = 20263;
export const DEFAULT_METRICS_ADDR = `:${DEFAULT_METRICS_PORT}`;

export interface ListenAddress {
  host: string;
  port: number;
}

/** ":20263" (all interfaces), "127.0.0.1:0", "[::1]:9000". Throws a message naming the flag. */
export function parseListenAddress(addr: string): ListenAddress {
  const match = /^(?:\[([0-9a-fA-F:]+)\]|([^:[\]]*)):(\d{1,5})$/.exec(addr);
  const port = match ? Number(match[3]) : NaN;
  if (!match || port > 65535) {
    throw new Error(`--metrics-addr "${addr}" is not HOST:PORT; use e.g. ":${DEFAULT_METRICS_PORT}" or "127.0.0.1:${DEFAULT_METRICS_PORT}"`);
  }
  return { host: match[1] ?? (match[2] || '0.0.0.0'), port };
}

export interface MetricsServer {
  server: Server;
  port: number;
  close(): Promise<void>;
}

export async function startMetricsServer(registry: Registry, address: ListenAddress, isReady: () => boolean): Promise<MetricsServer> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD' }).end();
    } else if (path === '/metrics') {
      registry.metrics().then(
        (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text),
        (err: unknown) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`metrics failed: ${String(err)}\n`),
      );
    } else if (path === '/healthz') {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n');
    } else if (path === '/readyz') {
      const ready = isReady();
      res.writeHead(ready ? 200 : 503, { 'content-type': 'text/plain' }).end(ready ? 'ok\n' : 'waiting for the first scan\n');
    } else {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('try /metrics, /healthz or /readyz\n');
    }
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(new Error(`--metrics-addr ${address.host}:${address.port}: cannot listen (${err.code ?? err.message}); pick a free port`)));
    server.listen(address.port, address.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    server,
    port,
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}
