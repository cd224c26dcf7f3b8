// `agent`: the DaemonSet mode. Scans on an interval and publishes the report as node annotations,
// Events on transitions and Prometheus metrics, without becoming API load itself.
import { createRequire } from 'node:module';
import { DEFAULT_METRICS_ADDR, parseListenAddress, startMetricsServer } from '../../agent/metrics-server.ts';
import { ProbeSchedule, type ProbeInterval } from '../../agent/probe-schedule.ts';
import { wireAgent } from '../../agent/wire.ts';
import { checkCaFile, checkKubeletAddress } from '../../agent/kubelet-metrics.ts';
import { describeError } from '../../kube/errors.ts';
import type { Report } from '../../report/types.ts';
import type { WorkloadSnapshot } from '../../workload/snapshot.ts';
import { DEFAULT_WINDOW_MS, windowText } from '../../workload/window.ts';
import { createAgentMetrics } from '../../publish/metrics.ts';
import { runScan } from '../../scan.ts';
import { loadRuleSet } from '../../rules/rule-set.ts';
import { SILENCE_ANNOTATION, describeSilence, silenceChanged, silenceOf, type Silence } from '../../agent/silence.ts';
import type { NodeObject } from '../../kube/objects.ts';
import { stripControls } from '../../text/terminal.ts';
import { DEFAULT_AGENT_NAMESPACE } from '../../wire/heartbeat.ts';
import { EXIT_OK, UsageError, listFlag, parseDuration, parseFlags, type Io } from '../io.ts';
import { namespaceFlag } from '../kube-flags.ts';

/** SIGHUP too: an agent started by hand over SSH stops cleanly when the session drops. */
const STOP_SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;

export const AGENT_USAGE = `Usage: node-tuning-advisor agent [flags]

Runs the checks every --interval and publishes the result on this node's Node object:
annotations under node-tuning-advisor.io/ (patched only when they change), Events on
transitions (TuningRecommendation / TuningResolved) and Prometheus metrics; renews a heartbeat
(a Lease named after the node in --namespace) every --heartbeat while that report is current.

Flags:
  --kubeconfig FILE      use this kubeconfig (default: the in-cluster service account)
  --node-name NAME       the Node to publish on (default: $NODE_NAME)
  --interval DURATION    time between scans, ±10 % jitter (default 5m; e.g. 30s, 10m, 1h; at most 576h)
  --startup-jitter DUR   random delay before the first scan, at most (default 30s; 0s: none)
  --startup-window DUR   how far back the pod start-up, volume attach and kubelet SLI figures
                         reach (default 1h; 1m to 24h, at least --interval): a node that started
                         no pod in it has no figure, never an old one
  --heartbeat DURATION   heartbeat Lease renewal period, +0-10 % jitter (default 5m: 12 writes/h);
                         report and describe call the node stale after 3 periods without one
  --namespace NS         the heartbeat Lease's namespace, the agent's own (default: $POD_NAMESPACE,
                         else ${DEFAULT_AGENT_NAMESPACE})
  --metrics-addr ADDR    /metrics, /healthz, /readyz listen address (default ${DEFAULT_METRICS_ADDR})
  --host-root DIR        where the host's / is (default /; in the DaemonSet: /host)
  --rules PATH           extra rule directory or file; repeatable
  --no-bundled-rules     use only the --rules given
  --probe-interval DUR   etcd fsync probe (22 MiB of writes in etcd's data dir): off, auto or a
                         duration (default auto: off on workers, 6h on control-plane nodes)
  --kubelet-ca-file FILE CA (PEM) that signed this node's kubelet serving certificate, for reading
                         its HTTPS /metrics (default: the cluster's CA)
  --kubelet-insecure-tls do not verify the kubelet's serving certificate (self-signed kubelets);
                         the agent's token is then sent to whoever answers at the Node's address
  --kubelet-address IP   where the kubelet listens (default: the Node's InternalIP, else ExternalIP)
  --dry-run              print the merge patch and Events instead of sending them (only reads;
                         no heartbeat)
  --once                 one scan, one publish and one heartbeat renewal, then exit (0 published,
                         1 gave up after retries)
  -h, --help             this help

API use: one LIST and one watch each of this Node (fieldSelector metadata.name=NAME), the pods on it
(fieldSelector spec.nodeName=NAME), CSIDriver objects and this node's CSINode; no periodic GET or LIST;
writes only on change, plus one heartbeat PATCH per --heartbeat (one GET of it at start);
before each scan one GET of the kubelet's /metrics (HTTPS with the agent's token,
RBAC get nodes/metrics; plain HTTP only where the port answers plain HTTP, without the token); client limit 1 request/s, burst 5; 429 honours Retry-After (watches too); errors
back off exponentially (1 s … 5 min, jittered). SIGTERM (or SIGINT, SIGHUP) aborts what is in flight and exits within 2 s (it clears nothing: see cleanup).
Deploy-free try-out: agent --kubeconfig ~/.kube/config --node-name N --dry-run --once
`;

