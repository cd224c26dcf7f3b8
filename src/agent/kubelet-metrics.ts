// Reads this node's kubelet /metrics for the start-up histograms (kubelet-sli.ts) and /configz for its
// running configuration (kubelet-configz.ts), on the port the Node names
// (status.daemonEndpoints.kubeletEndpoint, 10250 on a real kubelet) at the Node's own address. A real
// kubelet serves them only over HTTPS and checks the caller with the API server: a TokenReview of the
// bearer token, then a SubjectAccessReview of verb get, resource nodes, name = the node, subresource
// metrics for /metrics, configz (or proxy) for /configz. So the agent sends its ServiceAccount token
// (RBAC: get nodes/metrics, nodes/configz; never nodes/proxy) and verifies the serving certificate against --kubelet-ca-file, else the cluster's
// CA, or not at all under --kubelet-insecure-tls (kubelets with self-signed serving certificates).
//
// Order: HTTPS first, because the kubeletEndpoint of every real kubelet is its authenticated HTTPS
// port. Plain HTTP is tried only when that TLS handshake shows the port speaks plain HTTP (kubemark's
// hollow kubelet, which has no TLS and no authn/authz), and without the token: the token never goes
// over plain HTTP. A port found plain is remembered, so each later scan is one request; a failed plain
// read forgets it (a kubelet restarted with TLS is read over HTTPS at the next scan).
// Bounded: one deadline per exchange, the body capped while it streams in (/metrics split into lines as
// it streams, never whole; /configz, one JSON object of a few KiB, at most 256 KiB), no redirects, no
// compression.
import type { IncomingMessage } from 'node:http';
import type { KubeletReadResult } from '../workload/kubelet-view.ts';
import { DEFAULT_MAX_BODY_BYTES, fetchLocalLines, fetchLocalText, readCappedBody, readCappedLines } from '../host/local-http.ts';
import type { LineSplitter, LineWalk } from '../text/lines.ts';
import { readRegularFileSync } from '../host/open-checked.ts';
import { fileTypeOf } from '../host/read-failure.ts';


/** The kubelet paths the agent reads: its metrics, and its running configuration. */
export type KubeletPath = '/metrics' | '/configz';

/** A real kubelet's /configz is ~5-10 KiB of JSON; JSON.parse builds every entry of what it is given. */
export const CONFIGZ_MAX_BYTES = 256 * 1024;

/** Not ok: `reason` is for people (what is wrong, then the fix; details in parentheses, which short lines drop first). */
export type KubeletRead =
  | { ok: true; url: string; text: string; walk?: LineWalk }
  | { ok: false; result: Exclude<KubeletReadResult, 'ok'>; reason: string; url: string };

export interface KubeletTarget {
  /** An IP literal: --kubelet-address, else the Node's InternalIP (else ExternalIP), else 127.0.0.1. */
  address: string;
  port: number;
  /** Names the serving certificate may be issued for: the node name and the Node's addresses. */
  names: string[];
}

export interface KubeletReaderOptions {
  /** The agent's bearer token and the cluster CA (from its kubeconfig / in-cluster service account). */
  credentials(): Promise<{ token: string | undefined; ca: string | undefined }>;
  /** --kubelet-ca-file: the CA that signed the kubelet's serving certificate (default: the cluster CA). */
  caFile?: string;
  /** --kubelet-insecure-tls: do not verify the kubelet's serving certificate (the token is still sent). */
  insecureTls?: boolean;
  timeoutMs?: number;
  maxBytes?: number;
}

const MAX_CA_BYTES = 1024 * 1024;
/** OpenSSL's errors when the server answered a TLS ClientHello with plain HTTP ("HTTP/1.1 400 …"): EPROTO with one of these. */
const PLAIN_HTTP_ANSWER = /wrong version number|packet length too long|http request/i;
const RISKY_TLS = '(or, knowing the risk, --kubelet-insecure-tls)';
/** What the kubelet's SubjectAccessReview asked for each path (pkg/kubelet/server/auth.go): the RBAC rule a 403 lacks. */
const FORBIDDEN: Record<KubeletPath, string> = {
  '/metrics': 'HTTP 403: the agent\'s ClusterRole lacks get nodes/metrics (the kubelet\'s SubjectAccessReview denied it; manifests/base/rbac.yaml grants it)',
  '/configz': 'HTTP 403: the agent\'s ClusterRole lacks get nodes/configz (the kubelet\'s SubjectAccessReview denied it; manifests/base/rbac.yaml grants it; a kubelet without fine-grained authorization, KubeletFineGrainedAuthz, asks for nodes/proxy, which the agent is never granted)',
};
const UNAUTHORIZED = 'HTTP 401: the kubelet refused the agent\'s token: turn on its webhook authentication (authentication.webhook.enabled: true in its config)';

