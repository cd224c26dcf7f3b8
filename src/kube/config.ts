// Where the credentials come from: a kubeconfig file or the pod's service account. client-node's
// KubeConfig (imported from its config module, not the package index, which would load every
// generated API class) parses kubeconfig files and applies token, token-file, client-certificate and
// exec-plugin auth and TLS. Everything it is handed is checked first: a binary or oversized file, or
// a server that is not an http(s) URL, is an error naming the file and the fix, never a retry loop.
import { readRegularFileSync, type CheckedBytes } from '../host/open-checked.ts';
import { isIPv6 } from 'node:net';
import path from 'node:path';
import { KubeConfig } from '@kubernetes/client-node/dist/config.js';
import { printable } from './errors.ts';
import { InputError } from '../input-error.ts';

/** A bad kubeconfig or missing in-cluster config: bad input, the CLI's exit 2. */
export class KubeConfigError extends InputError {
  override name = 'KubeConfigError';
}

export type ConfigSource =
  /** `context`: one of the file's contexts instead of its current-context (kubectl's --context). */
  | { kind: 'file'; path: string; context?: string }
  /** The service account files under `root` (default /), the server from KUBERNETES_SERVICE_HOST/PORT. */
  | { kind: 'in-cluster'; root: string; host: string; port: string };

export interface LoadedConfig {
  kc: KubeConfig;
  server: URL;
  source: ConfigSource;
  /** "--kubeconfig FILE" or "in-cluster config (service account)", for messages. */
  origin: string;
}

const MAX_KUBECONFIG_BYTES = 4 * 1024 * 1024;
export const SERVICE_ACCOUNT_DIR = 'var/run/secrets/kubernetes.io/serviceaccount';

/** The kubeconfig path when given, else the pod's service account; neither: an error saying what to pass. */
export function configSource(kubeconfig: string | undefined, env: NodeJS.ProcessEnv = process.env, root = '/'): ConfigSource {
  if (kubeconfig) return { kind: 'file', path: kubeconfig };
  const host = env.KUBERNETES_SERVICE_HOST;
  if (!host) throw new KubeConfigError('not running in a pod (KUBERNETES_SERVICE_HOST is not set): pass --kubeconfig FILE');
  return { kind: 'in-cluster', root, host, port: env.KUBERNETES_SERVICE_PORT || '443' };
}

export function loadKubeConfig(source: ConfigSource): LoadedConfig {
  const origin = source.kind === 'file' ? `--kubeconfig ${source.path}` : 'in-cluster config (service account)';
  const kc = source.kind === 'file' ? fromFile(source.path, origin) : inCluster(source);
  if (source.kind === 'file' && source.context !== undefined) useContext(kc, source.context, origin);
  if (source.kind === 'file') refuseAuthProvider(kc, origin);
  const cluster = kc.getCurrentCluster();
  if (!cluster) {
    throw new KubeConfigError(source.kind === 'file'
      ? `${origin} has no current cluster; set current-context to a context whose cluster exists`
      : `${origin}: no cluster`);
  }
  return { kc, server: serverUrl(cluster.server, cluster.skipTLSVerify === true, cluster.name, origin), source, origin };
}

/**
 * kubectl's own words (client-go ≥ 1.26, plugin/pkg/client/auth/{gcp,azure}/*_stub.go and
 * rest.GetAuthProvider): client-node's gcp and azure providers would run the entry's `cmd-path`
 * with `cmd-args` through a shell, and any provider with a `tokenFile` would send that file as a
 * token. Credential plugins are `exec` entries, as kubectl has them.
 */
const REMOVED_AUTH_PROVIDERS = new Map<string, string>([
  ['gcp', `The gcp auth plugin has been removed.
Please use the "gke-gcloud-auth-plugin" kubectl/client-go credential plugin instead.
See https://cloud.google.com/blog/products/containers-kubernetes/kubectl-auth-changes-in-gke for further details`],
  ['azure', `The azure auth plugin has been removed.
Please use the https://github.com/Azure/kubelogin kubectl/client-go credential plugin instead.
See https://kubernetes.io/docs/reference/access-authn-authz/authentication/#client-go-credential-plugins for further details`],
]);
/** The one auth-provider kubectl still has. */
const AUTH_PROVIDERS = new Set(['oidc']);

