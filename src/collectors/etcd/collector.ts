// etcd on this node: where its data lives (and which source said so), the disk under that directory,
// and etcd's own disk latency histograms when its metrics are served over plain HTTP.
import type { Collector, CollectorContext } from '../collector.ts';
import type { FactSet } from '../../facts/fact-set.ts';
import { blockDeviceFor, majorMinorOfDevNode, realHostPath, type BlockDevice } from '../../host/block-device.ts';
import { mountFor, readMountTable, type MountEntry } from '../../host/mountinfo.ts';
import { discoverEtcd, type EtcdDiscovery } from './discovery.ts';
import { fetchEtcdMetrics, type Quantile } from './metrics.ts';

export const DEVICE_FACTS = [
  'etcd.device.majorMinor', 'etcd.device.name', 'etcd.device.kind', 'etcd.device.disks', 'etcd.device.rotational', 'etcd.device.rotationalIsMedium',
  'etcd.device.model', 'etcd.device.transport', 'etcd.device.scheduler', 'etcd.device.fsType',
  'etcd.device.mountPoint', 'etcd.device.mountOptions',
];
export const METRIC_FACTS = ['etcd.walFsync.p99Ms', 'etcd.backendCommit.p99Ms', 'etcd.heartbeatSendFailures', 'etcd.leaderChanges'];
const DISCOVERY_FACTS = ['etcd.present', 'etcd.setup', 'etcd.pid', 'etcd.dataDir', 'etcd.metricsUrl'];
/** Transports whose rotational flag says nothing about the storage behind them. */
export const VIRTUAL_TRANSPORTS = ['virtio', 'xen', 'hyperv', 'iscsi', 'fc', 'scsi', 'virtual'];

function allUnknown(facts: FactSet, keys: string[], reason: string): void {
  for (const key of keys) facts.unknown(key, reason);
}

function recordDiscovery(facts: FactSet, found: EtcdDiscovery, otherPids: number[], ignored: string[]): void {
  const others = otherPids.length ? `; other etcd processes: ${otherPids.join(', ')}` : '';
  const notUsed = ignored.length ? `; not used: ${ignored.join('; ')}` : '';
  facts.set('etcd.present', true, found.source, `${found.detail}${others}${notUsed}`);
  facts.set('etcd.setup', found.setup, found.source);
  const noPid = ignored.some((why) => why.startsWith('PID ')) ? 'no verified etcd process; read from its configuration' : 'no running etcd process found; read from its configuration';
  facts.set('etcd.pid', found.pid, found.pid === null ? 'inferred' : `/proc/${found.pid}/cmdline`, found.pid === null ? noPid : undefined);
  if (found.dataDir === null) facts.unknown('etcd.dataDir', found.dataDirUnknown ?? 'nothing says where etcd keeps its data', found.source);
  else facts.set('etcd.dataDir', found.dataDir, found.source, found.detail);
  facts.set('etcd.metricsUrl', found.metricsUrl, found.metricsSource, found.metricsUrl === null ? 'no plain-HTTP metrics or client URL configured' : undefined);
}

async function mountOfDataDir(ctx: CollectorContext, found: EtcdDiscovery & { dataDir: string }): Promise<{ mount: MountEntry; table: string } | { reason: string }> {
  // etcd's own mount table sees its data dir the way etcd does, container or not.
  const candidates: { table: string; dir: string }[] = [];
  if (found.pid !== null && found.processDataDir) candidates.push({ table: `/proc/${found.pid}/mountinfo`, dir: found.processDataDir });
  const resolved = (await ctx.host.exists(found.dataDir)) ? await realHostPath(ctx.host, found.dataDir) : undefined;
  candidates.push({ table: '/proc/1/mountinfo', dir: resolved ?? found.dataDir });
  const problems: string[] = [];
  for (const { table, dir } of candidates) {
    const read = await readMountTable(ctx.host, table);
    if (!read.ok) {
      problems.push(read.reason);
      continue;
    }
    const mount = mountFor(read.entries, dir);
    if (mount) return { mount, table: `${table} (${dir} on ${mount.mountPoint})` };
    problems.push(`${table} has no mount holding ${dir}`);
  }
  return { reason: problems.join('; ') };
}

