// When the agent's scan runs the etcd fsync probe (22 MiB of writes on etcd's disk). Default: never
// on workers, every 6 h on control-plane nodes. Between probes the last result is replayed, so the
// etcd-fsync-latency finding does not flip to unknown (and rewrite the annotations) every interval.
// The first scan has no previous report to read the role from: it takes the role this very scan
// finds (node-role runs before etcd-fsync), so the first publish already says what every later one says.
import { COLLECTORS, collectorsWithProbe } from '../collectors/index.ts';
import type { Collector } from '../collectors/collector.ts';
import { runFsyncProbe, type FsyncProbeOptions, type FsyncProbeResult } from '../probe/fsync.ts';
import type { Report } from '../report/types.ts';

export const CONTROL_PLANE_PROBE_INTERVAL_MS = 6 * 3_600_000;

/** 'auto' = decided from the node's role in the previous report; 0 = off. */
export type ProbeInterval = number | 'auto';

export type ProbeRunner = (options: FsyncProbeOptions) => Promise<FsyncProbeResult>;

export function effectiveProbeInterval(setting: ProbeInterval, previous: Report | undefined): number {
  if (setting !== 'auto') return setting;
  return previous?.facts['node.role']?.value === 'control-plane' ? CONTROL_PLANE_PROBE_INTERVAL_MS : 0;
}

export class ProbeSchedule {
  private readonly setting: ProbeInterval;
  private readonly runner: ProbeRunner;
  private readonly now: () => number;
  private last: { at: number; result: FsyncProbeResult } | undefined;

  constructor(setting: ProbeInterval, runner: ProbeRunner = runFsyncProbe, now: () => number = () => performance.now()) {
    this.setting = setting;
    this.runner = runner;
    this.now = now;
  }

  /** The collectors for the next scan, or undefined for the default set (probe off, nothing to replay). */
  collectorsFor(previous: Report | undefined): Collector[] | undefined {
    if (this.setting === 'auto' && previous === undefined) return this.decidedInScan();
    const interval = effectiveProbeInterval(this.setting, previous);
    const last = this.last;
    if (interval > 0 && (last === undefined || this.now() - last.at >= interval)) {
      return collectorsWithProbe({ probe: (options) => this.measure(options) });
    }
    if (interval > 0 && last !== undefined) return collectorsWithProbe({ probe: async () => last.result });
    return undefined;
  }

  /** 'auto' before any report: probe when this scan's node-role collector says control-plane. */
  private decidedInScan(): Collector[] {
    const probing = collectorsWithProbe({ probe: (options) => this.measure(options) }).find((c) => c.name === 'etcd-fsync') as Collector;
    return COLLECTORS.map((collector) => (collector.name !== 'etcd-fsync' ? collector : {
      ...collector,
      collect: (ctx) => (ctx.facts.value('node.role') === 'control-plane' ? probing : collector).collect(ctx),
    }));
  }

  private async measure(options: FsyncProbeOptions): Promise<FsyncProbeResult> {
    const result = await this.runner(options);
    this.last = { at: this.now(), result };
    return result;
  }
}
