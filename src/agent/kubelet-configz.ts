// One read of this node's kubelet /configz before each scan: the running configuration the kubelet
// collector sets against its files (KubeletConfigView), and one log line per change of outcome.
// Where it cannot be read (a kubelet without fine-grained authorization, 403, no TLS, a hollow kubelet
// that serves none) the view says why; the files then decide, as in `scan`.
import type { KubeletConfigView } from '../workload/kubelet-view.ts';
import { parseConfigz } from '../workload/kubelet-configz.ts';
import type { KubeletMetricsReader, KubeletTarget } from './kubelet-metrics.ts';

export interface KubeletConfigzOptions {
  nodeName: string;
  reader: Pick<KubeletMetricsReader, 'read'>;
  target(): KubeletTarget | undefined;
  log(line: string): void;
}

export class KubeletConfigzRead {
  private readonly opts: KubeletConfigzOptions;
  private lastLine: string | undefined;

  constructor(opts: KubeletConfigzOptions) {
    this.opts = opts;
  }

  /** Reads once; never throws. */
  async read(): Promise<KubeletConfigView> {
    const view = await this.fetch();
    const line = view.result === 'ok' ? `kubelet /configz: read from ${view.source}` : `kubelet /configz not read (${view.source}), its running values are unknown: ${view.reason}`;
    if (line !== this.lastLine) this.opts.log(line);
    this.lastLine = line;
    return view;
  }

  private async fetch(): Promise<KubeletConfigView> {
    const target = this.opts.target();
    if (target === undefined) {
      return { result: 'no_endpoint', source: `api:nodes/${this.opts.nodeName} status.daemonEndpoints`, reason: `Node ${this.opts.nodeName} names no kubelet port (status.daemonEndpoints.kubeletEndpoint) yet` };
    }
    const got = await this.opts.reader.read(target, '/configz')
      .catch((err: Error) => ({ ok: false as const, result: 'error' as const, url: `${target.address}:${target.port}`, reason: `the read failed (${err.message})` }));
    if (!got.ok) {
      const reason = /answered HTTP 404/.test(got.reason) ? `the kubelet serves no /configz (HTTP 404; a kubelet started with enableServer off, or a hollow kubelet)` : got.reason;
      return { result: got.result, source: got.url, reason };
    }
    const parsed = parseConfigz(got.text);
    if (!parsed.ok) return { result: 'error', source: got.url, reason: parsed.reason };
    return { result: 'ok', source: got.url, config: parsed.config, ...(parsed.apiVersion ? { apiVersion: parsed.apiVersion } : {}) };
  }
}
