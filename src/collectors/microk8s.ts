// MicroK8s runs kubelet, kube-scheduler, kube-controller-manager, kube-apiserver and kube-proxy as
// threads of one `kubelite` process (snap service snap.microk8s.daemon-kubelite). Each component's
// flags are in an args file (`--kubelet-args-file`, … default /var/snap/microk8s/current/args/<name>),
// read by kubelite line by line: `#` lines and blank lines skipped, quotes removed, each line split on
// spaces, `$VAR`/`${VAR}` expanded from the snap's environment (SNAP, SNAP_DATA, SNAP_COMMON).
import path from 'node:path';
import type { HostRoot } from '../host/host-root.ts';
import { listProcesses, parseFlags, type HostProcess, type SourcedArg } from '../host/processes.ts';
import { pickComponentProcess } from '../host/component-process.ts';
import { oncePerScan } from '../host/per-scan.ts';
import { firstLines } from '../text/lines.ts';

export type Microk8sComponent = 'kubelet' | 'kube-scheduler' | 'kube-controller-manager' | 'kube-apiserver';

const ARGS_FLAG: Record<Microk8sComponent, string> = {
  kubelet: 'kubelet-args-file',
  'kube-scheduler': 'scheduler-args-file',
  'kube-controller-manager': 'controller-manager-args-file',
  'kube-apiserver': 'apiserver-args-file',
};
const SNAP_DATA_CURRENT = '/var/snap/microk8s/current';
const SERVICE = 'snap.microk8s.daemon-kubelite';
const MAX_ARGS_BYTES = 64 * 1024;

export interface Microk8sInstall {
  process?: HostProcess;
  /** SNAP_DATA: /var/snap/microk8s/<revision> (or current). */
  snapData: string;
  /** Where each component's args file is. */
  argsFiles: Record<Microk8sComponent, string>;
  /** False with `--start-control-plane=false` (a worker joined with --worker). */
  controlPlane: boolean;
  service: string;
}

/** kubelite's args-file reading: one flag (or several, space-separated) per line, variables expanded. */
export function microk8sArgs(text: string, file: string, env: Record<string, string>): SourcedArg[] {
  const args: SourcedArg[] = [];
  for (const raw of firstLines(text, 2000)) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    for (const part of line.replace(/["']/g, '').split(' ')) {
      args.push({ text: expand(part.slice(0, 4096), env), origin: file });
    }
  }
  return args;
}

/** Go's os.ExpandEnv for the snap variables; an unknown variable becomes '' as in Go. */
function expand(text: string, env: Record<string, string>): string {
  return text.replace(/\$\{([A-Za-z_][A-Za-z0-9_]{0,63})\}|\$([A-Za-z_][A-Za-z0-9_]{0,63})/g, (_m, braced: string | undefined, bare: string | undefined) => env[(braced ?? bare) as string] ?? '');
}

export function snapEnv(snapData: string): Record<string, string> {
  const revision = path.posix.basename(snapData);
  return { SNAP_DATA: snapData, SNAP_COMMON: '/var/snap/microk8s/common', SNAP: `/snap/microk8s/${revision}`, SNAP_NAME: 'microk8s' };
}

/** kubelite, trusted as the components are: another user's process named kubelite never names the args files. */
async function kubeliteProcess(host: HostRoot): Promise<HostProcess | undefined> {
  const picked = await pickComponentProcess(host, await listProcesses(host), ['kubelite'], { accept: (p) => !p.argv.slice(1).includes('--version') });
  return picked.chosen?.process;
}

async function detect(host: HostRoot): Promise<Microk8sInstall | undefined> {
  const process = await kubeliteProcess(host);
  if (!process && !(await host.exists(`${SNAP_DATA_CURRENT}/args/kubelet`))) return undefined;
  const flags = parseFlags((process?.argv.slice(1) ?? []).map((text) => ({ text, origin: '' })), new Set(['start-control-plane']));
  const argsFiles = {} as Record<Microk8sComponent, string>;
  for (const [component, flag] of Object.entries(ARGS_FLAG) as [Microk8sComponent, string][]) {
    argsFiles[component] = flags.get(flag)?.value || `${SNAP_DATA_CURRENT}/args/${component}`;
  }
  const snapData = path.posix.dirname(path.posix.dirname(argsFiles.kubelet));
  return { ...(process ? { process } : {}), snapData, argsFiles, controlPlane: flags.get('start-control-plane')?.value !== 'false', service: SERVICE };
}

export const detectMicrok8s: (host: HostRoot) => Promise<Microk8sInstall | undefined> = oncePerScan(detect);

/** A component's flags from its args file, or why they cannot be read. */
export async function microk8sComponentArgs(host: HostRoot, install: Microk8sInstall, component: Microk8sComponent): Promise<{ args: SourcedArg[]; file: string } | { problem: string; file: string }> {
  const file = install.argsFiles[component];
  const text = await host.readText(file, { maxBytes: MAX_ARGS_BYTES });
  if (!text.ok) return { problem: `kubelite reads the ${component} flags from ${file}: ${text.reason}`, file };
  return { args: microk8sArgs(text.text, file, snapEnv(install.snapData)), file };
}

/** The Kubernetes version of the snap: `version:` in its meta/snap.yaml ("v1.32.3"). */
export async function microk8sVersion(host: HostRoot, install: Microk8sInstall): Promise<{ version: string; source: string } | undefined> {
  let revision = path.posix.basename(install.snapData);
  if (revision === 'current') {
    // "current" is snapd's link to the revision in use, relative ("9044").
    const link = await host.readLink(SNAP_DATA_CURRENT);
    if (link.ok && /^x?\d{1,10}$/.test(link.text)) revision = link.text;
  }
  const file = `/snap/microk8s/${revision}/meta/snap.yaml`;
  const text = await host.readText(file, { maxBytes: 64 * 1024 });
  const version = text.ok ? /^version:\s*['"]?(v?1\.\d{1,3}\.\d{1,3})/m.exec(text.text)?.[1] : undefined;
  return version ? { version: version.replace(/^v/, ''), source: file } : undefined;
}
