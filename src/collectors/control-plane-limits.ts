// Client limits of kube-scheduler and kube-controller-manager, and kube-apiserver's inflight limits,
// from the live processes, the static pod manifests (kubeadm, rke2) or k3s's embedded-component args.
// A scheduler with --config ignores --kube-api-qps/burst: then clientConnection of that file counts,
// read through the manifest's hostPath mount (or the live process's /proc/<pid>/root).
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import type { Collector } from './collector.ts';
import type { FactSet } from '../facts/fact-set.ts';
import type { HostRoot } from '../host/host-root.ts';
import { argsFrom, listProcesses, numericFlag, parseFlags, type FlagMap, type SourcedArg } from '../host/processes.ts';
import { pickComponentProcess, type JudgedProcess } from '../host/component-process.ts';
import { componentArgs, detectRancher, type RancherInstall } from './rancher.ts';
import { detectMicrok8s, microk8sComponentArgs, type Microk8sInstall } from './microk8s.ts';
import { readStaticPod, type StaticPod } from './static-pod.ts';
import { fileOf, lineIn, withLine } from './file-lines.ts';
import { isUnitFile } from './kubelet/remediation.ts';

type Component = 'kube-scheduler' | 'kube-controller-manager' | 'kube-apiserver';
const MANIFEST_DIRS = ['/etc/kubernetes/manifests', '/var/lib/rancher/rke2/agent/pod-manifests'];
const BOOLEAN_FLAGS = new Set(['leader-elect', 'profiling', 'use-service-account-credentials', 'enable-priority-and-fairness', 'allow-privileged', 'help', 'version']);

interface Found {
  args: SourcedArg[];
  /** Where the operator edits this component's flags. */
  editIn: string;
  manifest?: StaticPod;
  pid?: number;
  rancher?: RancherInstall;
  /** MicroK8s: a thread of kubelite, its flags in an args file (restart the snap service). */
  microk8s?: Microk8sInstall;
  /** The args file could not be read. */
  problem?: string;
  /** How the live process was trusted. */
  trust?: Pick<JudgedProcess, 'level' | 'why'>;
}

async function fromMicrok8s(host: HostRoot, component: Component, microk8s: Microk8sInstall): Promise<Found | undefined> {
  if (!microk8s.controlPlane) return undefined;
  const read = await microk8sComponentArgs(host, microk8s, component);
  const pid = microk8s.process ? { pid: microk8s.process.pid } : {};
  return 'args' in read ? { args: read.args, editIn: read.file, microk8s, ...pid } : { args: [], editIn: read.file, microk8s, problem: read.problem, ...pid };
}

type Processes = Awaited<ReturnType<typeof listProcesses>>;

/** The component, and the processes with its name that were not used (with why). */
async function findComponent(host: HostRoot, component: Component, processes: Processes, rancher: RancherInstall | undefined): Promise<{ found?: Found; refused: string[] }> {
  const microk8s = await detectMicrok8s(host);
  if (microk8s) {
    const found = await fromMicrok8s(host, component, microk8s);
    return { ...(found ? { found } : {}), refused: [] };
  }
  const picked = await pickComponentProcess(host, processes, [component]);
  const found = await fromSources(host, component, picked.chosen, rancher);
  return { ...(found ? { found } : {}), refused: picked.refused };
}

