// The host's side of volume attach mode, readable without a cluster: CSI node plugins registered with
// the kubelet (socket names in <kubelet root>/plugins_registry), iscsid/multipathd running, and CSI,
// NFS and in-tree block-plugin mounts under the kubelet root in the host's mount table. Only names are
// read: never a file under <kubelet root>/pods (it holds pod secrets).
import path from 'node:path';
import type { Collector } from './collector.ts';
import type { FactSet } from '../facts/fact-set.ts';
import type { HostRoot } from '../host/host-root.ts';
import { readMountTable, type MountEntry } from '../host/mountinfo.ts';
import { findProcesses, listProcesses, parseFlags } from '../host/processes.ts';
import { findKubeletCommand } from './kubelet/command.ts';
import { KUBELET_BOOLEAN_FLAGS } from './kubelet/config.ts';

/** The only host path read under the kubelet root (names of registration sockets); the root itself only prefixes mount points. */
const DEFAULT_PLUGINS_REGISTRY = '/var/lib/kubelet/plugins_registry';
export const DEFAULT_KUBELET_ROOT = path.posix.dirname(DEFAULT_PLUGINS_REGISTRY);
const ATTACH_DAEMONS = ['iscsid', 'multipathd'];
const MOUNT_TABLE = '/proc/1/mountinfo';
/** Escaped in-tree plugin directory names (pods/<uid>/volumes/kubernetes.io~X) and plugin dirs (plugins/kubernetes.io/X). */
/** In-tree attach plugins (cloud disks) count as their own kinds: each needs an attach before its mount. */
const PLUGIN_KINDS = ['csi', 'iscsi', 'fc', 'rbd', 'nfs', 'aws-ebs', 'gce-pd', 'azure-disk', 'cinder', 'vsphere-volume'] as const;
type MountKind = (typeof PLUGIN_KINDS)[number];

async function kubeletRoot(host: HostRoot): Promise<{ dir: string; source: string }> {
  const command = await findKubeletCommand(host);
  const flag = command ? parseFlags(command.args, KUBELET_BOOLEAN_FLAGS).get('root-dir') : undefined;
  return flag ? { dir: flag.value.replace(/\/+$/, '') || '/', source: flag.origin } : { dir: DEFAULT_KUBELET_ROOT, source: 'default' };
}

function mountKind(entry: MountEntry, root: string): MountKind | undefined {
  if (!entry.mountPoint.startsWith(`${root}/`)) return undefined;
  if (entry.fsType === 'nfs' || entry.fsType === 'nfs4') return 'nfs';
  const rest = entry.mountPoint.slice(root.length);
  return PLUGIN_KINDS.find((kind) => rest.includes(`/kubernetes.io~${kind}/`) || rest.includes(`/plugins/kubernetes.io/${kind}/`));
}

/** <root>/plugins/kubernetes.io/csi/<driver>/<sha256>/globalmount → driver (the pv/<name> layout names none). */
function globalMountDriver(entry: MountEntry, root: string): string | undefined {
  const m = /^\/plugins\/kubernetes\.io\/csi\/([^/]+)\/[0-9a-f]{64}\/globalmount$/.exec(entry.mountPoint.slice(root.length));
  return m && m[1] !== 'pv' ? m[1] : undefined;
}

async function registeredPlugins(host: HostRoot, facts: FactSet, rootDir: string, agent: boolean): Promise<void> {
  const registry = rootDir === DEFAULT_KUBELET_ROOT ? DEFAULT_PLUGINS_REGISTRY : `${rootDir}/plugins_registry`;
  const listing = await host.listDir(registry);
  if (listing.ok) {
    const plugins = listing.entries.filter((e) => e.endsWith('-reg.sock')).map((e) => e.slice(0, -'-reg.sock'.length)).sort();
    facts.set('volumes.registeredPlugins', plugins, registry);
  } else if (listing.code === 'ENOENT' && agent) {
    // The DaemonSet does not mount it (its sockets stay connectable even read-only); CSINode lists the same drivers.
    facts.unknown('volumes.registeredPlugins', 'not mounted into the agent; this node\'s CSINode (volumes.nodeDrivers) lists the registered drivers', registry);
  } else if (listing.code === 'ENOENT') facts.set('volumes.registeredPlugins', null, registry, 'no plugins_registry directory: no CSI node plugin registered here');
  else facts.unknown('volumes.registeredPlugins', listing.reason, registry);
}

const volumesHost: Collector = {
  name: 'volumes-host',
  provides: ['volumes.kubeletRootDir', 'volumes.registeredPlugins', 'volumes.attachDaemons', 'volumes.kubeletMounts', 'volumes.mountedCsiDrivers'],
  async collect({ host, facts, cluster }) {
    const root = await kubeletRoot(host);
    facts.set('volumes.kubeletRootDir', root.dir, root.source);
    await registeredPlugins(host, facts, root.dir, cluster !== undefined);

    if (await host.exists('/proc/1')) {
      const running = findProcesses(await listProcesses(host), ATTACH_DAEMONS).map((p) => p.comm || p.argv[0] || '');
      facts.set('volumes.attachDaemons', [...new Set(running)].sort(), '/proc');
    } else facts.unknown('volumes.attachDaemons', 'the host /proc is not visible (a DaemonSet needs hostPID)', '/proc');

    const table = await readMountTable(host, MOUNT_TABLE);
    if (!table.ok) {
      for (const key of ['volumes.kubeletMounts', 'volumes.mountedCsiDrivers']) facts.unknown(key, table.reason, MOUNT_TABLE);
      return;
    }
    const counts = Object.fromEntries(PLUGIN_KINDS.map((kind) => [kind, 0])) as Record<MountKind, number>;
    const drivers = new Set<string>();
    for (const entry of table.entries) {
      const kind = mountKind(entry, root.dir);
      if (kind) counts[kind] += 1;
      const driver = globalMountDriver(entry, root.dir);
      if (driver) drivers.add(driver);
    }
    facts.set('volumes.kubeletMounts', counts, MOUNT_TABLE, `mounts under ${root.dir} by plugin (NFS by file system type)`);
    facts.set('volumes.mountedCsiDrivers', [...drivers].sort(), MOUNT_TABLE, 'CSI staging mounts under plugins/kubernetes.io/csi/<driver>/');
  },
};

export default volumesHost;