function rotationalDetail(device: BlockDevice): string {
  const perDisk = device.disks.map((d) => `${d.name}${d.paths ? ` (multipath over ${d.paths.join(', ')})` : ''}: rotational=${d.rotational === null ? '?' : d.rotational ? 1 : 0}, transport ${d.transport ?? '?'}`).join('; ');
  const virtual = device.disks.some((d) => d.rotational && VIRTUAL_TRANSPORTS.includes(d.transport ?? ''));
  const caveat = virtual ? '. Virtual and network disks (virtio, Xen, iSCSI, …) often report rotational=1 whatever backs them: the measured fsync latency decides' : '';
  return `${perDisk}${caveat}`;
}

/**
 * Whether rotational=1 describes the medium: a virtual or network disk (virtio, Xen, iSCSI, …)
 * reports it whatever backs it, so only a measured latency can judge it.
 */
function recordRotationalMeaning(facts: FactSet, device: BlockDevice, sysfs: string): void {
  const spinning = device.disks.filter((d) => d.rotational === true);
  if (spinning.length === 0) return facts.set('etcd.device.rotationalIsMedium', null, sysfs, 'no disk under etcd reports rotational=1');
  const unknownTransport = spinning.filter((d) => d.transport === null);
  const virtual = spinning.filter((d) => VIRTUAL_TRANSPORTS.includes(d.transport ?? ''));
  if (virtual.length > 0) return facts.set('etcd.device.rotationalIsMedium', false, sysfs, `${virtual.map((d) => `${d.name} (${d.transport})`).join(', ')}: a virtual or network transport, whose rotational flag says nothing about the storage behind it`);
  if (unknownTransport.length > 0) return facts.unknown('etcd.device.rotationalIsMedium', `the transport of ${unknownTransport.map((d) => d.name).join(', ')} cannot be told from sysfs`, sysfs);
  facts.set('etcd.device.rotationalIsMedium', true, sysfs, `${spinning.map((d) => `${d.name} (${d.transport})`).join(', ')}: a local disk reports its own medium`);
}

function joinDistinct(values: (string | null)[]): string | null {
  const distinct = [...new Set(values.filter((v): v is string => v !== null))];
  return distinct.length ? distinct.join(', ') : null;
}

async function recordDevice(ctx: CollectorContext, found: EtcdDiscovery): Promise<void> {
  const { facts, host } = ctx;
  if (found.dataDir === null) return allUnknown(facts, DEVICE_FACTS, `etcd's data dir is unknown: ${found.dataDirUnknown ?? 'nothing says where it is'}`);
  const located = await mountOfDataDir(ctx, { ...found, dataDir: found.dataDir });
  if ('reason' in located) return allUnknown(facts, DEVICE_FACTS, `the mount holding ${found.dataDir} cannot be found: ${located.reason}`);
  const { mount, table } = located;
  facts.set('etcd.device.fsType', mount.fsType, table);
  facts.set('etcd.device.mountPoint', mount.mountPoint, table);
  const options = [...new Set([...mount.mountOptions.split(','), ...mount.superOptions.split(',')].filter(Boolean))];
  facts.set('etcd.device.mountOptions', options, table, `mount: ${mount.mountOptions}; filesystem: ${mount.superOptions}`);
  let majorMinor = mount.majorMinor;
  if (majorMinor.startsWith('0:')) majorMinor = (await majorMinorOfDevNode(host, mount.source)) ?? majorMinor;
  facts.set('etcd.device.majorMinor', majorMinor, table, majorMinor !== mount.majorMinor ? `from mount source ${mount.source}` : undefined);
  const result = await blockDeviceFor(host, majorMinor);
  if (!result.ok) {
    const reason = `${mount.mountPoint} (${mount.fsType} from ${mount.source}): ${result.reason}`;
    return allUnknown(facts, DEVICE_FACTS.filter((k) => !facts.has(k)), reason);
  }
  const { device } = result;
  const sysfs = `/sys/dev/block/${majorMinor}`;
  facts.set('etcd.device.name', device.name, sysfs, `${device.chain.join(' → ')}${device.dmName ? ` (${device.dmName})` : ''}`);
  facts.set('etcd.device.kind', device.kind, sysfs);
  facts.set('etcd.device.disks', device.disks.map((d) => d.name), sysfs);
  const rotational = device.disks.map((d) => d.rotational);
  if (rotational.includes(true)) facts.set('etcd.device.rotational', true, sysfs, rotationalDetail(device));
  else if (rotational.length && rotational.every((r) => r === false)) facts.set('etcd.device.rotational', false, sysfs, rotationalDetail(device));
  else facts.unknown('etcd.device.rotational', `no queue/rotational readable for ${device.disks.map((d) => d.sysPath).join(', ') || device.name}`, sysfs);
  recordRotationalMeaning(facts, device, sysfs);
  facts.set('etcd.device.model', joinDistinct(device.disks.map((d) => d.model)), sysfs);
  facts.set('etcd.device.transport', joinDistinct(device.disks.map((d) => d.transport)), sysfs);
  facts.set('etcd.device.scheduler', joinDistinct(device.disks.map((d) => d.scheduler)), sysfs);
}