async function fromSources(host: HostRoot, component: Component, chosen: JudgedProcess | undefined, rancher: RancherInstall | undefined): Promise<Found | undefined> {
  let manifest: StaticPod | undefined;
  for (const dir of MANIFEST_DIRS) {
    manifest ??= await readStaticPod(host, `${dir}/${component}.yaml`, component);
  }
  // rke2 rewrites its pod manifests on every start: the lasting edit is <component>-arg in its config.yaml.
  const rke2Config = rancher?.distro === 'rke2' && manifest?.path.startsWith('/var/lib/rancher/rke2/') ? `/etc/rancher/rke2/config.yaml (${component}-arg)` : undefined;
  const rke2 = rke2Config && rancher ? { rancher } : {};
  const live = chosen?.process;
  if (live && chosen) {
    const trust = { level: chosen.level, why: chosen.why };
    const found: Found = { args: argsFrom(live.argv.slice(1), `/proc/${live.pid}/cmdline`), editIn: rke2Config ?? manifest?.path ?? `/proc/${live.pid}/cmdline`, pid: live.pid, trust, ...rke2 };
    return manifest ? { ...found, manifest } : found;
  }
  if (manifest) return { args: manifest.args, editIn: rke2Config ?? manifest.path, manifest, ...rke2 };
  if (rancher?.role === 'server') {
    const args = componentArgs(rancher, component);
    // A flag kept on the unit's ExecStart (k3s's install script puts them there) is edited there.
    const origin = fileOf(parseFlags(args, BOOLEAN_FLAGS).get('kube-api-qps')?.origin ?? '');
    const editIn = origin && isUnitFile(origin) ? `${origin} (ExecStart ${component}-arg)` : `/etc/rancher/${rancher.distro}/config.yaml (${component}-arg)`;
    return { args, editIn, rancher };
  }
  return undefined;
}

/** Where the manifest's hostPath mounts put a path the component was given, on the host. */
function throughMounts(manifest: StaticPod, containerPath: string): string | undefined {
  const mount = manifest.mounts
    .filter((m) => containerPath === m.mountPath || containerPath.startsWith(m.mountPath.replace(/\/?$/, '/')))
    .sort((a, b) => b.mountPath.length - a.mountPath.length)[0];
  return mount ? path.posix.join(mount.hostPath, path.posix.relative(mount.mountPath, containerPath)) : undefined;
}

/** Host paths to try for a path the component was given: the live process's root, then the manifest's mounts. */
export function hostPathsOf(found: Found, containerPath: string): string[] {
  const paths: string[] = [];
  if (found.pid !== undefined) paths.push(`/proc/${found.pid}/root${containerPath}`);
  const mapped = found.manifest ? throughMounts(found.manifest, containerPath) : undefined;
  if (mapped) paths.push(mapped);
  // kubelite runs in the host's mount namespace (a classic snap): its paths are host paths.
  if ((!found.manifest && found.pid === undefined) || found.microk8s) paths.push(containerPath);
  return paths;
}

function setLimit(facts: FactSet, key: string, flags: FlagMap, flag: string, fallback: number, defaultWhy: string): void {
  const value = numericFlag(flags, flag);
  if (!value) facts.set(key, fallback, 'default', defaultWhy);
  else if ('invalid' in value) facts.unknown(key, `--${flag}=${value.invalid} (${value.origin}) is not a number; the component would refuse to start`);
  else if (value.value === 0 && flag.startsWith('kube-api')) facts.set(key, flag.endsWith('qps') ? 5 : 10, `flag:--${flag}`, `0 in ${value.origin}, which client-go replaces with its default ${flag.endsWith('qps') ? 5 : 10}`);
  else facts.set(key, value.value, `flag:--${flag}`, `set in ${value.origin}`);
}

async function schedulerFromConfig(host: HostRoot, facts: FactSet, found: Found, configPath: string, flags: FlagMap): Promise<string> {
  const candidates = hostPathsOf(found, configPath);
  const ignored = ['kube-api-qps', 'kube-api-burst'].filter((f) => flags.has(f)).map((f) => `--${f}`);
  const note = ignored.length > 0 ? `; ${ignored.join(' and ')} ignored because --config is given` : '';
  if (candidates.length === 0) {
    const reason = `kube-scheduler --config ${configPath} is not under any hostPath volume of ${found.manifest?.path}; cannot read it`;
    for (const key of ['scheduler.kubeAPIQPS', 'scheduler.kubeAPIBurst']) facts.unknown(key, reason);
    return found.editIn;
  }
  let file = candidates[0] as string;
  let text = await host.readText(file);
  for (const next of candidates.slice(1)) {
    if (text.ok) break;
    const retry = await host.readText(next);
    if (retry.ok) [file, text] = [next, retry];
  }
  let connection: Record<string, unknown> = {};
  try {
    if (!text.ok) throw new Error(text.reason);
    const doc = parseYaml(text.text, { logLevel: 'error' }) as { clientConnection?: Record<string, unknown> } | null;
    connection = doc?.clientConnection ?? {};
  } catch (error) {
    const reason = `kube-scheduler --config ${configPath} (host ${file}) cannot be used: ${(error as Error).message.split('\n')[0]}; fix the file or the mount`;
    for (const key of ['scheduler.kubeAPIQPS', 'scheduler.kubeAPIBurst']) facts.unknown(key, reason);
    return file;
  }
  for (const [field, key, fallback] of [['qps', 'scheduler.kubeAPIQPS', 50], ['burst', 'scheduler.kubeAPIBurst', 100]] as const) {
    const raw = connection[field];
    if (typeof raw === 'number' && raw !== 0) facts.set(key, raw, file, `clientConnection.${field} in --config ${configPath}${note}`);
    else facts.set(key, fallback, 'default', `clientConnection.${field} not set in ${file}: the scheduler's default${note}`);
  }
  return `${file} (clientConnection.qps/burst)`;
}

