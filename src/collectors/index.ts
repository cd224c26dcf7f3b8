// The collectors. A collector that reads another's facts says so (`reads`: tuned's recommendation
// needs cpu.virtualized; etcd's priority and probe need etcd's discovery) and the runner
// (run.ts, orderCollectors) runs it after them; otherwise they run in this order.
import type { Collector } from './collector.ts';
import kernel from './kernel.ts';
import cpu from './cpu.ts';
import tuned from './tuned/collector.ts';
import nodeRole from './node-role.ts';
import inventory from './inventory.ts';
import etcd from './etcd/collector.ts';
import etcdPriority from './etcd/priority.ts';
import { createEtcdFsyncCollector, type EtcdFsyncSettings } from './etcd/fsync.ts';
import kubelet from './kubelet/collector.ts';
import cgroup from './cgroup.ts';
import controlPlaneLimits from './control-plane-limits.ts';
import containerd from './containerd/collector.ts';
import throttling from './throttling.ts';
import volumesHost from './volumes-host.ts';
import workloadApi from './workload-api.ts';
import kubeletMetrics from './kubelet-metrics.ts';

export const COLLECTORS: readonly Collector[] = [
  kernel, cpu, tuned, nodeRole, inventory, etcd, etcdPriority, createEtcdFsyncCollector({ run: false }), kubelet, cgroup, controlPlaneLimits, containerd, throttling,
  volumesHost, workloadApi, kubeletMetrics,
];

/** The collectors with the fsync probe switched on (`scan --probe`). */
export function collectorsWithProbe(settings: Omit<EtcdFsyncSettings, 'run'>): Collector[] {
  return COLLECTORS.map((collector) => (collector.name === 'etcd-fsync' ? createEtcdFsyncCollector({ ...settings, run: true }) : collector));
}