export { parseDuration };

const MIN_WINDOW_MS = 60_000;
const MAX_WINDOW_MS = 24 * 3_600_000;

/**
 * --startup-window: 1m to 24h, and at least --interval (a shorter window would never count the pods
 * started between two scans); the default is 1h.
 */
export function startupWindow(value: string | undefined, intervalMs: number): number {
  const ms = value === undefined ? DEFAULT_WINDOW_MS : parseDuration('--startup-window', value);
  const shown = value === undefined ? `${windowText(ms)} (the default)` : value;
  if (ms < MIN_WINDOW_MS || ms > MAX_WINDOW_MS) {
    throw new UsageError(`--startup-window ${shown} is outside 1m to 24h: give the time the pod start-up figures should cover, e.g. 1h`);
  }
  if (ms < intervalMs) {
    throw new UsageError(`--startup-window ${shown} is shorter than --interval ${windowText(intervalMs)}: pods started between two scans would never be counted; set --startup-window to at least ${windowText(intervalMs)}`);
  }
  return ms;
}

function version(): string {
  return (createRequire(import.meta.url)('../../../package.json') as { version: string }).version;
}

/**
 * Last resort: a rejected promise nobody handled is a bug, but one that must not take the node's
 * agent down (Node's default is to exit). Log it (type and message only) and count it; keep serving.
 * Returns the uninstall.
 */
export function keepServingOnUnhandledRejection(log: (line: string) => void, count: () => void): () => void {
  const handler = (reason: unknown): void => {
    count();
    log(`internal error (unhandled rejection, kept running): ${describeError(reason)}`);
  };
  process.on('unhandledRejection', handler);
  return () => { process.off('unhandledRejection', handler); };
}

