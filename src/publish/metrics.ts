// Prometheus metrics on a private registry. Every gauge derived from the report reads the cached
// last report in collect(): a scrape never triggers a scan. Labels are bounded: rule ids come from
// the finite rule set, components from a fixed list, info-label values are capped in length and count.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics, type Metric } from 'prom-client';
import type { Fact } from '../facts/fact-set.ts';
import type { Coverage, FindingStatus, Report } from '../report/types.ts';
import { STARTUP_FIGURES } from '../workload/snapshot.ts';
import { KUBELET_READ_RESULTS, type KubeletReadResult } from '../workload/kubelet-view.ts';
import { oneLine } from '../text/controls.ts';
import { truncateBytes } from '../text/bytes.ts';

const P = 'node_tuning_advisor_';
/** Every status a rule can have: node_tuning_advisor_finding_status has one series per rule and status (one-hot). */
const STATUSES: readonly FindingStatus[] = ['fail', 'unknown', 'pass', 'not-applicable'];
const COMPONENTS: Record<string, string> = {
  kubelet: 'kubelet',
  scheduler: 'kube-scheduler',
  controllerManager: 'kube-controller-manager',
};
const FSYNC_SOURCES: Record<string, string> = { 'etcd.fsync.p99Ms': 'probe', 'etcd.walFsync.p99Ms': 'etcd_metrics' };
const INFO_FACTS: Record<string, { name: string; label: string; help: string }> = {
  'cpu.governor': { name: 'cpu_governor_info', label: 'governor', help: 'CPU frequency governor(s) in use (value 1).' },
  'cpu.driver': { name: 'cpu_driver_info', label: 'driver', help: 'CPU frequency scaling driver (value 1).' },
  'tuned.activeProfiles': { name: 'tuned_profile_info', label: 'profile', help: 'Active tuned profile(s) (value 1).' },
};
const MAX_INFO_VALUES = 8;
const MAX_RENDER_AGE_MS = 15_000;
const MAX_LABEL_CHARS = 64;

export interface AgentMetrics {
  registry: Registry;
  contentType: string;
  /**
   * The exposition text: rendered again only after something changed (a report, a counter) or when
   * older than MAX_RENDER_AGE_MS (process gauges), and one rendering at a time, whatever the number
   * of scrapes: a flood of requests costs no more than one.
   */
  render(): Promise<string>;
  /** Store the report the gauges read at scrape time. */
  setReport(report: Report, durationSeconds: number, finishedAtMs: number): void;
  scanFailed(): void;
  countApiRequest(verb: string, code: string): void;
  /** A list-watch failed (and will list again after a backoff); reason is a bounded label. */
  countWatchError(watch: string, reason: string): void;
  /** A rejected promise nobody handled, caught by the last-resort handler (a bug: the agent keeps serving). */
  countUnhandledRejection(): void;
  /** One pod's start-up phase on this node, as the pod watch observed it. */
  observePodPhase(phase: string, seconds: number): void;
  /** The kubelet's own start-up histograms over --startup-window (p99 from bucket deltas); empty: nothing known over it yet. */
  setKubeletSli(figures: Record<string, { samples: number; p99Seconds: number | null }>): void;
  /** How the last read of the kubelet's /metrics went (a KUBELET_READ_RESULTS value); not ok: the p99 gauges are cleared. */
  setKubeletRead(result: KubeletReadResult): void;
  /** The --heartbeat period, set once at start. */
  setHeartbeatPeriod(seconds: number): void;
  /** The heartbeat Lease was renewed at this time (ms since the epoch). */
  heartbeatRenewed(atMs: number): void;
}


/** Histogram keys of the kubelet's /metrics → the label value here. */
const KUBELET_SLI_LABELS: Record<string, string> = { sli: 'pod_start_sli', total: 'pod_start_total', imagePull: 'image_pull', sandbox: 'run_podsandbox' };

/** kubelet_pod_start_sli_duration_seconds' buckets, with sub-second ones for the short phases. */
export const POD_PHASE_BUCKETS = [0.1, 0.25, 0.5, 1, 2, 3, 4, 5, 6, 8, 10, 20, 30, 45, 60, 120, 300, 600];

function decided(fact: Fact | undefined): Fact['value'] | undefined {
  return fact === undefined || fact.unknown !== undefined ? undefined : fact.value;
}

