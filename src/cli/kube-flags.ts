// The flags that choose a cluster, as kubectl reads them: --kubeconfig FILE, else $KUBECONFIG (its
// first file), else ~/.kube/config, else the pod's service account; --context NAME instead of the
// kubeconfig's current-context.
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { ClusterApi, type Paging } from '../cluster/api.ts';
import type { ClientOptions } from '../kube/client.ts';
import { configSource, type ConfigSource } from '../kube/config.ts';
import { UsageError } from './io.ts';
import { DEFAULT_AGENT_NAMESPACE } from '../wire/heartbeat.ts';
import { stripControls } from '../text/controls.ts';

export const KUBE_FLAGS = {
  kubeconfig: { type: 'string' },
  context: { type: 'string' },
} as const;

export const KUBE_FLAGS_USAGE = `  --kubeconfig FILE      kubeconfig to use (default: $KUBECONFIG, ~/.kube/config, or in-cluster)
  --context NAME         kubeconfig context to use (default: its current-context)
`;

export function kubeconfigPath(flag: string | undefined, env: NodeJS.ProcessEnv): string | undefined {
  if (flag) return flag;
  const fromEnv = env.KUBECONFIG?.split(':').find(Boolean);
  if (fromEnv) return fromEnv;
  if (env.KUBERNETES_SERVICE_HOST) return undefined;
  const home = join(env.HOME ?? homedir(), '.kube', 'config');
  return existsSync(home) ? home : undefined;
}

/** Where these flags point (a kubeconfig and context, or the service account); bad flags: exit 2. */
export function configSourceFrom(values: { kubeconfig?: string; context?: string }, env: NodeJS.ProcessEnv): ConfigSource {
  const source = configSource(kubeconfigPath(values.kubeconfig, env), env);
  if (values.context === undefined) return source;
  if (source.kind !== 'file') throw new UsageError(`--context ${values.context} needs a kubeconfig: pass --kubeconfig FILE or set KUBECONFIG`);
  return { ...source, context: values.context };
}

/** The cluster these flags name; a bad kubeconfig or context (KubeConfigError, an InputError) is the user's to fix: exit 2 with the reason. */
export function clusterApiFrom(values: { kubeconfig?: string; context?: string }, env: NodeJS.ProcessEnv, opts: ClientOptions = {}, paging?: Paging): ClusterApi {
  return ClusterApi.fromSource(configSourceFrom(values, env), opts, paging);
}

/** --agent-namespace: where the agents run and keep their heartbeat Leases (report, describe, cleanup). */
export const AGENT_NAMESPACE_FLAG = { 'agent-namespace': { type: 'string' } } as const;
export const AGENT_NAMESPACE_USAGE = `  --agent-namespace NS   the agents' namespace: their heartbeat Leases (default ${DEFAULT_AGENT_NAMESPACE})
`;
/** A namespace name as the API allows it (a DNS label). */
const NAMESPACE = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** The namespace of a flag, checked: a DNS label, or a UsageError naming the flag. */
export function namespaceFlag(flag: string, value: string | undefined, fallback = DEFAULT_AGENT_NAMESPACE): string {
  const namespace = value ?? fallback;
  if (!NAMESPACE.test(namespace)) throw new UsageError(`${flag} "${stripControls(namespace).slice(0, 80)}" is not a namespace name (lower-case letters, digits and "-")`);
  return namespace;
}
