// Two of seed 001's etcd fixes: etcd's I/O priority (ionice -c2 -n0) and Events kept in their own
// etcd (kube-apiserver --etcd-servers-overrides=/events#…), so that event churn stays off the main WAL.
import path from 'node:path';
import type { Collector, CollectorContext } from '../collector.ts';
import { runHostCommand } from '../../host/exec.ts';
import { listProcesses } from '../../host/processes.ts';
import { componentArgs, detectRancher, rancherSource } from '../rancher.ts';
import { K3S_CONFIG, parseEtcdManifest, parseFlags } from './discovery.ts';

const APISERVER_MANIFESTS = ['/etc/kubernetes/manifests/kube-apiserver.yaml', '/var/lib/rancher/rke2/agent/pod-manifests/kube-apiserver.yaml'];

export interface IoPriority {
  class: 'none' | 'realtime' | 'best-effort' | 'idle';
  level: number | null;
}

/** `ionice -p PID` output: "best-effort: prio 0", "none: prio 4", "realtime: prio 2", "idle". */
export function parseIonice(text: string): IoPriority | undefined {
  const match = /^(none|realtime|best-effort|idle)(?::\s*prio\s+(\d+))?\s*$/m.exec(text.trim());
  if (!match) return undefined;
  return { class: match[1] as IoPriority['class'], level: match[2] === undefined ? null : Number(match[2]) };
}

/** The CPU nice value from /proc/<pid>/stat (field 19, counted after the parenthesised command). */
export function niceFromStat(text: string): number | undefined {
  const after = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const nice = Number(after[16]);
  return Number.isInteger(nice) ? nice : undefined;
}

async function recordIoPriority(ctx: CollectorContext): Promise<void> {
  const { facts, host } = ctx;
  const pid = facts.value('etcd.pid');
  if (typeof pid !== 'number') {
    const reason = facts.value('etcd.present') === false ? null : 'no running etcd process found, so its I/O priority cannot be read';
    for (const key of ['etcd.ioPriority.class', 'etcd.ioPriority.level']) {
      if (reason === null) facts.set(key, null, 'inferred', 'etcd does not run on this node');
      else facts.unknown(key, reason);
    }
    return;
  }
  const result = await runHostCommand(host, 'ionice', ['-p', String(pid)]);
  const priority = result.ok ? parseIonice(result.stdout) : undefined;
  if (!priority) {
    const reason = result.ok ? `ionice printed "${result.stdout.trim()}", not a priority` : result.reason;
    for (const key of ['etcd.ioPriority.class', 'etcd.ioPriority.level']) facts.unknown(key, reason, result.source);
    return;
  }
  let { level } = priority;
  let detail: string | undefined;
  if (priority.class === 'none') {
    // No class set: the kernel derives best-effort (nice + 20) / 5 from the CPU nice value.
    const stat = await host.readText(`/proc/${pid}/stat`);
    const nice = stat.ok ? niceFromStat(stat.text) : undefined;
    level = nice === undefined ? null : Math.floor((nice + 20) / 5);
    detail = `no I/O class set: best-effort level ${level ?? '?'} derived from CPU nice ${nice ?? '?'}`;
  }
  facts.set('etcd.ioPriority.class', priority.class, result.source, detail);
  facts.set('etcd.ioPriority.level', level, result.source, detail);
}

/** True when --etcd-servers-overrides sends core-group events ("/events#…") to other servers. */
export function splitsEvents(overrides: string | undefined): boolean {
  return (overrides ?? '').split(',').some((entry) => /^\/?events#\S+/.test(entry.trim()));
}

async function apiserverFlags(ctx: CollectorContext): Promise<{ flags: Map<string, string>; source: string } | undefined> {
  const { host } = ctx;
  const live = (await listProcesses(host)).find((p) => path.posix.basename(p.argv[0] ?? '') === 'kube-apiserver');
  if (live) return { flags: parseFlags(live.argv.slice(1)), source: `/proc/${live.pid}/cmdline` };
  for (const manifest of APISERVER_MANIFESTS) {
    const read = await host.readText(manifest);
    const pod = read.ok ? parseEtcdManifest(read.text) : undefined;
    if (pod) return { flags: pod.flags, source: manifest };
  }
  // k3s/rke2 servers: their kube-apiserver flags from config.yaml, config.yaml.d and the unit's ExecStart, as the other collectors read them.
  const rancher = await detectRancher(host);
  if (rancher === undefined || rancher.role === 'agent') return undefined;
  return { flags: parseFlags(componentArgs(rancher, 'kube-apiserver').map((a) => a.text)), source: `${rancherSource(rancher)} (kube-apiserver-arg)` };
}

async function recordEventsSplit(ctx: CollectorContext): Promise<void> {
  const { facts } = ctx;
  const found = await apiserverFlags(ctx);
  if (!found) {
    return facts.unknown('etcd.eventsSplit', `no kube-apiserver on this node (no process, no ${APISERVER_MANIFESTS.join(' or ')}, no ${K3S_CONFIG}); check the API server's flags where it runs`);
  }
  const overrides = found.flags.get('etcd-servers-overrides');
  const detail = overrides ? `--etcd-servers-overrides=${overrides}` : 'no --etcd-servers-overrides: events share the main etcd';
  facts.set('etcd.eventsSplit', splitsEvents(overrides), found.source, detail);
}

const etcdPriorityCollector: Collector = {
  name: 'etcd-priority',
  provides: ['etcd.ioPriority.class', 'etcd.ioPriority.level', 'etcd.eventsSplit'],
  reads: ['etcd.present', 'etcd.pid'],
  async collect(ctx) {
    await recordIoPriority(ctx);
    await recordEventsSplit(ctx);
  },
};

export default etcdPriorityCollector;
