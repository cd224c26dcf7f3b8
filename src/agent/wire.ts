// Assembles the agent from its parts; shared by the CLI command and the tests.
import type { Report } from '../report/types.ts';
import type { AgentMetrics } from '../publish/metrics.ts';
import { Agent, DEFAULT_AGENT_OPTIONS, type AgentOptions } from './agent.ts';
import { DEFAULT_BACKOFF, TokenBucket } from './backoff.ts';
import { NodeApi, loadKubeConfig } from './kube.ts';
import { NodeWatcher } from './node-watcher.ts';
import { Publisher } from './publisher.ts';
import { WorkloadWatcher } from './workload-watcher.ts';
import { WorkloadState } from '../workload/state.ts';
import type { WorkloadSnapshot } from '../workload/snapshot.ts';

export interface WireOptions {
  kubeconfig: string | undefined;
  nodeName: string;
  /** One scan; `cluster` is what the watches know at that moment (pods, this Node, CSIDriver, CSINode). */
  scan(cluster: WorkloadSnapshot): Promise<Report>;
  log(line: string): void;
  metrics?: AgentMetrics;
  /** Set for --dry-run: the patch and Events are printed here instead of sent. */
  dryRunOut?: NodeJS.WritableStream;
  limiter?: TokenBucket;
  requestTimeoutMs?: number;
  agent?: Partial<AgentOptions>;
  /** Longest wait for the watch to deliver our own patch before the next diff. */
  ownWriteWaitMs?: number;
  /** The watch-fed workload state (tests pass one with a fake clock); default: a new one on the wall clock. */
  workload?: WorkloadState;
}

export function wireAgent(opts: WireOptions): Agent {
  const kc = loadKubeConfig(opts.kubeconfig);
  const count = (verb: string, code: string): void => opts.metrics?.countApiRequest(verb, code);
  const api = new NodeApi(kc, count, opts.limiter, opts.requestTimeoutMs);
  const backoff = opts.agent?.backoff ?? DEFAULT_BACKOFF;
  const watcher = new NodeWatcher(api, opts.nodeName, opts.log, backoff);
  const publisher = new Publisher(api, (rv) => watcher.waitForResourceVersion(rv, opts.ownWriteWaitMs ?? 10_000), opts.dryRunOut);
  const state = opts.workload ?? new WorkloadState({
    nodeName: opts.nodeName, onPhase: (phase, seconds) => opts.metrics?.observePodPhase(phase, seconds),
  });
  watcher.subscribe((node) => { state.nodeSeen(node); state.synced('node'); });
  watcher.onFailure((reason) => { if (!state.hasListed('node')) state.synced('node', reason); });
  return new Agent({
    // The first scan waits (bounded) for the watches' first LIST, so it does not report "not listed yet".
    scan: async () => {
      await state.settledOrTimeout(opts.agent?.nodeReadTimeoutMs ?? DEFAULT_AGENT_OPTIONS.nodeReadTimeoutMs);
      return opts.scan(state.snapshot());
    },
    watcher,
    background: new WorkloadWatcher(api, state, opts.log, backoff),
    publisher,
    log: opts.log,
    onReport: (report, seconds) => opts.metrics?.setReport(report, seconds, Date.now()),
    onScanError: () => opts.metrics?.scanFailed(),
  }, opts.agent);
}
