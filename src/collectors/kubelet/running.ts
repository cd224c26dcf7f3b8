// The running kubelet's own configuration (/configz, read by the agent before each scan) set
// against what its files and flags say: where it was read, its values decide the kubelet facts
// (source "running kubelet /configz") and every difference from the files is drift, a restart
// pending; where it was not, the files decide and each fact says why the running value is unknown.
import type { HostRoot } from '../../host/host-root.ts';
import type { KubeletConfigView } from '../../workload/kubelet-view.ts';
import { applyClientGoZero, KUBELET_FIELDS, type Effective, type KubeletField, type Setting } from './config.ts';
import { fileOf, lineIn } from '../file-lines.ts';

export const RUNNING_SOURCE = 'running kubelet /configz';
/** Why `scan` has no running values; NOT_READ as a fact's detail. */
export const HOST_ONLY = '`scan` reads only the host; the agent reads the kubelet\'s /configz (RBAC get nodes/configz) before each scan';
export const NOT_READ = `not read: ${HOST_ONLY}`;
const CGROUP_DRIVERS = ['systemd', 'cgroupfs'];

/** The running value of each field /configz holds; a pointer field it omits (maxParallelImagePulls) is unset: null. */
export function runningValues(config: Record<string, unknown>): Map<KubeletField, Setting> {
  const out = new Map<KubeletField, Setting>();
  for (const field of KUBELET_FIELDS) {
    const value = config[field];
    if (field === 'cgroupDriver') {
      if (typeof value === 'string' && CGROUP_DRIVERS.includes(value)) out.set(field, value);
    } else if (typeof value === 'number' || typeof value === 'boolean') out.set(field, value);
    else if (field === 'maxParallelImagePulls' && (value === undefined || value === null)) out.set(field, null);
  }
  return out;
}

/** The running value as the kubelet uses it (client-go's 0 → 5/10), with what the files say beside it. */
export function runningEffective(field: KubeletField, value: Setting, view: KubeletConfigView, files: Effective | undefined): Effective {
  const said = files ? `; its files say ${String(files.value)} (${files.source === 'default' ? 'not set: the version default' : files.source})` : '';
  return applyClientGoZero(field, { value, source: RUNNING_SOURCE, detail: `the running kubelet's value (${view.source})${said}` });
}

/** Where a file or flag sets the field, with the line: "/var/lib/kubelet/config.yaml line 12". */
async function whereSet(host: HostRoot, field: KubeletField, files: Effective): Promise<string> {
  if (files.source.startsWith('flag:')) return `${files.source.slice(5)} (${files.origin ?? 'the command line'})`;
  const file = fileOf(files.source);
  const line = file ? await lineIn(host, file, new RegExp(`^\\s*"?${field}"?\\s*:`)) : undefined;
  return line === undefined ? files.source : `${files.source} line ${line}`;
}

/** Each field whose running value differs from what a file or flag sets: "kubeAPIQPS: running 5, <file> line 27 says 50". */
export async function driftOf(host: HostRoot, running: Map<KubeletField, Setting>, files: Map<KubeletField, Effective>): Promise<string[]> {
  const drift: string[] = [];
  for (const field of KUBELET_FIELDS) {
    const fromFiles = files.get(field);
    if (!fromFiles || fromFiles.source === 'default' || !running.has(field)) continue;
    const now = applyClientGoZero(field, { value: running.get(field) as Setting, source: RUNNING_SOURCE, detail: '' }).value;
    if (now === fromFiles.value) continue;
    drift.push(`${field}: running ${String(now)}, ${await whereSet(host, field, fromFiles)} says ${String(fromFiles.value)}`);
  }
  return drift;
}

/** Why the running configuration is not known, for facts decided from the files. */
export function runningUnknown(view: KubeletConfigView | undefined): string {
  return view ? `the running kubelet's value is unknown: ${view.reason ?? view.result}` : NOT_READ;
}