function numeric(fact: Fact | undefined): number | undefined {
  const value = decided(fact);
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

function infoValues(fact: Fact | undefined): string[] {
  const value = decided(fact);
  const list = Array.isArray(value) ? value : value === null || value === undefined ? [] : [value];
  const strings = list.filter((v): v is string | number => typeof v === 'string' || typeof v === 'number');
  return [...new Set(strings.map((v) => oneLine(String(v)).slice(0, MAX_LABEL_CHARS)))].sort().slice(0, MAX_INFO_VALUES);
}

export function createAgentMetrics(version: string): AgentMetrics {
  const registry = new Registry();
  // Report-derived gauges join the registry with the first report: before it they would read 0
  // (an unlabelled gauge cannot be absent), and a score of 0 would page someone.
  const derived = new Registry();
  const registers = [derived];
  let report: Report | undefined;
  const facts = (): Record<string, Fact> => report?.facts ?? {};
  collectDefaultMetrics({ register: registry });
  // prom-client names these gauges *_total, which `promtool check metrics` rejects; the
  // per-type series beside them (nodejs_active_handles{type}) carry the same information.
  for (const name of ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total']) {
    registry.removeSingleMetric(name);
  }

  new Gauge({ name: `${P}build_info`, help: 'Build of the running agent (value 1).', labelNames: ['version', 'nodejs'], registers: [registry] })
    .set({ version, nodejs: process.versions.node }, 1);
  new Gauge({
    name: `${P}score`, help: 'Tuning score of this node, 0-100 (100 = nothing to fix).', registers,
    collect() { if (report) this.set(report.score); },
  });
  new Gauge({
    name: `${P}rules_checked_ratio`,
    help: 'Coverage: of the rules that apply on this node, the share the last scan could decide (pass or fail), 0-1; 1 when none applies. Unknown rules are not in the score.',
    registers,
    collect() { if (report) this.set(checkedRatio(report.coverage)); },
  });
  // No free text in labels: the fix comes from the rule set (recording rule node_tuning_advisor:rule_fix:info in the alerts).
  new Gauge({
    name: `${P}finding`, help: 'Rule status on this node: 1 = failing, 0 = not failing (unknown included: see node_tuning_advisor_finding_status).',
    labelNames: ['rule', 'severity', 'category'], registers,
    collect() {
      this.reset();
      for (const f of report?.findings ?? []) this.set({ rule: f.ruleId, severity: f.severity, category: f.category }, f.status === 'fail' ? 1 : 0);
    },
  });
  new Gauge({
    name: `${P}finding_status`, help: 'Rule status on this node, one series per status (fail, unknown, pass, not-applicable): 1 for the current one.',
    labelNames: ['rule', 'severity', 'category', 'status'], registers,
    collect() {
      this.reset();
      for (const f of report?.findings ?? []) {
        for (const status of STATUSES) this.set({ rule: f.ruleId, severity: f.severity, category: f.category, status }, f.status === status ? 1 : 0);
      }
    },
  });
  new Gauge({
    name: `${P}kernel_hz`, help: 'Kernel timer frequency CONFIG_HZ in hertz, by the file it was read from.',
    labelNames: ['source'], registers,
    collect() {
      this.reset();
      const fact = facts()['kernel.hz'];
      const hz = numeric(fact);
      if (hz !== undefined) this.set({ source: (fact as Fact).source.slice(0, MAX_LABEL_CHARS) }, hz);
    },
  });
  for (const [key, info] of Object.entries(INFO_FACTS)) {
    new Gauge({
      name: `${P}${info.name}`, help: info.help, labelNames: [info.label], registers,
      collect() { this.reset(); for (const v of infoValues(facts()[key])) this.set({ [info.label]: v }, 1); },
    });
  }
  new Gauge({
    name: `${P}etcd_fsync_p99_seconds`, help: '99th percentile of etcd disk fsync latency, by measurement source.',
    labelNames: ['source'], registers,
    collect() {
      this.reset();
      for (const [key, source] of Object.entries(FSYNC_SOURCES)) {
        const ms = numeric(facts()[key]);
        if (ms !== undefined) this.set({ source }, ms / 1000);
      }
    },
  });
  // The windowed quantiles the workload rules judge (pod-startup-slo, volume-attach), as on the Node.
  new Gauge({
    name: `${P}pod_startup_window_seconds`, labelNames: ['phase', 'percentile'], registers,
    help: 'Percentiles (50, 99) of pod start-up phases over the pods started on this node within the agent\'s --startup-window, as pod-startup-slo judges them.',
    collect() {
      this.reset();
      for (const phase of STARTUP_FIGURES) {
        for (const percentile of ['50', '99']) {
          const ms = numeric(facts()[`pods.startup.${phase}.p${percentile}Ms`]);
          if (ms !== undefined) this.set({ phase, percentile }, ms / 1000);
        }
      }
    },
  });
  new Gauge({
    name: `${P}volume_attach_window_seconds`, labelNames: ['percentile'], registers,
    help: 'Percentiles (50, 90) of pod bound → volume attached in the Node status, over the attaches on this node within the agent\'s --startup-window, as volume-attach judges them.',
    collect() {
      this.reset();
      for (const percentile of ['50', '90']) {
        const ms = numeric(facts()[`volumes.attachP${percentile}Ms`]);
        if (ms !== undefined) this.set({ percentile }, ms / 1000);
      }
    },
  });
  perComponentGauge(registers, 'client_qps', 'Effective kube-api-qps of the component on this node.', 'kubeAPIQPS', facts);
  perComponentGauge(registers, 'client_burst', 'Effective kube-api-burst of the component on this node.', 'kubeAPIBurst', facts);
  perComponentGauge(
    registers, 'client_throttled_requests', 'Client-side throttling log lines in the recent window, by component.',
    'count', facts, 'throttling',
  );
  const duration = new Gauge({ name: `${P}scan_duration_seconds`, help: 'Duration of the last scan.', registers });
  const lastSuccess = new Gauge({
    name: `${P}last_scan_success_timestamp_seconds`, help: 'Unix time of the last successful scan.', registers,
  });
  const scanErrors = new Counter({ name: `${P}scan_errors_total`, help: 'Scans that failed.', registers: [registry] });
  const apiRequests = new Counter({
    name: `${P}api_requests_total`, help: 'Requests this agent sent to kube-apiserver, by verb and code (HTTP status, or timeout, malformed, a network error).',
    labelNames: ['verb', 'code'], registers: [registry],
  });
  const watchErrors = new Counter({
    name: `${P}watch_errors_total`, help: 'List-watch failures by watch and reason; each is followed by a LIST after a backoff.',
    labelNames: ['watch', 'reason'], registers: [registry],
  });
  const unhandled = new Counter({
    name: `${P}unhandled_rejections_total`, help: 'Rejected promises nobody handled (an agent bug, logged; the agent keeps serving).', registers: [registry],
  });
  const podPhases = new Histogram({
    name: `${P}pod_startup_phase_seconds`,
    help: 'Pod start-up phases on this node as the pod watch observed them (scheduling, initialization, creation, readiness; total = creation to Ready).',
    labelNames: ['phase'], buckets: POD_PHASE_BUCKETS, registers: [registry],
  });
  // Every phase's series from the start, at 0: a series born with its first pod would enter Prometheus
  // already counting it, and rate() would miss the first pods after every agent restart.
  for (const phase of STARTUP_FIGURES) podPhases.zero({ phase });
  const kubeletP99 = new Gauge({
    name: `${P}kubelet_pod_start_p99_seconds`,
    help: 'p99 of the kubelet\'s own start-up histograms over the agent\'s --startup-window, from bucket deltas of its /metrics (kubelet_pod_start_sli_duration_seconds, _total_, image pull, sandbox). ' +
      'The SLI excludes image pulls and, on 1.36 and patched 1.34-1.35, pods with init containers and stateful pods: compare with pod_startup_phase_seconds, the pod watch.',
    labelNames: ['histogram'], registers: [registry],
  });
  const kubeletSamples = new Gauge({
    name: `${P}kubelet_pod_start_samples`,
    help: 'Observations in the kubelet\'s start-up histograms over the agent\'s --startup-window (0: no pod started, the p99 is absent).',
    labelNames: ['histogram'], registers: [registry],
  });
  const kubeletRead = new Gauge({
    name: `${P}kubelet_metrics_read`,
    help: 'How the last read of this node\'s kubelet /metrics went (value 1 on one result): ok; forbidden (HTTP 403: the agent\'s ServiceAccount lacks get nodes/metrics); ' +
      'unauthorized (HTTP 401: the kubelet did not accept its token); tls (serving certificate not trusted: --kubelet-ca-file or --kubelet-insecure-tls); unreachable; error; no_endpoint (the Node names no kubelet port). ' +
      'Not ok: kubelet_pod_start_p99_seconds is absent (unknown); the agent logs the reason.',
    labelNames: ['result'], registers: [registry],
  });
  const heartbeatPeriod = new Gauge({
    name: `${P}heartbeat_interval_seconds`, help: 'The --heartbeat period: how often the agent renews its heartbeat Lease while its report on the Node is current.',
    registers: [registry],
  });
  // Joins the registry with the first renewal: absent until then (a 0 would read as 1970).
  const heartbeatLastName = `${P}heartbeat_last_success_timestamp_seconds`;
  const heartbeatLast = new Gauge({
    name: heartbeatLastName, help: 'Unix time of the last renewal of the heartbeat Lease (report and describe mark the node stale after 3 periods without one).',
    registers: [],
  });
  let joined = false;
  let changed = true;
  let cache: { text: string; at: number } | undefined;
  let rendering: Promise<string> | undefined;
  const touch = (): void => { changed = true; };

  return {
    registry,
    contentType: registry.contentType,
    render() {
      if (cache && !changed && performance.now() - cache.at < MAX_RENDER_AGE_MS) return Promise.resolve(cache.text);
      if (!rendering) {
        changed = false;
        rendering = registry.metrics()
          .then((text) => { cache = { text, at: performance.now() }; return text; })
          .finally(() => { rendering = undefined; });
      }
      return rendering;
    },
    setReport(next, durationSeconds, finishedAtMs) {
      touch();
      report = next;
      if (!joined) {
        joined = true;
        // getMetricsAsArray returns the metric instances themselves (typed as plain MetricObject).
        for (const metric of derived.getMetricsAsArray()) registry.registerMetric(metric as unknown as Metric);
      }
      duration.set(durationSeconds);
      lastSuccess.set(finishedAtMs / 1000);
    },
    scanFailed: () => { touch(); scanErrors.inc(); },
    countApiRequest: (verb, code) => { touch(); apiRequests.inc({ verb, code }); },
    countWatchError: (watch, reason) => { touch(); watchErrors.inc({ watch, reason }); },
    countUnhandledRejection: () => { touch(); unhandled.inc(); },
    observePodPhase: (phase, seconds) => { touch(); podPhases.observe({ phase }, seconds); },
    setKubeletSli(figures) {
      touch();
      kubeletP99.reset();
      kubeletSamples.reset();
      for (const [key, value] of Object.entries(figures)) {
        const histogram = KUBELET_SLI_LABELS[key];
        if (histogram === undefined) continue;
        kubeletSamples.set({ histogram }, value.samples);
        if (value.p99Seconds !== null) kubeletP99.set({ histogram }, value.p99Seconds);
      }
    },
    setHeartbeatPeriod(seconds) {
      touch();
      heartbeatPeriod.set(seconds);
    },
    heartbeatRenewed(atMs) {
      touch();
      if (registry.getSingleMetric(heartbeatLastName) === undefined) registry.registerMetric(heartbeatLast);
      heartbeatLast.set(atMs / 1000);
    },
    setKubeletRead(result) {
      touch();
      kubeletRead.reset();
      for (const r of KUBELET_READ_RESULTS) kubeletRead.set({ result: r }, r === result ? 1 : 0);
      if (result !== 'ok') { kubeletP99.reset(); kubeletSamples.reset(); }
    },
  };
}

function perComponentGauge(
  registers: Registry[], name: string, help: string, field: string,
  facts: () => Record<string, Fact>, prefix?: string,
): void {
  new Gauge({
    name: `${P}${name}`, help, labelNames: ['component'], registers,
    collect() {
      this.reset();
      for (const [factComponent, component] of Object.entries(COMPONENTS)) {
        const key = prefix ? `${prefix}.${factComponent}.${field}` : `${factComponent}.${field}`;
        const value = numeric(facts()[key]);
        if (value !== undefined) this.set({ component }, value);
      }
    },
  });
}

/** decided / applicable; 1 when no rule applies (nothing was left undecided). */
export function checkedRatio(coverage: Coverage): number {
  return coverage.applicable === 0 ? 1 : coverage.decided / coverage.applicable;
}
