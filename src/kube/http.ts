// One HTTP exchange over node:http/node:https, bounded in every direction: the signal aborts it at
// any point (before the headers, while the body streams) and aborting really closes the socket;
// bodies are read up to a byte cap; watch streams are split into lines of bounded length.
import http from 'node:http';
import https from 'node:https';

export interface HttpExchange {
  method: string;
  url: URL;
  headers: Record<string, string>;
  agent: http.Agent;
  body?: Buffer;
  signal: AbortSignal;
  /** Called when the whole request has been handed to the socket (after connecting, TLS, queueing). */
  onWritten?: () => void;
  /** A new connection (TCP, then TLS for https) must be up within this long; a reused one is not timed. */
  connectTimeoutMs?: number;
}

/** No connection to the server within the connect timeout (a dead address, a firewall dropping SYNs). */
export class ConnectTimeout extends Error {
  readonly code = 'ETIMEDOUT';
}

/** Why a request was aborted: the reason carried by the AbortSignal, mapped to a KubeError code. */
export class AbortReason extends Error {
  readonly code: 'timeout' | 'stopped';

  constructor(code: 'timeout' | 'stopped', message: string) {
    super(message);
    this.code = code;
  }
}

export class TooLarge extends Error {}

/** Resolves with the response once its headers arrived. */
export function send(x: HttpExchange): Promise<http.IncomingMessage> {
  if (x.signal.aborted) return Promise.reject(x.signal.reason);
  const request = x.url.protocol === 'http:' ? http.request : https.request;
  return new Promise((resolve, reject) => {
    const headers = { ...x.headers, ...(x.body ? { 'Content-Length': String(x.body.length) } : {}) };
    const req = request(x.url, { method: x.method, headers, agent: x.agent });
    if (x.onWritten) req.once('finish', x.onWritten);
    if (x.connectTimeoutMs !== undefined) limitConnect(req, x.connectTimeoutMs);
    const onAbort = (): void => { req.destroy(x.signal.reason); };
    x.signal.addEventListener('abort', onAbort, { once: true });
    req.once('response', (res) => {
      // From here the body reader owns the abort; a response nobody reads must still be closed on abort.
      x.signal.removeEventListener('abort', onAbort);
      resolve(res);
    });
    req.once('error', (err) => {
      x.signal.removeEventListener('abort', onAbort);
      reject(x.signal.aborted ? x.signal.reason : err);
    });
    req.end(x.body);
  });
}

/** Destroys the request when its new socket is not connected (and, for https, through TLS) in time. */
function limitConnect(req: http.ClientRequest, ms: number): void {
  req.once('socket', (socket) => {
    if (req.reusedSocket) return;
    const ready = 'encrypted' in socket ? 'secureConnect' : 'connect';
    const timer = setTimeout(() => req.destroy(new ConnectTimeout(`no connection within ${ms / 1000} s`)), ms);
    const clear = (): void => clearTimeout(timer);
    socket.once(ready, clear);
    socket.once('close', clear);
    req.once('error', clear);
  });
}

/** The whole body, at most maxBytes (more: the connection is closed and TooLarge thrown). */
export function readBody(res: http.IncomingMessage, maxBytes: number, signal: AbortSignal): Promise<Buffer> {
  return consume(res, signal, (chunks, total) => {
    if (total > maxBytes) throw new TooLarge(`response larger than ${maxBytes} bytes`);
    return chunks;
  }).then((chunks) => Buffer.concat(chunks));
}

/**
 * Calls onLine for every newline-terminated line as it arrives (a last unterminated line too);
 * a line longer than maxLineBytes closes the stream with TooLarge. onLine may throw to end the stream.
 */
export async function readLines(res: http.IncomingMessage, maxLineBytes: number, signal: AbortSignal, onLine: (line: Buffer) => void): Promise<void> {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  const take = (chunk: Buffer): void => {
    let start = 0;
    for (let nl = chunk.indexOf(10, start); nl >= 0; nl = chunk.indexOf(10, start)) {
      const piece = chunk.subarray(start, nl);
      if (pendingBytes + piece.length > maxLineBytes) throw new TooLarge(`watch event longer than ${maxLineBytes} bytes`);
      const line = pendingBytes === 0 ? piece : Buffer.concat([...pending, piece]);
      pending = [];
      pendingBytes = 0;
      start = nl + 1;
      if (!blank(line)) onLine(line);
    }
    const rest = chunk.subarray(start);
    if (pendingBytes + rest.length > maxLineBytes) throw new TooLarge(`watch event longer than ${maxLineBytes} bytes`);
    if (rest.length > 0) { pending.push(rest); pendingBytes += rest.length; }
  };
  await consume(res, signal, (chunks) => {
    for (const chunk of chunks.splice(0)) take(chunk);
    return chunks;
  });
  const last = Buffer.concat(pending);
  if (!blank(last)) onLine(last);
}

function blank(line: Buffer): boolean {
  for (const c of line) if (c !== 0x20 && c !== 0x09 && c !== 0x0d && c !== 0x0a) return false;
  return true;
}

/** Drains res, handing the chunks received so far to `step` (which may throw to stop); aborts on signal. */
function consume(res: http.IncomingMessage, signal: AbortSignal, step: (chunks: Buffer[], total: number) => Buffer[]): Promise<Buffer[]> {
  return new Promise((resolve, reject) => {
    let chunks: Buffer[] = [];
    let total = 0;
    let settled = false;
    const finish = (err?: unknown): void => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', onAbort);
      if (err === undefined) resolve(chunks);
      else {
        res.destroy();
        reject(err);
      }
    };
    const onAbort = (): void => finish(signal.reason);
    if (signal.aborted) return finish(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    res.on('data', (chunk: Buffer) => {
      if (settled) return;
      chunks.push(chunk);
      total += chunk.length;
      try {
        chunks = step(chunks, total);
      } catch (err) {
        finish(err);
      }
    });
    res.once('end', () => finish());
    res.once('aborted', () => finish(Object.assign(new Error('the server closed the connection mid-response'), { code: 'ECONNRESET' })));
    res.once('error', (err) => finish(signal.aborted ? signal.reason : err));
    res.once('close', () => { if (!res.complete) finish(signal.aborted ? signal.reason : Object.assign(new Error('connection closed before the response ended'), { code: 'ECONNRESET' })); });
  });
}
