// A bounded plain-HTTP GET to a service on this node (etcd's /metrics). The URL comes from a process
// or a config file, so it is hostile: only loopback or this node's own addresses (no names, no DNS),
// no redirects, no compressed bodies (a gzip bomb costs nothing to send), the body capped while it
// streams in, and one deadline for the whole exchange (a trickling server cannot hold the scan).
// node:http and node:net are taken on the first fetch (process.getBuiltinModule): a scan of a host
// without etcd, and `rules`, never pay their start-up cost.
import os from 'node:os';

export type LocalFetch = { ok: true; text: string; url: string } | { ok: false; reason: string; url: string };

export interface LocalFetchOptions {
  timeoutMs?: number;
  maxBytes?: number;
  /** This node's addresses; default: those of the network interfaces this process sees. */
  ownAddresses?: string[];
}

export const DEFAULT_MAX_BODY_BYTES = 8 * 1024 * 1024;

function interfaceAddresses(): string[] {
  return Object.values(os.networkInterfaces()).flatMap((list) => (list ?? []).map((a) => a.address));
}

function isLoopback(ip: string): boolean {
  return /^127\./.test(ip) || ip === '::1' || /^::ffff:127\./i.test(ip);
}

/** The IP literal to connect to, or why this host is not one we may call. */
export function localTarget(hostname: string, ownAddresses: string[]): { ip: string } | { reason: string } {
  const host = hostname.replace(/^\[(.*)\]$/, '$1');
  if (host === 'localhost') return { ip: '127.0.0.1' };
  if (process.getBuiltinModule('node:net').isIP(host) === 0) return { reason: `${hostname} is a name, not an address: only loopback or this node's own addresses are called` };
  if (isLoopback(host) || ownAddresses.includes(host)) return { ip: host };
  return { reason: `${host} is not loopback nor an address of this node` };
}

export function fetchLocalText(url: string, options: LocalFetchOptions = {}): Promise<LocalFetch> {
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BODY_BYTES;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return Promise.resolve({ ok: false, url, reason: `${url} is not a URL` });
  }
  if (parsed.protocol !== 'http:') return Promise.resolve({ ok: false, url, reason: `${url} is not plain HTTP` });
  const target = localTarget(parsed.hostname, options.ownAddresses ?? interfaceAddresses());
  if ('reason' in target) return Promise.resolve({ ok: false, url, reason: `${url} not fetched: ${target.reason}` });
  return new Promise((resolve) => {
    const fail = (reason: string): void => { req.destroy(); resolve({ ok: false, url, reason: `${url} ${reason}` }); };
    const req = process.getBuiltinModule('node:http').request({
      host: target.ip, port: parsed.port || 80, path: `${parsed.pathname}${parsed.search}`, method: 'GET',
      headers: { host: parsed.host, accept: 'text/plain', 'accept-encoding': 'identity' },
      signal: AbortSignal.timeout(options.timeoutMs ?? 3000),
    }, (res) => readCappedBody(res, maxBytes, fail, (text) => resolve({ ok: true, url, text })));
    req.on('error', (error: NodeJS.ErrnoException) => {
      const timedOut = error.name === 'AbortError' || error.code === 'ABORT_ERR';
      resolve({ ok: false, url, reason: timedOut ? `${url} gave no complete answer within ${options.timeoutMs ?? 3000} ms` : `${url} is not reachable (${error.code ?? error.message})` });
    });
    req.end();
  });
}

/**
 * A 200 response's body, identity-encoded, at most maxBytes (announced or streamed); anything else
 * goes to fail with the reason (redirects are not followed). Shared with the kubelet's HTTPS reader.
 */
export function readCappedBody(res: import('node:http').IncomingMessage, maxBytes: number, fail: (reason: string) => void, done: (text: string) => void): void {
  const status = res.statusCode ?? 0;
  if (status >= 300 && status < 400) return fail(`answered a redirect (HTTP ${status}); redirects are not followed`);
  if (status !== 200) return fail(`answered HTTP ${status}`);
  const encoding = String(res.headers['content-encoding'] ?? 'identity').toLowerCase();
  if (encoding !== 'identity') return fail(`sent a ${encoding}-compressed body though asked for identity; not read`);
  if (Number(res.headers['content-length'] ?? 0) > maxBytes) return fail(`announces ${res.headers['content-length']} bytes, over the ${maxBytes}-byte cap; not read`);
  const chunks: Buffer[] = [];
  let size = 0;
  let over = false;
  res.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size > maxBytes) { over = true; return fail(`sent more than ${maxBytes} bytes; not read`); }
    chunks.push(chunk);
  });
  res.on('end', () => { if (!over) done(Buffer.concat(chunks).toString('utf8')); });
  res.on('error', () => undefined);
}
