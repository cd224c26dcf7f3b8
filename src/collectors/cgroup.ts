// The host's cgroup version as the kubelet decides it: opencontainers/cgroups IsCgroup2UnifiedMode()
// is statfs("/sys/fs/cgroup") == CGROUP2_SUPER_MAGIC, so only the filesystem mounted at
// /sys/fs/cgroup counts. cgroup2 there is v2 (unified); tmpfs with v1 hierarchies below it is v1,
// also when a cgroup2 hierarchy sits below it too (hybrid: /sys/fs/cgroup/unified or .../systemd).
// Read from PID 1's mount table, the host's mount namespace where the kubelet runs.
import type { Collector } from './collector.ts';
import { readMountTable, type MountEntry } from '../host/mountinfo.ts';

const MOUNT_TABLE = '/proc/1/mountinfo';
const CGROUP_ROOT = '/sys/fs/cgroup';
/** v1 hierarchies named in the detail; a host has about a dozen. */
const MAX_NAMED = 16;

export type CgroupMode = 'unified' | 'hybrid' | 'legacy';

export interface CgroupLayout {
  version: 1 | 2;
  mode: CgroupMode;
  detail: string;
}

/** The cgroup v1 controllers (cgroups(7)); a named hierarchy shows as name=…. */
const V1_CONTROLLERS = new Set(['cpu', 'cpuacct', 'cpuset', 'memory', 'devices', 'freezer', 'net_cls', 'net_prio', 'blkio', 'perf_event', 'hugetlb', 'pids', 'rdma', 'misc']);

/** The controllers of a `cgroup` mount, from its super options (rw, seclabel, xattr, release_agent=… are not). */
function controllers(entry: MountEntry): string[] {
  return entry.superOptions.split(',').filter((o) => V1_CONTROLLERS.has(o) || o.startsWith('name=')).slice(0, 8).map(shown);
}

/** A mount point or option as shown in a detail: bounded (the table is the host's, not ours). */
function shown(text: string): string {
  return text.length > 64 ? `${text.slice(0, 64)}…` : text;
}

function below(entry: MountEntry): boolean {
  return entry.mountPoint.startsWith(`${CGROUP_ROOT}/`);
}

/** What is mounted at /sys/fs/cgroup (the last mount there covers the others), or why it cannot be told. */
export function cgroupLayout(entries: readonly MountEntry[]): CgroupLayout | string {
  const root = entries.filter((e) => e.mountPoint === CGROUP_ROOT).at(-1);
  if (!root) return `nothing is mounted at ${CGROUP_ROOT} in the host's mount table: the kubelet would find no cgroup hierarchy there`;
  if (root.fsType === 'cgroup2') {
    const v1 = entries.filter((e) => below(e) && e.fsType === 'cgroup').map((e) => shown(e.mountPoint));
    const extra = v1.length > 0 ? `; v1 hierarchies below it (${v1.slice(0, MAX_NAMED).join(', ')}) do not change what the kubelet sees` : '';
    return { version: 2, mode: 'unified', detail: `cgroup2 at ${CGROUP_ROOT} (unified hierarchy)${extra}` };
  }
  if (root.fsType === 'cgroup') return { version: 1, mode: 'legacy', detail: `a cgroup v1 hierarchy (${controllers(root).join(',')}) mounted at ${CGROUP_ROOT} itself` };
  if (root.fsType !== 'tmpfs') return `${CGROUP_ROOT} is a ${root.fsType.slice(0, 40)} mount, neither cgroup2 nor tmpfs with cgroup hierarchies`;
  const v1 = entries.filter((e) => below(e) && e.fsType === 'cgroup');
  const v2 = entries.filter((e) => below(e) && e.fsType === 'cgroup2');
  if (v1.length === 0 && v2.length === 0) return `tmpfs at ${CGROUP_ROOT} with no cgroup hierarchy mounted below it`;
  const named = v1.slice(0, MAX_NAMED).map((e) => controllers(e).join(',')).join('; ');
  const v1Text = v1.length > 0 ? ` with ${v1.length} cgroup v1 hierarch${v1.length === 1 ? 'y' : 'ies'} (${named}${v1.length > MAX_NAMED ? '; …' : ''})` : '';
  if (v2.length > 0) {
    return { version: 1, mode: 'hybrid', detail: `tmpfs at ${CGROUP_ROOT}${v1Text} and cgroup2 at ${shown(v2[0]?.mountPoint ?? '')} (hybrid): the kubelet checks ${CGROUP_ROOT} itself, so cgroup v1` };
  }
  return { version: 1, mode: 'legacy', detail: `tmpfs at ${CGROUP_ROOT}${v1Text}, no cgroup2 (legacy)` };
}

const cgroupCollector: Collector = {
  name: 'cgroup',
  provides: ['cgroup.version', 'cgroup.mode'],
  async collect({ host, facts }) {
    const table = await readMountTable(host, MOUNT_TABLE);
    const layout = table.ok ? cgroupLayout(table.entries) : table.reason;
    if (typeof layout === 'string') {
      for (const key of ['cgroup.version', 'cgroup.mode']) facts.unknown(key, layout, MOUNT_TABLE);
      return;
    }
    facts.set('cgroup.version', layout.version, MOUNT_TABLE, layout.detail);
    facts.set('cgroup.mode', layout.mode, MOUNT_TABLE, layout.detail);
  },
};

export default cgroupCollector;