/** The Node's address (or --kubelet-address) and kubelet port, or undefined without a kubeletEndpoint. */
export function kubeletTarget(node: unknown, nodeName: string, addressOverride?: string): KubeletTarget | undefined {
  const status = (node as { status?: { daemonEndpoints?: { kubeletEndpoint?: { Port?: unknown } }; addresses?: unknown } })?.status;
  const port = status?.daemonEndpoints?.kubeletEndpoint?.Port;
  if (typeof port !== 'number' || !Number.isInteger(port) || port <= 0 || port >= 65536) return undefined;
  const addresses = (Array.isArray(status?.addresses) ? status.addresses : [])
    .filter((a): a is { type: string; address: string } => typeof a?.type === 'string' && typeof a?.address === 'string');
  const isIp = (a: string): boolean => process.getBuiltinModule('node:net').isIP(a) !== 0;
  const ip = (type: string) => addresses.find((a) => a.type === type && isIp(a.address))?.address;
  const address = addressOverride ?? ip('InternalIP') ?? ip('ExternalIP') ?? '127.0.0.1';
  return { address, port, names: [...new Set([nodeName, ...addresses.map((a) => a.address), address])] };
}

export class KubeletMetricsReader {
  private readonly opts: KubeletReaderOptions;
  private readonly plain = new Set<string>();

  constructor(opts: KubeletReaderOptions) {
    this.opts = opts;
  }

  /**
   * With `lines`, the body goes line by line into it as it streams (never whole in memory; the read's
   * text is then ''); only an ok read's lines count. Without, the body is the read's text.
   */
  async read(target: KubeletTarget, path: KubeletPath = '/metrics', lines?: LineSplitter): Promise<KubeletRead> {
    const key = `${target.address}:${target.port}`;
    if (this.plain.has(key)) return this.readPlain(target, key, path, lines);
    const got = await this.readHttps(target, path, lines);
    if (got === 'plain-http') {
      this.plain.add(key);
      return this.readPlain(target, key, path, lines);
    }
    return got;
  }

  private maxBytes(path: KubeletPath): number {
    return path === '/configz' ? CONFIGZ_MAX_BYTES : this.opts.maxBytes ?? DEFAULT_MAX_BODY_BYTES;
  }

  private async readPlain(target: KubeletTarget, key: string, path: KubeletPath, lines: LineSplitter | undefined): Promise<KubeletRead> {
    const host = target.address.includes(':') ? `[${target.address}]` : target.address;
    const url = `http://${host}:${target.port}${path}`;
    const options = { timeoutMs: this.timeoutMs, maxBytes: this.maxBytes(path), ownAddresses: [...localAddresses(), target.address] };
    const got = lines ? await fetchLocalLines(url, lines, options).then((r) => (r.ok ? { ...r, text: '' } : r)) : await fetchLocalText(url, options);
    if (got.ok) return got;
    this.plain.delete(key);
    return { ok: false, result: 'unreachable', reason: `the kubelet's plain-HTTP port is not readable (${got.reason})`, url: `http://${host}:${target.port}${path}` };
  }

  private get timeoutMs(): number {
    return this.opts.timeoutMs ?? 5000;
  }