/** Refused before anything is applied: an auth-provider kubectl refuses is never run or read. */
function refuseAuthProvider(kc: KubeConfig, origin: string): void {
  const user = kc.getCurrentUser();
  const provider = user?.authProvider as { name?: unknown } | undefined;
  if (provider === undefined || provider === null) return;
  const name = typeof provider.name === 'string' ? provider.name : '';
  if (AUTH_PROVIDERS.has(name)) return;
  const words = REMOVED_AUTH_PROVIDERS.get(name) ?? `no Auth Provider found for name ${JSON.stringify(printable(name, 64))}`;
  throw new KubeConfigError(`cannot use user "${printable(user?.name ?? '', 64)}" of ${origin}: ${words}`);
}

function useContext(kc: KubeConfig, context: string, origin: string): void {
  const known = kc.getContexts().map((c) => printable(c.name, 64));
  if (!kc.getContextObject(context)) {
    throw new KubeConfigError(`--context ${printable(context, 64)}: no such context in ${origin} (it has: ${known.join(', ') || 'none'})`);
  }
  kc.setCurrentContext(context);
}

function fromFile(file: string, origin: string): KubeConfig {
  const text = readKubeconfigText(file, origin);
  const kc = new KubeConfig();
  try {
    kc.loadFromString(text);
    kc.makePathsAbsolute(path.dirname(file));
  } catch (err) {
    // YAML errors quote the offending lines: keep only the first line of the message, cleaned.
    const first = String((err as Error)?.message ?? err).split('\n')[0] ?? '';
    throw new KubeConfigError(`cannot load ${origin}: not a kubeconfig (${printable(first, 200)})`);
  }
  return kc;
}

function readKubeconfigText(file: string, origin: string): string {
  let read: CheckedBytes;
  try {
    // Checked through its descriptor before it is opened for reading: no FIFO or device is ever opened.
    read = readRegularFileSync(file, MAX_KUBECONFIG_BYTES);
  } catch (err) {
    throw new KubeConfigError(`cannot load ${origin}: ${(err as NodeJS.ErrnoException).code ?? printable(String(err))}; pass --kubeconfig FILE`);
  }
  if (!read.ok && !read.tooLarge) throw new KubeConfigError(`cannot load ${origin}: not a regular file`);
  if (!read.ok) throw new KubeConfigError(`cannot load ${origin}: ${read.info.size} bytes is too large for a kubeconfig (at most ${MAX_KUBECONFIG_BYTES})`);
  const bytes = read.data;
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new KubeConfigError(`cannot load ${origin}: not a kubeconfig (binary content, not UTF-8 text)`);
  }
  if (text.includes('\u0000')) throw new KubeConfigError(`cannot load ${origin}: not a kubeconfig (binary content: NUL bytes)`);
  return text;
}

/** The service account's CA and token files under `root`, the server from the environment (as client-go's InClusterConfig). */
function inCluster(source: Extract<ConfigSource, { kind: 'in-cluster' }>): KubeConfig {
  const dir = path.join(source.root, SERVICE_ACCOUNT_DIR);
  const host = isIPv6(source.host) ? `[${source.host}]` : source.host;
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'inCluster', server: `https://${host}:${source.port}`, caFile: path.join(dir, 'ca.crt'), skipTLSVerify: false }],
    users: [{ name: 'inClusterUser', authProvider: { name: 'tokenFile', config: { tokenFile: path.join(dir, 'token') } } }],
    contexts: [{ name: 'inClusterContext', cluster: 'inCluster', user: 'inClusterUser' }],
    currentContext: 'inClusterContext',
  });
  return kc;
}

function serverUrl(server: string, skipTLSVerify: boolean, cluster: string, origin: string): URL {
  const shown = printable(String(server ?? ''), 120);
  const fix = `fix clusters[].cluster.server of cluster "${printable(cluster, 64)}" in ${origin} (e.g. https://10.0.0.1:6443)`;
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    throw new KubeConfigError(`server "${shown}" is not an http(s) URL; ${fix}`);
  }
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || url.hostname === '') {
    throw new KubeConfigError(`server "${shown}" is not an http(s) URL; ${fix}`);
  }
  if (url.protocol === 'http:' && !skipTLSVerify) {
    throw new KubeConfigError(`server "${shown}" is plain http, allowed only with insecure-skip-tls-verify: true; ${fix}`);
  }
  return url;
}
