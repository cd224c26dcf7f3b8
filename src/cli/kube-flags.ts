// The flags that choose a cluster, as kubectl reads them: --kubeconfig FILE, else $KUBECONFIG (its
// first file), else ~/.kube/config, else the pod's service account; --context NAME instead of the
// kubeconfig's current-context.
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import { loadKubeConfig } from '../agent/kube.ts';
import { UsageError } from './io.ts';

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

/** A bad kubeconfig or context is the user's to fix: exit 2 with the reason. */
export function kubeConfigFrom(values: { kubeconfig?: string; context?: string }, env: NodeJS.ProcessEnv): KubeConfig {
  try {
    return loadKubeConfig(kubeconfigPath(values.kubeconfig, env), values.context);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}
