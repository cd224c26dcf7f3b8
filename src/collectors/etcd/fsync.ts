// The fsync probe as a collector: runs only when asked (scan --probe), in etcd's data dir (beside
// member/, never inside it), and checks that the directory sits on the device found under etcd.
import path from 'node:path';
import type { Collector, CollectorContext } from '../collector.ts';
import type { HeldDirectory, HostRoot, ReadFailure } from '../../host/host-root.ts';
import { runFsyncProbe, type FsyncProbeOptions, type FsyncProbeResult } from '../../probe/fsync.ts';

export const FSYNC_FACTS = ['etcd.fsync.p50Ms', 'etcd.fsync.p90Ms', 'etcd.fsync.p99Ms', 'etcd.fsync.p999Ms', 'etcd.fsync.maxMs', 'etcd.fsync.samples'];
const SUMMARY_KEYS = ['p50Ms', 'p90Ms', 'p99Ms', 'p999Ms', 'maxMs', 'samples'] as const;

export interface EtcdFsyncSettings {
  /** false: the probe facts stay unknown with a hint to run `scan --probe`. */
  run: boolean;
  sizeBytes?: number;
  blockSize?: number;
  onProgress?: (done: number, total: number) => void;
  /** Replaceable for tests (fault injection). */
  probe?: (options: FsyncProbeOptions) => Promise<FsyncProbeResult>;
}

/**
 * The DaemonSet (manifests/overlays/control-plane-probe) mounts only this subdirectory of etcd's
 * data dir writable; when it exists the probe writes there: same filesystem, nothing of etcd's exposed.
 */
export const PROBE_SUBDIR = 'node-tuning-advisor-probe';

/** The probe's directory held by descriptor (the subdirectory when it is one): the probe creates its file through that very directory, never by a name a swap could redirect out of the host root. */
async function probeDirIn(host: HostRoot, dataDir: string): Promise<HeldDirectory | ReadFailure> {
  const sub = await host.holdDirectory(path.posix.join(dataDir, PROBE_SUBDIR));
  return sub.ok ? sub : host.holdDirectory(dataDir);
}

function allUnknown(ctx: CollectorContext, reason: string, source = 'unknown'): void {
  for (const key of FSYNC_FACTS) ctx.facts.unknown(key, reason, source);
}

async function probeDataDir(ctx: CollectorContext, settings: EtcdFsyncSettings): Promise<void> {
  const { facts, host } = ctx;
  if (facts.value('etcd.present') === false) {
    for (const key of FSYNC_FACTS) facts.set(key, null, 'inferred', 'etcd does not run on this node');
    return;
  }
  const dataDir = facts.value('etcd.dataDir');
  if (typeof dataDir !== 'string') return allUnknown(ctx, 'etcd\'s data dir is not known, so there is nothing to probe');
  const held = await probeDirIn(host, dataDir);
  if (!held.ok) return allUnknown(ctx, held.reason);
  const expected = facts.value('etcd.device.majorMinor');
  const options: FsyncProbeOptions = { dir: held.name, label: held.hostPath };
  if (typeof expected === 'string') options.expectedDevice = expected;
  if (settings.sizeBytes !== undefined) options.sizeBytes = settings.sizeBytes;
  if (settings.blockSize !== undefined) options.blockSize = settings.blockSize;
  if (settings.onProgress) options.onProgress = settings.onProgress;
  let result: FsyncProbeResult;
  try {
    result = await (settings.probe ?? runFsyncProbe)(options);
  } finally {
    held.close();
  }
  const source = `probe:${dataDir}`;
  if (!result.ok) return allUnknown(ctx, `fsync probe in ${dataDir} failed (${result.code}): ${result.reason}`, source);
  if (result.sameDeviceAsEtcd === false) {
    return allUnknown(ctx, `the probe ran on device ${result.device} but etcd's data sits on ${String(expected)}: not representative`, source);
  }
  const detail = `${result.samples} fdatasync calls after ${result.blockSize}-byte writes (${result.bytesWritten} bytes, preallocated with ${result.preallocation}) in ${Math.round(result.wallMs)} ms on device ${result.device}`;
  for (const [index, key] of SUMMARY_KEYS.entries()) facts.set(FSYNC_FACTS[index] as string, result[key], source, detail);
}

export function createEtcdFsyncCollector(settings: EtcdFsyncSettings): Collector {
  return {
    name: 'etcd-fsync',
    provides: [...FSYNC_FACTS, 'etcd.fsync.probed'],
    reads: ['etcd.present', 'etcd.dataDir', 'etcd.device.majorMinor'],
    async collect(ctx) {
      // Not probing is the operator's choice, not a property of the disk: the rule is then not applicable.
      ctx.facts.set('etcd.fsync.probed', settings.run, 'flag:--probe', settings.run ? undefined : 'run `scan --probe` (or `probe fsync --dir <etcd data dir>`) to time fdatasync on etcd\'s disk');
      if (!settings.run) return allUnknown(ctx, 'not measured: run `scan --probe` (or `probe fsync --dir <etcd data dir>`) to time fdatasync on etcd\'s disk');
      await probeDataDir(ctx, settings);
    },
  };
}
