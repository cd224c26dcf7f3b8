// A static pod manifest (kubeadm's /etc/kubernetes/manifests, rke2's pod-manifests): the component
// container's command + args, and its hostPath mounts for mapping in-container paths to host paths.
import { parse as parseYaml } from 'yaml';
import type { HostRoot } from '../host/host-root.ts';
import type { SourcedArg } from '../host/processes.ts';

export interface HostMount {
  mountPath: string;
  hostPath: string;
}

export interface StaticPod {
  path: string;
  args: SourcedArg[];
  mounts: HostMount[];
  /** Set when the manifest exists but cannot be used. */
  error?: string;
}

interface Container {
  name?: unknown;
  command?: unknown;
  args?: unknown;
  volumeMounts?: unknown;
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

function records(value: unknown): Record<string, unknown>[] {
  return Array.isArray(value) ? value.filter((v): v is Record<string, unknown> => v !== null && typeof v === 'object') : [];
}

/** Parses the manifest text; throws on malformed YAML. */
export function parseStaticPod(manifestPath: string, text: string, component: string): StaticPod {
  const doc = parseYaml(text, { logLevel: 'error' }) as { spec?: { containers?: unknown; volumes?: unknown } } | null;
  const containers = records(doc?.spec?.containers) as Container[];
  const container = containers.find((c) => c.name === component) ?? containers[0];
  if (!container) return { path: manifestPath, args: [], mounts: [], error: `${manifestPath} has no spec.containers` };
  const argv = [...strings(container.command), ...strings(container.args)];
  // The command starts with the binary ("kube-scheduler"); flags follow.
  const args = argv.filter((arg, i) => !(i === 0 && !arg.startsWith('-'))).map((text) => ({ text, origin: manifestPath }));
  const volumes = new Map<string, string>();
  for (const volume of records(doc?.spec?.volumes)) {
    const hostPath = (volume.hostPath as { path?: unknown } | undefined)?.path;
    if (typeof volume.name === 'string' && typeof hostPath === 'string') volumes.set(volume.name, hostPath);
  }
  const mounts: HostMount[] = [];
  for (const mount of records(container.volumeMounts)) {
    const hostPath = typeof mount.name === 'string' ? volumes.get(mount.name) : undefined;
    if (hostPath && typeof mount.mountPath === 'string') mounts.push({ mountPath: mount.mountPath, hostPath });
  }
  return { path: manifestPath, args, mounts };
}

export async function readStaticPod(host: HostRoot, manifestPath: string, component: string): Promise<StaticPod | undefined> {
  const text = await host.readText(manifestPath);
  if (!text.ok) {
    if (text.code === 'ENOENT') return undefined;
    return { path: manifestPath, args: [], mounts: [], error: `${text.reason}; run the advisor with read access to ${manifestPath}` };
  }
  try {
    return parseStaticPod(manifestPath, text.text, component);
  } catch (error) {
    return { path: manifestPath, args: [], mounts: [], error: `${manifestPath} is not valid YAML (${(error as Error).message.split('\n')[0]}); the kubelet cannot run this static pod — fix the manifest` };
  }
}
