// Assembles the agent from its parts; shared by the CLI command and the tests.
import type { Report } from '../report/types.ts';
import type { AgentMetrics } from '../publish/metrics.ts';
import { Agent, type AgentOptions } from './agent.ts';
import { DEFAULT_BACKOFF, TokenBucket } from './backoff.ts';
import { NodeApi, loadKubeConfig } from './kube.ts';
import { NodeWatcher } from './node-watcher.ts';
import { Publisher } from './publisher.ts';

export interface WireOptions {
  kubeconfig: string | undefined;
  nodeName: string;
  scan(): Promise<Report>;
  log(line: string): void;
  metrics?: AgentMetrics;
  /** Set for --dry-run: the patch and Events are printed here instead of sent. */
  dryRunOut?: NodeJS.WritableStream;
  limiter?: TokenBucket;
  requestTimeoutMs?: number;
  agent?: Partial<AgentOptions>;
  /** Longest wait for the watch to deliver our own patch before the next diff. */
  ownWriteWaitMs?: number;
}

export function wireAgent(opts: WireOptions): Agent {
  const kc = loadKubeConfig(opts.kubeconfig);
  const count = (verb: string, code: string): void => opts.metrics?.countApiRequest(verb, code);
  const api = new NodeApi(kc, count, opts.limiter, opts.requestTimeoutMs);
  const backoff = opts.agent?.backoff ?? DEFAULT_BACKOFF;
  const watcher = new NodeWatcher(api, opts.nodeName, opts.log, backoff);
  const publisher = new Publisher(api, (rv) => watcher.waitForResourceVersion(rv, opts.ownWriteWaitMs ?? 10_000), opts.dryRunOut);
  return new Agent({
    scan: opts.scan,
    watcher,
    publisher,
    log: opts.log,
    onReport: (report, seconds) => opts.metrics?.setReport(report, seconds, Date.now()),
    onScanError: () => opts.metrics?.scanFailed(),
  }, opts.agent);
}
