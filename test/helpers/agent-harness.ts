// Runs the real agent wiring (the project's Kubernetes client over HTTP) against the fake apiserver.
import type { Report } from '../../src/report/types.ts';
import type { Agent, AgentOptions } from '../../src/agent/agent.ts';
import { TokenBucket } from '../../src/kube/backoff.ts';
import { wireAgent } from '../../src/agent/wire.ts';
import type { AgentMetrics } from '../../src/publish/metrics.ts';
import type { WorkloadSnapshot } from '../../src/workload/snapshot.ts';
import type { WorkloadState } from '../../src/workload/state.ts';

export const FAST: Partial<AgentOptions> = {
  intervalMs: 40, startupJitterMs: 0, nodeReadTimeoutMs: 2_000, backoff: { baseMs: 20, capMs: 200 },
};

export interface RunningAgent {
  agent: Agent;
  logs: string[];
  result: Promise<number>;
  scans: () => number;
}

/** Start an agent whose scan returns reportFor(scanNumber, snapshot); stop it after `stopAfterScans` scans if given. */
export function runAgent(
  kubeconfig: string, reportFor: (scan: number, cluster: WorkloadSnapshot) => Report | Promise<Report>,
  opts: {
    agent?: Partial<AgentOptions>; stopAfterScans?: number; metrics?: AgentMetrics; dryRunOut?: NodeJS.WritableStream;
    workload?: WorkloadState;
    /** Default worker-1. */
    nodeName?: string;
    /** Default 3 s: the stand-in answers at once, but a loaded CI machine can take a while; tests of hung requests pass 500. */
    requestTimeoutMs?: number;
    /** The heartbeat Lease (none unless given). */
    heartbeat?: { periodMs: number; namespace: string };
  } = {},
): RunningAgent {
  const logs: string[] = [];
  let scans = 0;
  let agent: Agent | undefined;
  agent = wireAgent({
    kubeconfig, nodeName: opts.nodeName ?? 'worker-1', log: (line) => logs.push(line), metrics: opts.metrics, dryRunOut: opts.dryRunOut,
    ...(opts.workload ? { workload: opts.workload } : {}),
    ...(opts.heartbeat ? { heartbeat: opts.heartbeat } : {}),
    limiter: new TokenBucket(1000, 1000), requestTimeoutMs: opts.requestTimeoutMs ?? 3_000,
    agent: { ...FAST, ...opts.agent },
    scan: async (cluster) => {
      scans += 1;
      if (opts.stopAfterScans !== undefined && scans >= opts.stopAfterScans) queueMicrotask(() => agent?.stop());
      return reportFor(scans, cluster);
    },
  });
  return { agent, logs, result: agent.run(), scans: () => scans };
}