  private async readHttps(target: KubeletTarget, path: KubeletPath, lines: LineSplitter | undefined): Promise<KubeletRead | 'plain-http'> {
    const host = target.address.includes(':') ? `[${target.address}]` : target.address;
    const url = `https://${host}:${target.port}${path}`;
    let creds: { token: string | undefined; ca: string | undefined };
    try {
      creds = await this.opts.credentials();
    } catch (err) {
      return { ok: false, result: 'error', reason: `the agent has no credentials to send (${(err as Error).message})`, url };
    }
    let ca: string | undefined = creds.ca;
    if (!this.opts.insecureTls && this.opts.caFile !== undefined) {
      try {
        ca = readCa(this.opts.caFile);
      } catch (err) {
        return { ok: false, result: 'tls', reason: `--kubelet-ca-file ${this.opts.caFile} is not usable: ${(err as Error).message}`, url };
      }
    }
    const trusted = this.opts.caFile !== undefined ? '--kubelet-ca-file' : ca !== undefined ? 'the cluster CA' : 'a CA the agent trusts';
    const maxBytes = this.maxBytes(path);
    return new Promise((resolve) => {
      const fail = (result: Exclude<KubeletReadResult, 'ok'>, reason: string): void => { req.destroy(); resolve({ ok: false, result, reason, url }); };
      const tls = process.getBuiltinModule('node:tls');
      const req = process.getBuiltinModule('node:https').request({
        host: target.address, port: target.port, path, method: 'GET', agent: false,
        headers: { accept: path === '/configz' ? 'application/json' : 'text/plain', 'accept-encoding': 'identity', ...(creds.token ? { authorization: `Bearer ${creds.token}` } : {}) },
        ...(ca === undefined ? {} : { ca }),
        rejectUnauthorized: this.opts.insecureTls !== true,
        // The certificate must be this node's: issued for its name or one of its addresses.
        checkServerIdentity: (_host, cert) => (target.names.some((n) => tls.checkServerIdentity(n, cert) === undefined)
          ? undefined : tls.checkServerIdentity(target.address, cert)),
        signal: AbortSignal.timeout(this.timeoutMs),
      }, (res: IncomingMessage) => {
        const status = res.statusCode ?? 0;
        if (status === 401) return fail('unauthorized', UNAUTHORIZED);
        if (status === 403) return fail('forbidden', FORBIDDEN[path]);
        const unread = (reason: string): void => fail('error', `the kubelet's answer was not read (${reason})`);
        if (lines) readCappedLines(res, maxBytes, lines, unread, (walk) => resolve({ ok: true, text: '', walk, url }));
        else readCappedBody(res, maxBytes, unread, (text) => resolve({ ok: true, text, url }));
      });
      req.on('error', (error: NodeJS.ErrnoException) => {
        if ((error.code === 'EPROTO' || /^ERR_SSL_/.test(error.code ?? '')) && PLAIN_HTTP_ANSWER.test(error.message)) return resolve('plain-http');
        const timedOut = error.name === 'AbortError' || error.code === 'ABORT_ERR';
        if (timedOut) return resolve({ ok: false, result: 'unreachable', reason: `the kubelet gave no complete answer within ${this.timeoutMs} ms (${url})`, url });
        if (isCertificateError(error)) return resolve({ ok: false, result: 'tls', reason: certificateReason(error.code ?? '', trusted), url });
        resolve({ ok: false, result: 'unreachable', reason: `the kubelet's port is not reachable (${url}: ${error.code ?? error.message})`, url });
      });
      req.end();
    });
  }
}

/** Why the kubelet's serving certificate was refused, and the fix: the flag that names its CA first. */
function certificateReason(code: string, trusted: string): string {
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') return `the kubelet's certificate names not this node: set --kubelet-address to an IP it names ${RISKY_TLS} (${code})`;
  if (code === 'CERT_HAS_EXPIRED' || code === 'CERT_NOT_YET_VALID') return `the kubelet's certificate is outside its validity (${code}): renew it (kubelet serverTLSBootstrap) ${RISKY_TLS}`;
  const fix = trusted === '--kubelet-ca-file' ? 'pass its signing CA' : 'set --kubelet-ca-file';
  return `the kubelet's certificate is not signed by ${trusted}: ${fix} ${RISKY_TLS} (${code})`;
}

function isCertificateError(error: NodeJS.ErrnoException): boolean {
  const code = error.code ?? '';
  return code === 'ERR_TLS_CERT_ALTNAME_INVALID' || /CERT|SELF_SIGNED|UNABLE_TO_(GET|VERIFY)|LEAF_SIGNATURE/.test(code);
}

/** Opened only once its descriptor says it is a regular file (a FIFO would block the agent), and read bounded. */
function readCa(file: string): string {
  const read = readRegularFileSync(file, MAX_CA_BYTES);
  if (!read.ok) throw new Error(read.tooLarge ? `larger than ${MAX_CA_BYTES} bytes` : `${fileTypeOf(read.info)}, not a regular file`);
  const text = read.data.toString('utf8');
  if (!text.includes('-----BEGIN CERTIFICATE-----')) throw new Error('holds no PEM certificate');
  return text;
}

function localAddresses(): string[] {
  return Object.values(process.getBuiltinModule('node:os').networkInterfaces()).flatMap((list) => (list ?? []).map((a) => a.address));
}

/** --kubelet-address: an IP literal (no name: nothing is resolved), or the reason it is not. */
export function checkKubeletAddress(value: string): string | undefined {
  return process.getBuiltinModule('node:net').isIP(value) === 0 ? `--kubelet-address ${value} is not an IP address; give the address the kubelet listens on, e.g. 127.0.0.1 with hostNetwork` : undefined;
}

/** A readable CA file or the reason it is not (checked at start: a bad flag is exit 2). */
export function checkCaFile(file: string): string | undefined {
  try {
    readCa(file);
    return undefined;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return `--kubelet-ca-file ${file}: ${code ? `cannot be read (${code})` : (err as Error).message}; give a PEM file with the CA that signed the kubelet's serving certificate`;
  }
}
