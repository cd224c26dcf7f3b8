// Assembles the agent from its parts; shared by the CLI command and the tests.
import type { Report } from '../report/types.ts';
import type { AgentMetrics } from '../publish/metrics.ts';
import { DEFAULT_BACKOFF, type TokenBucket } from '../kube/backoff.ts';
import { Agent, DEFAULT_AGENT_OPTIONS, type AgentOptions } from './agent.ts';
import { STOP_GRACE_MS, agentClient, agentInformers, agentWrites } from './api.ts';
import { NodeWatcher } from './node-watcher.ts';
import { Publisher } from './publisher.ts';
import { WorkloadWatcher } from './workload-watcher.ts';
import { WorkloadState } from '../workload/state.ts';
import type { WorkloadSnapshot } from '../workload/snapshot.ts';
import type { NodeObject } from '../kube/objects.ts';
import { KubeletSliTracker } from './kubelet-sli.ts';
import { KubeletMetricsReader, kubeletTarget, type KubeletTarget } from './kubelet-metrics.ts';

export interface WireOptions {
  kubeconfig: string | undefined;
  nodeName: string;
  /** One scan; `cluster` is what the watches know at that moment (pods, this Node, CSIDriver, CSINode), `node` the newest Node. */
  scan(cluster: WorkloadSnapshot, node: NodeObject | undefined): Promise<Report>;
  log(line: string): void;
  metrics?: AgentMetrics;
  /** Set for --dry-run: the patch and Events are printed here instead of sent. */
  dryRunOut?: NodeJS.WritableStream;
  limiter?: TokenBucket;
  requestTimeoutMs?: number;
  agent?: Partial<AgentOptions>;
  /** The watch-fed workload state (tests pass one with a fake clock); default: a new one on the wall clock. */
  workload?: WorkloadState;
  /** In-cluster configuration: KUBERNETES_SERVICE_HOST/PORT (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** How the kubelet's /metrics is read (kubelet-metrics.ts): --kubelet-ca-file, --kubelet-insecure-tls. */
  kubelet?: { caFile?: string; insecureTls?: boolean; address?: string };
}

export function wireAgent(opts: WireOptions): Agent {
  const client = agentClient({
    kubeconfig: opts.kubeconfig, metrics: opts.metrics, limiter: opts.limiter, requestTimeoutMs: opts.requestTimeoutMs, env: opts.env,
  });
  const backoff = opts.agent?.backoff ?? DEFAULT_BACKOFF;
  const informers = agentInformers(client, opts.nodeName, { backoff, log: opts.log, metrics: opts.metrics });
  const watcher = new NodeWatcher(informers.node, opts.nodeName);
  const publisher = new Publisher(agentWrites(client), (node) => watcher.adopt(node), opts.dryRunOut);
  const state = opts.workload ?? new WorkloadState({
    nodeName: opts.nodeName, onPhase: (phase, seconds) => opts.metrics?.observePodPhase(phase, seconds),
  });
  let kubelet: KubeletTarget | undefined;
  watcher.subscribe((node) => {
    state.nodeSeen(node);
    state.synced('node');
    kubelet = kubeletTarget(node, opts.nodeName, opts.kubelet?.address);
  });
  const sli = new KubeletSliTracker();
  const reader = new KubeletMetricsReader({ credentials: () => client.bearerAndCa(), caFile: opts.kubelet?.caFile, insecureTls: opts.kubelet?.insecureTls });
  let lastRead: string | undefined;
  const scrapeKubelet = async (): Promise<void> => {
    if (opts.metrics === undefined) return;
    const got = kubelet === undefined
      ? { ok: false as const, result: 'no_endpoint' as const, reason: `Node ${opts.nodeName} names no kubelet port (status.daemonEndpoints.kubeletEndpoint)` }
      : await reader.read(kubelet);
    // The p99 is unknown (absent) while the kubelet cannot be read; the reason is logged once per change.
    opts.metrics.setKubeletRead(got.ok ? 'ok' : got.result);
    const line = got.ok ? `kubelet /metrics: read from ${got.url}` : `kubelet /metrics not read, its start-up p99 is unknown: ${got.reason}`;
    if (line !== lastRead) opts.log(line);
    lastRead = line;
    if (!got.ok) return;
    const interval = sli.scrape(got.text);
    if (interval) opts.metrics.setKubeletSli(interval);
  };
  watcher.onFailure((reason) => { if (!state.hasListed('node')) state.synced('node', reason); });
  const agent: Agent = new Agent({
    // The first scan waits (bounded) for the watches' first LIST, so it does not report "not listed yet".
    scan: async () => {
      await state.settledOrTimeout(opts.agent?.nodeReadTimeoutMs ?? DEFAULT_AGENT_OPTIONS.nodeReadTimeoutMs, agent.signal);
      // Stopped while waiting: no scan (on a control-plane node it could start the fsync probe).
      if (agent.signal.aborted) throw new Error('stopped before the scan');
      const report = await opts.scan(state.snapshot(), watcher.current());
      // The kubelet's own start-up histograms, per scan interval; a kubelet we cannot read changes nothing else.
      await scrapeKubelet().catch(() => {});
      return report;
    },
    watcher,
    background: new WorkloadWatcher(informers, state),
    publisher,
    onStop: () => client.stop(STOP_GRACE_MS),
    log: opts.log,
    onReport: (report, seconds) => opts.metrics?.setReport(report, seconds, Date.now()),
    onScanError: () => opts.metrics?.scanFailed(),
  }, opts.agent);
  return agent;
}
