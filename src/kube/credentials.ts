// Per-request credentials: the TLS options and headers KubeConfig.applyToHTTPSOptions applies (token,
// token file, client certificate, exec plugin, basic auth, impersonation), on a keep-alive agent of
// our own per TLS identity. A token file (the pod's projected service-account token) is re-read as
// soon as it changes on disk; after a 401 the whole configuration is loaded again once, so a rotated
// exec credential, certificate file or kubeconfig token is picked up without a restart.
import { createHash } from 'node:crypto';
import { statSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { printable } from './errors.ts';
import { loadKubeConfig, type LoadedConfig } from './config.ts';
import { readRegularFileSync, type CheckedBytes } from '../host/open-checked.ts';

export interface RequestAuth {
  agent: http.Agent;
  headers: Record<string, string>;
}

/** A reload after a 401 at most this often: a credential the server rejects for good is not re-run on every request. */
const RELOAD_INTERVAL_MS = 5_000;
/** An agent replaced by new TLS material is destroyed after this long (requests in flight on it finish first). */
const RETIRE_AFTER_MS = 60_000;
const MAX_TOKEN_BYTES = 64 * 1024;

export class CredentialError extends Error {
  override name = 'CredentialError';
}

interface TokenFileState {
  file: string;
  stamp: string;
  token: string;
}

export class Credentials {
  private config: LoadedConfig;
  private agent: { key: string; agent: http.Agent } | undefined;
  private readonly retired = new Set<http.Agent>();
  private tokenFile: TokenFileState | undefined;
  private lastReload = -Infinity;

  constructor(config: LoadedConfig) {
    this.config = config;
  }

  get server(): URL {
    return this.config.server;
  }

  async apply(): Promise<RequestAuth> {
    const { opts, headers } = await this.applied();
    return { agent: this.agentFor(opts), headers };
  }

  /** What applyToHTTPSOptions gives (TLS material) and the request headers, the token file's token the newest. */
  private async applied(): Promise<{ opts: https.RequestOptions; headers: Record<string, string> }> {
    const opts: https.RequestOptions = {};
    try {
      await this.config.kc.applyToHTTPSOptions(opts);
    } catch (err) {
      throw new CredentialError(`cannot get credentials from ${this.config.origin}: ${printable(String((err as Error)?.message ?? err), 300)}`);
    }
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(opts.headers ?? {})) {
      if (typeof value === 'string') headers[name] = value;
    }
    if (typeof opts.auth === 'string') headers.Authorization = `Basic ${Buffer.from(opts.auth).toString('base64')}`;
    const fileToken = this.currentFileToken();
    if (fileToken) headers.Authorization = `Bearer ${fileToken}`;
    return { opts, headers };
  }

  /**
   * For a call to this node's kubelet with the same identity: the bearer token (none for a client
   * certificate or basic auth: only a token is sent to the kubelet, whose webhook authentication
   * checks it with a TokenReview) and the cluster's CA (what the kubelet's serving certificate is
   * verified against when no other CA is given).
   */
  async bearerAndCa(): Promise<{ token: string | undefined; ca: string | undefined }> {
    const { opts, headers } = await this.applied();
    const bearer = /^Bearer (\S+)$/.exec(headers.Authorization ?? headers.authorization ?? '');
    const ca = opts.ca === undefined ? undefined : Array.isArray(opts.ca) ? opts.ca.map(String).join('\n') : String(opts.ca);
    return { token: bearer?.[1], ca };
  }

  /** After a 401: load the configuration again (new exec credential, files re-read). False when done too recently. */
  refresh(): boolean {
    const now = performance.now();
    if (now - this.lastReload < RELOAD_INTERVAL_MS) return false;
    this.lastReload = now;
    try {
      this.config = loadKubeConfig(this.config.source);
    } catch {
      return false; // the file went bad meanwhile: keep what worked
    }
    this.tokenFile = undefined;
    return true;
  }

  /** Close every connection (the client is stopping). */
  destroy(): void {
    this.agent?.agent.destroy();
    for (const agent of this.retired) agent.destroy();
    this.retired.clear();
    this.agent = undefined;
  }

  private agentFor(opts: https.RequestOptions): http.Agent {
    // A proxy (proxy-url in the kubeconfig) needs client-node's proxy agent.
    if (this.config.kc.getCurrentCluster()?.proxyUrl && opts.agent instanceof http.Agent) return opts.agent;
    const tls = {
      ca: opts.ca, cert: opts.cert, key: opts.key, pfx: opts.pfx, passphrase: opts.passphrase,
      rejectUnauthorized: opts.rejectUnauthorized, servername: opts.servername,
    };
    const key = fingerprint(this.config.server.protocol, tls);
    if (this.agent?.key === key) return this.agent.agent;
    if (this.agent) this.retire(this.agent.agent);
    const defined = Object.fromEntries(Object.entries(tls).filter(([, v]) => v !== undefined));
    const agent = this.config.server.protocol === 'http:'
      ? new http.Agent({ keepAlive: true, maxFreeSockets: 4 })
      : new https.Agent({ keepAlive: true, maxFreeSockets: 4, ...defined });
    this.agent = { key, agent };
    return agent;
  }

  private retire(agent: http.Agent): void {
    this.retired.add(agent);
    setTimeout(() => { agent.destroy(); this.retired.delete(agent); }, RETIRE_AFTER_MS).unref();
  }

  /** The token file of the current user (in-cluster: the projected token), re-read whenever it changed. */
  private currentFileToken(): string | undefined {
    const file = this.config.kc.getCurrentUser()?.authProvider?.config?.tokenFile;
    if (typeof file !== 'string') return undefined;
    let stamp: string;
    try {
      const st = statSync(file);
      stamp = `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}`;
    } catch (err) {
      throw new CredentialError(`cannot read the token file ${file}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`);
    }
    if (this.tokenFile?.file === file && this.tokenFile.stamp === stamp) return this.tokenFile.token;
    const token = readTokenFile(file);
    this.tokenFile = { file, stamp, token };
    return token;
  }
}

function fingerprint(protocol: string, tls: Record<string, unknown>): string {
  const hash = createHash('sha256').update(protocol);
  for (const [name, value] of Object.entries(tls)) {
    if (value === undefined) continue;
    const parts = Array.isArray(value) ? value : [value];
    hash.update(`\u0000${name}=`);
    for (const part of parts) hash.update(Buffer.isBuffer(part) ? part : String(part));
  }
  return hash.digest('hex');
}

/** The token file's text: a regular file (checked through its descriptor before it is opened) of at most MAX_TOKEN_BYTES. */
function readTokenFile(file: string): string {
  let read: CheckedBytes;
  try {
    read = readRegularFileSync(file, MAX_TOKEN_BYTES);
  } catch (err) {
    throw new CredentialError(`cannot read the token file ${file}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`);
  }
  if (!read.ok && read.tooLarge) throw new CredentialError(`token file ${file} is larger than ${MAX_TOKEN_BYTES} bytes`);
  if (!read.ok) throw new CredentialError(`token file ${file} is not a regular file`);
  return read.data.toString('utf8').trim();
}
