// The kubelet's own pod start-up SLI (kubelet_pod_start_sli_duration_seconds: creation → all
// containers started, image pulls excluded) and whether its /metrics could be read at all. The
// agent reads the kubelet's HTTPS /metrics just before each scan and hands the outcome over as plain
// data (ctx.cluster.kubelet); `scan` reads no kubelet port, so there kubelet.metrics.read is none.
import type { Collector } from './collector.ts';
import type { FactSet } from '../facts/fact-set.ts';
import type { KubeletMetricsView } from '../workload/kubelet-view.ts';
import { windowText } from '../workload/window.ts';

const SLI_FACTS = ['kubelet.podStartSli.samples', 'kubelet.podStartSli.p99Ms'];
const NOT_READ = 'not read: `scan` reads only the host; the agent reads the kubelet\'s /metrics before each scan';
const FIRST_READ = 'the agent has read the kubelet\'s counters once: they go back to the kubelet\'s start, beyond the window, so its figure over --startup-window begins with the next read';

function sliFacts(facts: FactSet, view: KubeletMetricsView): void {
  if (view.result !== 'ok') {
    for (const key of SLI_FACTS) facts.unknown(key, view.reason ?? `the kubelet's /metrics was not read (${view.result})`, view.source);
    return;
  }
  const sli = view.podStartSli;
  if (!sli) {
    for (const key of SLI_FACTS) facts.unknown(key, 'the kubelet exposes no kubelet_pod_start_sli_duration_seconds (kubelets before it was added have none)', view.source);
    return;
  }
  if (sli === 'first-read') {
    for (const key of SLI_FACTS) facts.unknown(key, FIRST_READ, view.source);
    return;
  }
  const detail = `kubelet_pod_start_sli_duration_seconds: the pods the kubelet started in the last ${windowText(sli.windowMs)} (--startup-window; bucket deltas between the agent's reads); image pulls excluded (from 1.36, and 1.34-1.35 patches, also init containers, stateful and not-immediately-schedulable pods); from its buckets only (its _sum can go negative)`;
  facts.set('kubelet.podStartSli.samples', sli.samples, view.source, detail);
  facts.set('kubelet.podStartSli.p99Ms', sli.p99Seconds === null ? null : Math.round(sli.p99Seconds * 1000), view.source, `${detail}; p99 by linear interpolation inside a bucket, as histogram_quantile`);
}

const kubeletMetrics: Collector = {
  name: 'kubelet-metrics',
  provides: ['kubelet.metrics.read', ...SLI_FACTS],
  async collect({ facts, cluster }) {
    const view = cluster?.kubelet;
    if (!view) {
      facts.set('kubelet.metrics.read', null, 'default', NOT_READ);
      for (const key of SLI_FACTS) facts.unknown(key, NOT_READ, 'default');
      return;
    }
    facts.set('kubelet.metrics.read', view.result, view.source, view.reason);
    sliFacts(facts, view);
  },
};

export default kubeletMetrics;
