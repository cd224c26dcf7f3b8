// Which kubeconfig a command that talks to the API uses, as kubectl picks it: --kubeconfig, the
// first file in $KUBECONFIG, ~/.kube/config; in a pod without either, the service account (undefined).
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

export function kubeconfigPath(flag: string | undefined, env: NodeJS.ProcessEnv): string | undefined {
  if (flag) return flag;
  const fromEnv = env.KUBECONFIG?.split(':').find(Boolean);
  if (fromEnv) return fromEnv;
  if (env.KUBERNETES_SERVICE_HOST) return undefined;
  const home = join(env.HOME ?? homedir(), '.kube', 'config');
  return existsSync(home) ? home : undefined;
}
