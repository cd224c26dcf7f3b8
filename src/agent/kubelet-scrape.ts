// One read of this node's kubelet /metrics before each scan: what the scan's facts get
// (KubeletMetricsView: kubelet.metrics.read and the kubelet's pod start-up SLI), what the agent's
// metrics show (kubelet_metrics_read{result}, the p99 gauges over the window) and one log line per
// change of outcome.
import type { AgentMetrics } from '../publish/metrics.ts';
import type { KubeletMetricsView } from '../workload/kubelet-view.ts';
import type { KubeletMetricsReader, KubeletRead, KubeletTarget } from './kubelet-metrics.ts';
import { kubeletMetricsReader, KubeletSliWindow } from './kubelet-sli.ts';

export interface KubeletScrapeOptions {
  nodeName: string;
  reader: Pick<KubeletMetricsReader, 'read'>;
  /** The kubelet's address and port from the newest Node; undefined while it names none. */
  target(): KubeletTarget | undefined;
  /** Whether the Node has been seen at all (else there is no port to look for yet). */
  nodeSeen(): boolean;
  log(line: string): void;
  metrics?: AgentMetrics;
  /** The agent's --startup-window (ms): how far back the kubelet's figures reach. */
  windowMs: number;
  now?: () => number;
}

export class KubeletScrape {
  private readonly opts: KubeletScrapeOptions;
  private readonly sli: KubeletSliWindow;
  private lastLine: string | undefined;

  constructor(opts: KubeletScrapeOptions) {
    this.opts = opts;
    this.sli = new KubeletSliWindow(opts.windowMs);
  }

  private noEndpoint(): string {
    const node = this.opts.nodeName;
    return this.opts.nodeSeen() ? `Node ${node} names no kubelet port (status.daemonEndpoints.kubeletEndpoint)` : `Node ${node} is not known yet (its watch has not listed it), so neither is its kubelet's port`;
  }

  /** Reads once; never throws (a failure is the view's result and reason). */
  async read(): Promise<KubeletMetricsView> {
    const target = this.opts.target();
    const metrics = kubeletMetricsReader();
    const got: KubeletRead = target === undefined
      ? { ok: false, result: 'no_endpoint', url: `api:nodes/${this.opts.nodeName} status.daemonEndpoints`, reason: this.noEndpoint() }
      : await this.opts.reader.read(target, '/metrics', metrics.lines).catch((err: Error) => ({ ok: false as const, result: 'error' as const, url: `${target.address}:${target.port}`, reason: `the read failed (${err.message})` }));
    this.opts.metrics?.setKubeletRead(got.ok ? 'ok' : got.result);
    const line = got.ok ? `kubelet /metrics: read from ${got.url}` : `kubelet /metrics not read (${got.url}), its start-up p99 is unknown: ${got.reason}`;
    if (line !== this.lastLine) this.opts.log(line);
    this.lastLine = line;
    if (!got.ok) return { result: got.result, source: got.url, reason: got.reason };
    const now = (this.opts.now ?? Date.now)();
    const known = this.sli.scrape(metrics.result(), now);
    const figures = known ? this.sli.figures(now) : {};
    this.opts.metrics?.setKubeletSli(figures);
    const sli = figures.sli;
    const podStartSli = !known ? 'first-read' as const : sli ? { ...sli, windowMs: this.sli.windowMs } : undefined;
    return { result: 'ok', source: got.url, ...(podStartSli ? { podStartSli } : {}) };
  }
}