const ms = (seconds: number): number => Math.round(seconds * 1e6) / 1e3;
function quantileDetail(q: Quantile): string {
  const upper = q.upperBound === Infinity ? '+Inf' : `${ms(q.upperBound)} ms`;
  return `p99 interpolated in the bucket (${ms(q.lowerBound)} ms, ${upper}] over ${q.observations} observations`;
}

async function recordMetrics(ctx: CollectorContext, found: EtcdDiscovery): Promise<void> {
  const { facts, host } = ctx;
  if (found.metricsUrl === null) return allUnknown(facts, METRIC_FACTS, 'etcd serves no plain-HTTP metrics URL (kubeadm: --listen-metrics-urls=http://127.0.0.1:2381)');
  if (!host.isRealRoot) return allUnknown(facts, METRIC_FACTS, `not fetched: --host-root ${host.root} is not this machine, so ${found.metricsUrl} is not its etcd`);
  const fetched = await fetchEtcdMetrics(found.metricsUrl);
  // Found from its configuration only (a unit, etcd.env): an unreachable URL most likely means that etcd is stopped.
  const stopped = found.pid === null ? '; no running etcd process found: is its service stopped?' : '';
  if (!fetched.ok) return allUnknown(facts, METRIC_FACTS, `${fetched.reason}${stopped}`);
  const source = `api:${fetched.url}`;
  const latency = fetched.latency;
  const setQuantile = (key: string, name: string, q: Quantile | undefined): void => {
    if (q) facts.set(key, ms(q.value), source, quantileDetail(q));
    else facts.unknown(key, `${fetched.url} has no observations of ${name} yet`, source);
  };
  setQuantile('etcd.walFsync.p99Ms', 'etcd_disk_wal_fsync_duration_seconds', latency.walFsyncP99);
  setQuantile('etcd.backendCommit.p99Ms', 'etcd_disk_backend_commit_duration_seconds', latency.backendCommitP99);
  const setCounter = (key: string, name: string, value: number | undefined): void => {
    if (value === undefined) facts.unknown(key, `${fetched.url} does not export ${name}`, source);
    else facts.set(key, value, source, `${name} since etcd started`);
  };
  setCounter('etcd.heartbeatSendFailures', 'etcd_server_heartbeat_send_failures_total', latency.heartbeatFailures);
  setCounter('etcd.leaderChanges', 'etcd_server_leader_changes_seen_total', latency.leaderChanges);
}

const etcdCollector: Collector = {
  name: 'etcd',
  provides: [...DISCOVERY_FACTS, ...DEVICE_FACTS, ...METRIC_FACTS],
  async collect(ctx) {
    const { facts } = ctx;
    const discovery = await discoverEtcd(ctx.host);
    const { found } = discovery;
    if (!found) {
      const looked = `looked at ${discovery.looked.join(', ')}`;
      if (discovery.ignored.length > 0) {
        return allUnknown(facts, this.provides, `something looks like etcd but nothing trusted says how it runs: ${discovery.ignored.join('; ')} (${looked})`);
      }
      if (!discovery.procReadable) {
        return allUnknown(facts, this.provides, `no etcd configuration found and /proc is not readable, so a running etcd cannot be ruled out (${looked})`);
      }
      facts.set('etcd.present', false, 'inferred', `no etcd process and no etcd configuration (${looked})`);
      const absent = 'etcd does not run on this node';
      for (const key of this.provides.filter((k) => k !== 'etcd.present')) facts.set(key, null, 'inferred', absent);
      return;
    }
    recordDiscovery(facts, found, discovery.otherPids, discovery.ignored);
    await recordDevice(ctx, found);
    await recordMetrics(ctx, found);
  },
};

export default etcdCollector;