function fixText(component: string, editIn: string, current: { qps?: number; burst?: number }, restart: string): string {
  const qps = Math.max(150, 2 * (current.qps ?? 0));
  const burst = Math.max(200, 2 * (current.burst ?? 0));
  if (editIn.includes('clientConnection')) return `In ${editIn.replace(/ \(.*\)$/, '')} set clientConnection.qps: ${qps} and clientConnection.burst: ${burst}; ${restart}.`;
  if (editIn.includes('(ExecStart ')) return `In ${editIn.replace(/ \(.*\)$/, '')} change ExecStart's --${component}-arg=kube-api-qps and --${component}-arg=kube-api-burst to kube-api-qps=${qps} and kube-api-burst=${burst} (or move them to the config.yaml as ${component}-arg entries); systemctl daemon-reload, ${restart}.`;
  if (editIn.includes('-arg)')) return `In ${editIn.replace(/ \(.*\)$/, '')} set ${component}-arg entries "kube-api-qps=${qps}" and "kube-api-burst=${burst}"; ${restart}.`;
  return `In ${editIn} set --kube-api-qps=${qps} and --kube-api-burst=${burst} on the ${component} command; ${restart}.`;
}

function restartHint(found: Found, editIn: string): string {
  if (found.microk8s) return `then snap restart microk8s.daemon-kubelite (kubelite runs every component: the node's pods keep running)`;
  if (found.rancher) return `then systemctl restart ${found.rancher.distro === 'k3s' ? 'k3s' : 'rke2-server'}`;
  if (found.manifest && editIn.includes('clientConnection')) return `the scheduler reads it only at start: move ${found.manifest.path} out of its directory and back to restart the static pod`;
  if (found.manifest) return 'the kubelet restarts the static pod when the manifest changes';
  return 'then restart the component';
}

/** `<prefix>.present`: inferred when only a process's name vouches for it; the processes not used, with why. */
function setPresent(facts: FactSet, prefix: string, component: Component, { found, refused }: { found?: Found; refused: string[] }): void {
  const ignored = refused.length > 0 ? `not used: ${refused.join('; ')}` : '';
  if (!found) {
    facts.set(`${prefix}.present`, false, MANIFEST_DIRS.join(', '), [`no ${component} process, static pod manifest, k3s/rke2 server or MicroK8s on this node`, ignored].filter(Boolean).join('; '));
    return;
  }
  const detail = [found.trust?.why, ignored].filter(Boolean).join('; ');
  facts.set(`${prefix}.present`, true, found.trust?.level === 'inferred' ? 'inferred' : found.editIn, detail || undefined);
}

