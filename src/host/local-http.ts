// A bounded plain-HTTP GET to a service on this node (etcd's /metrics). The URL comes from a process
// or a config file, so it is hostile: only loopback or this node's own addresses (no names, no DNS),
// no redirects, no compressed bodies (a gzip bomb costs nothing to send), the body capped while it
// streams in (for a parser, split into lines as it streams: text/lines.ts, never whole), and one
// deadline for the whole exchange (a trickling server cannot hold the scan).
// node:http and node:net are taken on the first fetch (process.getBuiltinModule): a scan of a host
// without etcd, and `rules`, never pay their start-up cost.
import type { IncomingMessage } from 'node:http';
import os from 'node:os';
import type { LineSplitter, LineWalk } from '../text/lines.ts';

export type LocalFetch = { ok: true; text: string; url: string } | { ok: false; reason: string; url: string };
export type LocalLines = { ok: true; walk: LineWalk; url: string } | { ok: false; reason: string; url: string };

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

/** GET `url` (plain HTTP, loopback or own address) and hand the response to `consume`, which settles it. */
function localGet<T extends object>(
  url: string, options: LocalFetchOptions,
  consume: (res: IncomingMessage, maxBytes: number, fail: (reason: string) => void, succeed: (value: T) => void) => void,
): Promise<({ ok: true; url: string } & T) | { ok: false; reason: string; url: string }> {
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
    }, (res) => consume(res, maxBytes, fail, (value) => resolve({ ok: true, url, ...value })));
    req.on('error', (error: NodeJS.ErrnoException) => {
      const timedOut = error.name === 'AbortError' || error.code === 'ABORT_ERR';
      resolve({ ok: false, url, reason: timedOut ? `${url} gave no complete answer within ${options.timeoutMs ?? 3000} ms` : `${url} is not reachable (${error.code ?? error.message})` });
    });
    req.end();
  });
}

export function fetchLocalText(url: string, options: LocalFetchOptions = {}): Promise<LocalFetch> {
  return localGet<{ text: string }>(url, options, (res, maxBytes, fail, succeed) => readCappedBody(res, maxBytes, fail, (text) => succeed({ text })));
}

/** As fetchLocalText, but the body goes line by line into `lines` as it streams: it is never whole in memory. */
export function fetchLocalLines(url: string, lines: LineSplitter, options: LocalFetchOptions = {}): Promise<LocalLines> {
  return localGet<{ walk: LineWalk }>(url, options, (res, maxBytes, fail, succeed) => readCappedLines(res, maxBytes, lines, fail, (walk) => succeed({ walk })));
}

/** Why a response is not read (a redirect, another status, compression, an announced size over the cap), or undefined. */
function refusal(res: IncomingMessage, maxBytes: number): string | undefined {
  const status = res.statusCode ?? 0;
  if (status >= 300 && status < 400) return `answered a redirect (HTTP ${status}); redirects are not followed`;
  if (status !== 200) return `answered HTTP ${status}`;
  const encoding = String(res.headers['content-encoding'] ?? 'identity').toLowerCase();
  if (encoding !== 'identity') return `sent a ${encoding}-compressed body though asked for identity; not read`;
  if (Number(res.headers['content-length'] ?? 0) > maxBytes) return `announces ${res.headers['content-length']} bytes, over the ${maxBytes}-byte cap; not read`;
  return undefined;
}

/**
 * A 200 response's body, identity-encoded, at most maxBytes (announced or streamed), decoded as UTF-8
 * piece by piece into `onText`; `onText` returning false ends the read early (enough was read).
 * Anything else goes to fail with the reason (redirects are not followed).
 */
function streamCappedBody(res: IncomingMessage, maxBytes: number, fail: (reason: string) => void, onText: (text: string) => boolean | void, done: () => void): void {
  const refused = refusal(res, maxBytes);
  if (refused !== undefined) return fail(refused);
  const decoder = new (process.getBuiltinModule('node:string_decoder').StringDecoder)('utf8');
  let size = 0;
  let settled = false;
  const settle = (then: () => void): void => { if (!settled) { settled = true; then(); } };
  res.on('data', (chunk: Buffer) => {
    if (settled) return;
    size += chunk.length;
    if (size > maxBytes) return settle(() => fail(`sent more than ${maxBytes} bytes; not read`));
    if (onText(decoder.write(chunk)) === false) settle(() => { res.destroy(); done(); });
  });
  res.on('end', () => settle(() => { onText(decoder.end()); done(); }));
  res.on('error', () => undefined);
}

/** A capped body as one string. Shared with the kubelet's HTTPS reader. */
export function readCappedBody(res: IncomingMessage, maxBytes: number, fail: (reason: string) => void, done: (text: string) => void): void {
  const parts: string[] = [];
  streamCappedBody(res, maxBytes, fail, (text) => { parts.push(text); }, () => done(parts.join('')));
}

/** A capped body line by line into `lines`; the read stops once `lines` wants no more. Shared with the kubelet's HTTPS reader. */
export function readCappedLines(res: IncomingMessage, maxBytes: number, lines: LineSplitter, fail: (reason: string) => void, done: (walk: LineWalk) => void): void {
  streamCappedBody(res, maxBytes, fail, (text) => {
    lines.push(text);
    return !lines.done;
  }, () => done(lines.end()));
}
