// HTTP endpoint for Prometheus and the kubelet probes, open to the pod network: it serves a cached
// rendering only, and bounds what a client can hold: connections (overall and per address, a
// newcomer at capacity taking the slot of the greediest address: connection-capacity.ts), requests
// in flight on one connection (pipelining), and time (headers, whole request, idle socket).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { ConnectionCapacity } from './connection-capacity.ts';

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

/** What /metrics serves: a cached exposition text (see AgentMetrics.render). */
export interface MetricsSource {
  contentType: string;
  render(): Promise<string>;
}

export const SERVER_LIMITS = {
  maxConnections: 64,
  maxConnectionsPerAddress: 16,
  /** Requests a client may have sent on one connection without reading the answers. */
  maxInFlightPerConnection: 4,
  headersTimeoutMs: 5_000,
  requestTimeoutMs: 10_000,
  /** No byte either way for this long (a client that stopped reading): the socket is closed. */
  idleSocketMs: 15_000,
  keepAliveMs: 15_000,
};

const inFlight = new WeakMap<Socket, number>();

function answer(req: IncomingMessage, res: ServerResponse, source: MetricsSource, isReady: () => boolean): void {
  const path = (req.url ?? '/').split('?')[0];
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.writeHead(405, { allow: 'GET, HEAD' }).end();
  } else if (path === '/metrics') {
    source.render().then(
      (text) => res.writeHead(200, { 'content-type': source.contentType }).end(req.method === 'HEAD' ? undefined : text),
      () => res.writeHead(500, { 'content-type': 'text/plain' }).end('metrics could not be rendered\n'),
    );
  } else if (path === '/healthz') {
    res.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n');
  } else if (path === '/readyz') {
    const ready = isReady();
    res.writeHead(ready ? 200 : 503, { 'content-type': 'text/plain' }).end(ready ? 'ok\n' : 'waiting for the first scan\n');
  } else {
    res.writeHead(404, { 'content-type': 'text/plain' }).end('try /metrics, /healthz or /readyz\n');
  }
}

/** A connection that asks again before reading its answers is dropped: pipelining is how one socket buffers without bound. */
function admitRequest(req: IncomingMessage, res: ServerResponse, capacity: ConnectionCapacity): boolean {
  const socket = req.socket;
  const pending = (inFlight.get(socket) ?? 0) + 1;
  if (pending > SERVER_LIMITS.maxInFlightPerConnection) {
    socket.destroy();
    return false;
  }
  inFlight.set(socket, pending);
  const done = capacity.requestStarted(socket);
  res.once('close', () => {
    inFlight.set(socket, (inFlight.get(socket) ?? 1) - 1);
    done();
  });
  return true;
}

export async function startMetricsServer(source: MetricsSource, address: ListenAddress, isReady: () => boolean): Promise<MetricsServer> {
  const capacity = new ConnectionCapacity(SERVER_LIMITS);
  const server = createServer({
    headersTimeout: SERVER_LIMITS.headersTimeoutMs,
    requestTimeout: SERVER_LIMITS.requestTimeoutMs,
    keepAliveTimeout: SERVER_LIMITS.keepAliveMs,
    connectionsCheckingInterval: 1_000,
  }, (req, res) => {
    if (admitRequest(req, res, capacity)) answer(req, res, source, isReady);
  });
  capacity.guard(server);
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