async function collectClient(host: HostRoot, facts: FactSet, prefix: string, component: Component, lookup: { found?: Found; refused: string[] }, defaults: [number, number]): Promise<void> {
  setPresent(facts, prefix, component, lookup);
  const { found } = lookup;
  if (!found) return;
  const blocker = found.problem ?? (found.pid === undefined ? found.manifest?.error : undefined);
  if (blocker) {
    for (const key of ['kubeAPIQPS', 'kubeAPIBurst', 'qpsSetIn', 'qpsFix']) facts.unknown(`${prefix}.${key}`, blocker);
    return;
  }
  const flags = parseFlags(found.args, BOOLEAN_FLAGS);
  const config = component === 'kube-scheduler' ? flags.get('config') : undefined;
  let editIn = found.editIn;
  if (config && config.value !== '') {
    editIn = await schedulerFromConfig(host, facts, found, config.value, flags);
  } else {
    const why = `not set on the ${component} command line (${found.editIn}); the ${component} default`;
    setLimit(facts, `${prefix}.kubeAPIQPS`, flags, 'kube-api-qps', defaults[0], why);
    setLimit(facts, `${prefix}.kubeAPIBurst`, flags, 'kube-api-burst', defaults[1], why);
  }
  const current = { qps: facts.value(`${prefix}.kubeAPIQPS`) as number | undefined, burst: facts.value(`${prefix}.kubeAPIBurst`) as number | undefined };
  const file = fileOf(editIn);
  const pattern = editIn.includes('clientConnection') ? /^\s*qps\s*:/
    : editIn.includes('(ExecStart ') ? new RegExp(`${component}-arg[= ]+['"]?kube-api-qps`)
      : flags.has('kube-api-qps') ? /kube-api-qps/ : new RegExp(`^\\s*-\\s*${component}\\s*$`);
  const line = file ? await lineIn(host, file, pattern) : undefined;
  // Without the flag, the line found is the command's first entry: the flags go after it.
  const label = editIn.includes('clientConnection') || flags.has('kube-api-qps') ? 'line' : 'after line';
  const fix = fixText(component, editIn, current, restartHint(found, editIn));
  facts.set(`${prefix}.qpsSetIn`, file ? withLine(editIn, file, line, label) : editIn, found.editIn);
  facts.set(`${prefix}.qpsFix`, file ? withLine(fix, file, line, label) : fix, 'inferred');
}

async function collectApiserver(facts: FactSet, lookup: { found?: Found; refused: string[] }): Promise<void> {
  setPresent(facts, 'apiserver', 'kube-apiserver', lookup);
  const { found } = lookup;
  if (!found) return;
  const blocker = found.problem ?? (found.pid === undefined ? found.manifest?.error : undefined);
  if (blocker) {
    for (const key of ['maxRequestsInflight', 'maxMutatingRequestsInflight', 'priorityAndFairness']) facts.unknown(`apiserver.${key}`, blocker);
    return;
  }
  const flags = parseFlags(found.args, BOOLEAN_FLAGS);
  const why = `not set on the kube-apiserver command line (${found.editIn}); the default`;
  setLimit(facts, 'apiserver.maxRequestsInflight', flags, 'max-requests-inflight', 400, why);
  setLimit(facts, 'apiserver.maxMutatingRequestsInflight', flags, 'max-mutating-requests-inflight', 200, why);
  const apf = flags.get('enable-priority-and-fairness');
  facts.set('apiserver.priorityAndFairness', apf ? apf.value !== 'false' : true, apf ? 'flag:--enable-priority-and-fairness' : 'default', apf?.origin);
}

const controlPlaneLimitsCollector: Collector = {
  name: 'control-plane-limits',
  provides: [
    'scheduler.present', 'scheduler.kubeAPIQPS', 'scheduler.kubeAPIBurst', 'scheduler.qpsSetIn', 'scheduler.qpsFix',
    'controllerManager.present', 'controllerManager.kubeAPIQPS', 'controllerManager.kubeAPIBurst', 'controllerManager.qpsSetIn', 'controllerManager.qpsFix',
    'apiserver.present', 'apiserver.maxRequestsInflight', 'apiserver.maxMutatingRequestsInflight', 'apiserver.priorityAndFairness',
  ],
  async collect({ host, facts }) {
    const processes = await listProcesses(host);
    const rancher = await detectRancher(host);
    const find = (c: Component): Promise<{ found?: Found; refused: string[] }> => findComponent(host, c, processes, rancher);
    await collectClient(host, facts, 'scheduler', 'kube-scheduler', await find('kube-scheduler'), [50, 100]);
    await collectClient(host, facts, 'controllerManager', 'kube-controller-manager', await find('kube-controller-manager'), [20, 30]);
    await collectApiserver(facts, await find('kube-apiserver'));
  },
};

export default controlPlaneLimitsCollector;
