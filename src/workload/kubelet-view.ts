// What the agent's last read of its kubelet's /metrics came to, as plain data for the scan: the
// collector kubelet-metrics turns it into facts (kubelet.metrics.read and the kubelet's own pod
// start-up SLI), the agent's metrics publisher into kubelet_metrics_read{result}.

/** The outcomes of one read: the bounded label of kubelet_metrics_read and the value of the fact kubelet.metrics.read. */
export const KUBELET_READ_RESULTS = ['ok', 'forbidden', 'unauthorized', 'tls', 'unreachable', 'error', 'no_endpoint'] as const;
export type KubeletReadResult = (typeof KUBELET_READ_RESULTS)[number];

/** The p99 of one histogram's observations within the window and how many there were. */
export interface KubeletHistogramFigure {
  samples: number;
  p99Seconds: number | null;
  /** How far back it reaches: the agent's --startup-window (ms). */
  windowMs: number;
}

export interface KubeletMetricsView {
  result: KubeletReadResult;
  /** Where it was read (the /metrics URL), or the Node field that named no port. */
  source: string;
  /** Not ok: why, in words, with the fix (a flag or the RBAC rule to add). */
  reason?: string;
  /**
   * ok: kubelet_pod_start_sli_duration_seconds over the window; 'first-read': the agent's first read,
   * which only sets where its window starts; absent when the kubelet exposes no such histogram.
   */
  podStartSli?: KubeletHistogramFigure | 'first-read';
}

/** The agent's read of its kubelet's /configz: the running configuration, or why it is not known. */
export interface KubeletConfigView {
  result: KubeletReadResult;
  /** The /configz URL, or the Node field that named no port. */
  source: string;
  /** Not ok: why, with the fix (the RBAC rule to add, a flag). */
  reason?: string;
  /** ok: the KubeletConfiguration's top-level scalar fields as the running kubelet serves them. */
  config?: Record<string, number | boolean | string | null>;
  /** ok: the apiVersion it names (1.36+ serves apiVersion and kind; older kubelets neither). */
  apiVersion?: string;
}
