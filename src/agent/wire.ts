// Assembles the agent from its parts; shared by the CLI command and the tests.
import type { Report } from '../report/types.ts';
import type { AgentMetrics } from '../publish/metrics.ts';
import { DEFAULT_BACKOFF, type TokenBucket } from '../kube/backoff.ts';
import { Agent, DEFAULT_AGENT_OPTIONS, type AgentOptions } from './agent.ts';
import { STOP_GRACE_MS, agentClient, agentInformers, agentWrites, leaseWrites } from './api.ts';
import { Heartbeat } from './heartbeat.ts';
import { NodeWatcher } from './node-watcher.ts';
import { Publisher } from './publisher.ts';
import { WorkloadWatcher } from './workload-watcher.ts';
import { WorkloadState } from '../workload/state.ts';
import type { WorkloadSnapshot } from '../workload/snapshot.ts';
import { DEFAULT_WINDOW_MS } from '../workload/window.ts';
import type { NodeObject } from '../kube/objects.ts';
import { KubeletScrape } from './kubelet-scrape.ts';
import { KubeletConfigzRead } from './kubelet-configz.ts';
import { KubeletMetricsReader, kubeletTarget, type KubeletTarget } from './kubelet-metrics.ts';
import { serviceAccountOf, verifyAdmission } from './admission-check.ts';

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
  /** --startup-window (ms): how far back the pod start-up, attach and kubelet SLI figures reach (default 1h). */
  startupWindowMs?: number;
  /** In-cluster configuration: KUBERNETES_SERVICE_HOST/PORT (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** How the kubelet's /metrics is read (kubelet-metrics.ts): --kubelet-ca-file, --kubelet-insecure-tls. */
  kubelet?: { caFile?: string; insecureTls?: boolean; address?: string };
  /** The heartbeat Lease (--heartbeat, the agent's namespace); none without it, and none with --dry-run. */
  heartbeat?: { periodMs: number; namespace: string };
}

export function wireAgent(opts: WireOptions): Agent {
  const client = agentClient({
    kubeconfig: opts.kubeconfig, metrics: opts.metrics, limiter: opts.limiter, requestTimeoutMs: opts.requestTimeoutMs, env: opts.env,
  });
  const backoff = opts.agent?.backoff ?? DEFAULT_BACKOFF;
  const informers = agentInformers(client, opts.nodeName, { backoff, log: opts.log, metrics: opts.metrics });
  const watcher = new NodeWatcher(informers.node, opts.nodeName);
  const publisher = new Publisher(agentWrites(client), (node) => watcher.adopt(node), opts.dryRunOut);
  const windowMs = opts.startupWindowMs ?? DEFAULT_WINDOW_MS;
  const state = opts.workload ?? new WorkloadState({
    nodeName: opts.nodeName, windowMs, onPhase: (phase, seconds) => opts.metrics?.observePodPhase(phase, seconds),
  });
  let kubelet: KubeletTarget | undefined;
  let nodeSeen = false;
  watcher.subscribe((node) => {
    nodeSeen = true;
    state.nodeSeen(node);
    state.synced('node');
    kubelet = kubeletTarget(node, opts.nodeName, opts.kubelet?.address);
  });
  const reader = new KubeletMetricsReader({ credentials: () => client.bearerAndCa(), caFile: opts.kubelet?.caFile, insecureTls: opts.kubelet?.insecureTls });
  const kubeletRead = new KubeletScrape({ nodeName: opts.nodeName, log: opts.log, metrics: opts.metrics, target: () => kubelet, nodeSeen: () => nodeSeen, windowMs, reader });
  const kubeletConfig = new KubeletConfigzRead({ nodeName: opts.nodeName, log: opts.log, target: () => kubelet, reader });
  watcher.onFailure((reason) => { if (!state.hasListed('node')) state.synced('node', reason); });
  const heartbeat = opts.heartbeat && !opts.dryRunOut ? new Heartbeat({
    api: leaseWrites(client), nodeName: opts.nodeName, namespace: opts.heartbeat.namespace, periodMs: opts.heartbeat.periodMs,
    current: () => agent.current, nodeUid: () => watcher.current()?.metadata.uid, log: opts.log,
    onRenewed: (at) => opts.metrics?.heartbeatRenewed(at), backoff,
  }) : undefined;
  if (heartbeat) opts.metrics?.setHeartbeatPeriod((opts.heartbeat as { periodMs: number }).periodMs / 1000);
  const agent: Agent = new Agent({
    // The first scan waits (bounded) for the watches' first LIST, so it does not report "not listed yet".
    scan: async () => {
      await state.settledOrTimeout(opts.agent?.nodeReadTimeoutMs ?? DEFAULT_AGENT_OPTIONS.nodeReadTimeoutMs, agent.signal);
      // Stopped while waiting: no scan (on a control-plane node it could start the fsync probe).
      if (agent.signal.aborted) throw new Error('stopped before the scan');
      // The kubelet's own start-up histograms, read just before the scan, which turns the read into facts
      // (a kubelet that cannot be read makes the rules on them unknown, with the reason and its fix).
      const kubeletView = await kubeletRead.read();
      // Its running configuration: the kubelet rules decide on it, its files say where to change it.
      const kubeletConfigView = await kubeletConfig.read();
      return opts.scan({ ...state.snapshot(), kubelet: kubeletView, kubeletConfig: kubeletConfigView }, watcher.current());
    },
    watcher,
    background: new WorkloadWatcher(informers, state),
    publisher,
    ...(heartbeat ? { heartbeat } : {}),
    // --dry-run writes nothing; other credentials than a ServiceAccount's are no policy's to hold.
    ...(opts.dryRunOut ? {} : {
      admission: async () => {
        const account = serviceAccountOf((await client.bearerAndCa()).token);
        return account ? verifyAdmission(client, opts.nodeName, account)
          : { held: true as const, lines: ['admission: not checked: the credentials are not a ServiceAccount token, and the policies hold only the agent\'s ServiceAccount'] };
      },
    }),
    onStop: () => client.stop(STOP_GRACE_MS),
    log: opts.log,
    onReport: (report, seconds) => opts.metrics?.setReport(report, seconds, Date.now()),
    onScanError: () => opts.metrics?.scanFailed(),
  }, opts.agent);
  return agent;
}