export async function agentCommand(args: string[], io: Io): Promise<number> {
  const { values } = parseFlags(args, {
    kubeconfig: { type: 'string' },
    'node-name': { type: 'string' },
    interval: { type: 'string', default: '5m' },
    'startup-jitter': { type: 'string', default: '30s' },
    'startup-window': { type: 'string' },
    heartbeat: { type: 'string', default: '5m' },
    namespace: { type: 'string' },
    'metrics-addr': { type: 'string', default: DEFAULT_METRICS_ADDR },
    'host-root': { type: 'string', default: '/' },
    rules: { type: 'string', multiple: true },
    'no-bundled-rules': { type: 'boolean' },
    'probe-interval': { type: 'string' },
    'kubelet-ca-file': { type: 'string' },
    'kubelet-insecure-tls': { type: 'boolean' },
    'kubelet-address': { type: 'string' },
    'dry-run': { type: 'boolean' },
    once: { type: 'boolean' },
  }, 'agent');
  if (values.help) {
    io.stdout.write(AGENT_USAGE);
    return EXIT_OK;
  }
  const env = io.env ?? process.env;
  const nodeName = values['node-name'] ?? env.NODE_NAME;
  if (!nodeName) throw new UsageError('no node name: pass --node-name NAME or set NODE_NAME (in a pod: fieldRef spec.nodeName)');
  const intervalMs = parseDuration('--interval', values.interval as string);
  const startupJitterMs = Math.min(intervalMs, parseDuration('--startup-jitter', values['startup-jitter'] as string, { allowZero: true }));
  const startupWindowMs = startupWindow(values['startup-window'] as string | undefined, intervalMs);
  const heartbeatMs = parseDuration('--heartbeat', values.heartbeat as string);
  if (heartbeatMs < 1000 || heartbeatMs > 86_400_000) throw new UsageError(`--heartbeat ${values.heartbeat} must be from 1s to 24h (default 5m)`);
  const namespace = namespaceFlag(values.namespace === undefined ? '$POD_NAMESPACE' : '--namespace', values.namespace ?? env.POD_NAMESPACE);
  const probe = values['probe-interval'] ?? 'auto';
  const probeInterval: ProbeInterval = probe === 'auto' ? 'auto' : probe === 'off' ? 0 : parseDuration('--probe-interval', probe);
  const caFile = values['kubelet-ca-file'] as string | undefined;
  const caProblem = caFile === undefined ? undefined : checkCaFile(caFile);
  if (caProblem) throw new UsageError(caProblem);
  const kubeletAddress = values['kubelet-address'] as string | undefined;
  const addressProblem = kubeletAddress === undefined ? undefined : checkKubeletAddress(kubeletAddress);
  if (addressProblem) throw new UsageError(addressProblem);
  let address;
  try { address = parseListenAddress(values['metrics-addr'] as string); } catch (err) { throw new UsageError((err as Error).message); }
  // Log lines carry API server error texts: no control character reaches a terminal or log viewer.
  const log = (line: string): void => void io.stderr.write(`agent: ${stripControls(line)}\n`);

  const metrics = createAgentMetrics(version());
  const probes = new ProbeSchedule(probeInterval);
  let previous: Report | undefined;
  let silence: Silence | undefined;
  const scan = async (cluster: WorkloadSnapshot, node: NodeObject | undefined): Promise<Report> => {
    const collectors = probes.collectorsFor(previous);
    const rules = { ruleLocations: listFlag(values.rules), bundledRules: !values['no-bundled-rules'] };
    const now = silenceOf(node);
    if (silenceChanged(silence, now)) {
      const known = new Set((await loadRuleSet({ ...rules, scope: 'node' })).map((rule) => rule.id));
      const line = describeSilence(now, (id) => known.has(id));
      if (line || silence) log(line || `no rule silenced on this Node (${SILENCE_ANNOTATION} removed or empty)`);
    }
    silence = now;
    previous = await runScan({
      cluster,
      silenced: now.ids,
      hostRoot: values['host-root'] as string,
      ...rules,
      nodeName,
      ...(collectors ? { collectors } : {}),
    });
    return previous;
  };
  // A bad kubeconfig throws KubeConfigError, an InputError (exit 2); anything else wireAgent throws is a bug.
  const agent = wireAgent({
    kubeconfig: values.kubeconfig, nodeName, scan, log, metrics, startupWindowMs,
    dryRunOut: values['dry-run'] ? io.stdout : undefined,
    kubelet: { ...(caFile === undefined ? {} : { caFile }), ...(kubeletAddress === undefined ? {} : { address: kubeletAddress }), insecureTls: values['kubelet-insecure-tls'] === true },
    heartbeat: { periodMs: heartbeatMs, namespace },
    agent: { intervalMs, startupJitterMs: values.once ? 0 : startupJitterMs, once: values.once === true },
  });
  const server = values.once ? undefined : await startMetricsServer(metrics, address, () => agent.ready)
    // The address cannot be listened on (in use, not ours, no permission): the flag's to fix.
    .catch((err: NodeJS.ErrnoException) => { throw err.code ? new UsageError(err.message) : err; });
  if (server) log(`serving /metrics, /healthz, /readyz on ${address.host}:${server.port}`);
  const stop = (): void => { log('stopping: aborting what is in flight (a publish gets a short grace)'); agent.stop(); };
  for (const signal of STOP_SIGNALS) process.once(signal, stop);
  const lastResort = keepServingOnUnhandledRejection(log, () => metrics.countUnhandledRejection());
  try {
    return await agent.run();
  } finally {
    for (const signal of STOP_SIGNALS) process.off(signal, stop);
    lastResort();
    await server?.close();
  }
}
