// `measure pod-startup`: the field reports' before/after test in one command. N pods at once on one
// node, each pod's phases timed as the agent's pod-startup-slo times them, the SLO verdict, and a
// comparison with an earlier run; the namespace is deleted whatever happens (Ctrl-C included).
import { basename } from 'node:path';
import { createInterface } from 'node:readline/promises';
import { TokenBucket } from '../../kube/backoff.ts';
import { KubeClient } from '../../kube/client.ts';
import { compareMeasurements } from '../../measure/compare.ts';
import { PLACEMENTS } from '../../measure/objects.ts';
import type { Measurement } from '../../measure/result.ts';
import { measurePodStartup, type Cleanup, type RunResult } from '../../measure/run.ts';
import { readMeasurement, saveMeasurement } from '../../measure/saved.ts';
import { renderMeasurementPage } from '../../publish/measure-page.ts';
import {
  renderComparisonMarkdown, renderComparisonText, renderMeasurementMarkdown, renderMeasurementText,
} from '../../publish/measure-view.ts';
import { onBrokenPipe } from '../broken-pipe.ts';
import { KUBE_FLAGS, configSourceFrom } from '../kube-flags.ts';
import { ProgressLine } from '../measure-progress.ts';
import { checkWritable, measureShowCommand, writePage } from './measure-show.ts';
import { stripControls, terminalSafe } from '../../text/terminal.ts';
import { EXIT_FINDINGS, EXIT_INPUT, EXIT_OK, UsageError, oneOf, parseDuration, parseFlags, terminalWidth, type Io } from '../io.ts';

export const EXIT_TIMEOUT = 4;
const EXIT_SIGNAL: Record<string, number> = { SIGHUP: 129, SIGINT: 130, SIGTERM: 143, SIGPIPE: 141 };
const MAX_PODS = 1000;

export const MEASURE_USAGE = `Usage: node-tuning-advisor measure pod-startup --node NODE [flags]
       node-tuning-advisor measure show SAVED.json [--compare OTHER.json] [--html FILE]

Creates N pods at once on one node in a temporary namespace and times each from its create request
to Running and Ready received through the watch (what a user observes; the SLO's definition). The
phases (scheduling, initialization, creation, readiness) are the kubelet's own view; "status write"
is its Ready stamp → the API showing it: a long one is the kubelet's client throttling, said so.
Prints p50/p90/p99/max, the SLO verdict (p99 creation → Ready < 5 s) and whether the run is valid
(clock skew, lost watch events, errors), then deletes the namespace - also on failure, timeout,
Ctrl-C and a closed pipe. Measure, change one setting, measure again with --compare.

Flags:
  --node NODE                the node to measure (required)
  --pods N                   pods created at once (default 100, at most ${MAX_PODS})
  --image IMAGE              the pods' image (default: the pause image the node already holds)
  --placement MODE           scheduler (default): required node affinity on the node's name, so the
                             scheduler's part is measured; node-name: spec.nodeName, bypassing it
  --pvc-storage-class NAME   give each pod a fresh PVC of this StorageClass (attach-based storage)
  --pvc-size SIZE            size of each PVC (default 1Gi)
  --timeout DURATION         stop waiting after this long and report what finished (default: 2m, or
                             0.5 s per pod above 240 pods: twice what a kubelet at 5/10 client limits
                             takes for its two status writes per pod)
  --cleanup-wait DURATION    after deleting the namespace, wait this long for the pods to be gone
                             (default 60s; 0s: do not wait)
  --save FILE                write the result as JSON (for a later --compare)
  --compare FILE             compare with a result saved earlier: before → after per phase, and
                             which advisor facts (HZ, governor, tuned, client QPS) changed
  --html FILE                also write the run as a page: the verdict, the distribution of total
                             start-up against the SLO, a waterfall with one row per pod (with
                             --compare, both runs on one scale); see measure show --help
  --output FORMAT            table (default), json, markdown
  --delete-leftovers         delete namespaces left by interrupted runs without asking
  --kubeconfig FILE          kubeconfig to use (default: $KUBECONFIG, ~/.kube/config, or in-cluster)
  --context NAME             kubeconfig context to use (default: its current-context)
  -h, --help                 this help

Permissions: the ClusterRole in manifests/measure/clusterrole.yaml (namespaces, pods, the node).
Exit codes: 0 SLO met; 1 SLO missed; 2 bad flags, node missing or not Ready, missing permission;
4 timed out (what finished is reported); 130 / 143 interrupted (after cleaning up); 141 the
output pipe was closed (after cleaning up).
`;

interface Settings {
  node: string;
  pods: number;
  image?: string;
  placement: (typeof PLACEMENTS)[number];
  pvcStorageClass?: string;
  pvcSize: string;
  timeoutMs: number;
  cleanupWaitMs: number;
  save?: string;
  compare?: string;
  html?: string;
  output: 'table' | 'json' | 'markdown';
  deleteLeftovers: boolean;
  kubeconfig?: string;
  context?: string;
}

/**
 * 2 min, or 0.5 s per pod for more than 240: a kubelet at the old default client limits (5/10)
 * writes two statuses per pod at 5 per second, ~0.4 s a pod (100 pods: ~45 s); twice that is
 * enough for the slow case to finish and short enough that a stuck run ends in minutes.
 */
export function defaultTimeoutMs(pods: number): number {
  return Math.max(120_000, pods * 500);
}

function settingsFrom(args: string[]): Settings | undefined {
  const { values, positionals } = parseFlags(args, {
    node: { type: 'string' }, pods: { type: 'string', default: '100' }, image: { type: 'string' },
    placement: { type: 'string' }, 'pvc-storage-class': { type: 'string' }, 'pvc-size': { type: 'string', default: '1Gi' },
    timeout: { type: 'string' }, 'cleanup-wait': { type: 'string', default: '60s' }, save: { type: 'string' }, compare: { type: 'string' }, html: { type: 'string' },
    output: { type: 'string', short: 'o' }, 'delete-leftovers': { type: 'boolean' }, ...KUBE_FLAGS,
  }, 'measure pod-startup');
  if (values.help) return undefined;
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"; flags start with --`);
  if (!values.node) throw new UsageError('--node is required: the node to measure (kubectl get nodes)');
  const pods = Number(values.pods);
  if (!/^\d+$/.test(values.pods as string) || pods < 1 || pods > MAX_PODS) throw new UsageError(`--pods must be a whole number from 1 to ${MAX_PODS} (got "${values.pods}")`);
  if (!/^\d+(\.\d+)?(Ki|Mi|Gi|Ti|k|M|G|T)?$/.test(values['pvc-size'] as string)) throw new UsageError(`--pvc-size "${values['pvc-size']}" is not a size; use e.g. 1Gi or 100Mi`);
  if (values.image !== undefined && (values.image === '' || /\s/.test(values.image))) throw new UsageError('--image must be an image reference such as registry.k8s.io/pause:3.10');
  return {
    node: values.node, pods, placement: oneOf('--placement', values.placement, PLACEMENTS, 'scheduler'),
    pvcSize: values['pvc-size'] as string,
    timeoutMs: values.timeout === undefined ? defaultTimeoutMs(pods) : parseDuration('--timeout', values.timeout),
    cleanupWaitMs: parseDuration('--cleanup-wait', values['cleanup-wait'] as string, { allowZero: true }),
    output: oneOf('--output', values.output, ['table', 'json', 'markdown'] as const, 'table'),
    deleteLeftovers: values['delete-leftovers'] === true,
    ...(values.image !== undefined ? { image: values.image } : {}),
    ...(values['pvc-storage-class'] !== undefined ? { pvcStorageClass: values['pvc-storage-class'] } : {}),
    ...(values.save !== undefined ? { save: values.save } : {}),
    ...(values.compare !== undefined ? { compare: values.compare } : {}),
    ...(values.html !== undefined ? { html: values.html } : {}),
    ...(values.kubeconfig !== undefined ? { kubeconfig: values.kubeconfig } : {}),
    ...(values.context !== undefined ? { context: values.context } : {}),
  };
}

/**
 * SIGINT/SIGTERM/SIGHUP: the first stops the run (cleanup follows), the second stops waiting for the
 * cleanup. A dropped SSH session is a SIGHUP and a terminal that answers writes with EIO; a closed
 * output pipe (EPIPE on stdout or stderr) stops the run the same way: nobody reads the result any
 * more, but the namespace and its pods must still go.
 */
function interrupts(io: Io): { run: AbortController; cleanup: AbortController; signal(): string | undefined; dispose(): void } {
  const run = new AbortController();
  const cleanup = new AbortController();
  let received: string | undefined;
  const on = (name: string) => (): void => {
    if (!run.signal.aborted) {
      received = name;
      io.stderr.write(`\n${name}: stopping and cleaning up (${name === 'SIGINT' ? 'Ctrl-C' : name} again to stop waiting for the cleanup)\n`);
      run.abort();
    } else cleanup.abort();
  };
  // No SIGPIPE listener: Node ignores the signal, so a closed pipe arrives as EPIPE; a listener,
  // once removed, would restore the default action and kill the process at its next write.
  const handlers = { SIGINT: on('SIGINT'), SIGTERM: on('SIGTERM'), SIGHUP: on('SIGHUP') };
  for (const [name, handler] of Object.entries(handlers)) process.on(name, handler);
  const offPipe = onBrokenPipe(() => { if (!run.signal.aborted) { received = 'SIGPIPE'; run.abort(); } });
  return {
    run, cleanup, signal: () => received,
    dispose: () => {
      offPipe();
      for (const [name, handler] of Object.entries(handlers)) process.off(name, handler);
    },
  };
}

/** yes/no on the terminal; Ctrl-C there (readline reads it as a key, not a signal) interrupts as anywhere else. */
async function confirmOnTerminal(io: Io, question: string): Promise<boolean> {
  const rl = createInterface({ input: io.stdin as NodeJS.ReadableStream, output: io.stderr });
  const asked = new AbortController();
  rl.on('SIGINT', () => { asked.abort(); process.emit('SIGINT', 'SIGINT'); });
  try {
    return /^y(es)?$/i.test((await rl.question(question, { signal: asked.signal })).trim());
  } catch {
    return false;
  } finally {
    rl.close();
  }
}

function cleanupLine(c: Cleanup): string | undefined {
  if (c.namespace === undefined) return undefined;
  if (c.problem) return c.problem;
  if (c.podsLeft === 0) return `namespace ${c.namespace} deleted, its pods gone`;
  return `namespace ${c.namespace} is being deleted; ${c.podsLeft} pod${c.podsLeft === 1 ? '' : 's'} still stopping (the kubelet confirms each; if the node is down: kubectl delete pods -n ${c.namespace} --all --grace-period=0 --force)`;
}

async function render(io: Io, s: Settings, m: Measurement, before: Measurement | undefined): Promise<void> {
  const comparison = before ? compareMeasurements(before, m) : undefined;
  const width = terminalWidth(io);
  if (s.output === 'json') io.stdout.write(`${JSON.stringify(comparison ? { ...m, comparison } : m, null, 2)}\n`);
  else if (s.output === 'markdown') io.stdout.write(renderMeasurementMarkdown(m) + (comparison ? renderComparisonMarkdown(comparison, s.compare as string) : ''));
  else io.stdout.write(renderMeasurementText(m, width) + (comparison ? renderComparisonText(comparison, s.compare as string, width) : ''));
  if (s.html === undefined) return;
  const runs = [...(before ? [{ label: basename(s.compare as string), measurement: before }] : []), { label: before ? 'this run' : `run on ${m.node}`, measurement: m }];
  await writePage(s.html, renderMeasurementPage(runs, comparison));
}

export async function measureCommand(args: string[], io: Io): Promise<number> {
  const [what, ...rest] = args;
  if (what === undefined || what === '--help' || what === '-h') {
    io.stdout.write(MEASURE_USAGE);
    return what === undefined ? EXIT_INPUT : EXIT_OK;
  }
  if (what === 'show') return measureShowCommand(rest, io);
  if (what !== 'pod-startup') throw new UsageError(`unknown measurement "${what}"; there are: measure pod-startup, measure show`);
  const s = settingsFrom(rest);
  if (s === undefined) {
    io.stdout.write(MEASURE_USAGE);
    return EXIT_OK;
  }
  const before = s.compare !== undefined ? terminalSafe(await readMeasurement(s.compare)) : undefined;
  if (s.save !== undefined) await checkWritable('--save', s.save);
  if (s.html !== undefined) await checkWritable('--html', s.html);
  const failed: Measurement['api']['failed'] = [];
  let client: KubeClient;
  // A bad kubeconfig throws KubeConfigError, an InputError (exit 2); anything else is a bug.
  client = KubeClient.fromSource(configSourceFrom(s, io.env), {
    limiter: new TokenBucket(1000, 2 * s.pods + 50), userAgent: 'node-tuning-advisor/measure',
    onRequest: (r) => { if (!/^2\d\d$/.test(r.code) && r.code !== 'stopped' && failed.length < 50) failed.push({ verb: r.verb, resource: r.resource, code: r.code }); },
  });
  const stops = interrupts(io);
  const progress = new ProgressLine(io.stderr as NodeJS.WritableStream & { isTTY?: boolean; columns?: number });
  const interactive = (io.stdin as { isTTY?: boolean } | undefined)?.isTTY === true && (io.stderr as { isTTY?: boolean }).isTTY === true;
  let result: RunResult;
  try {
    result = await measurePodStartup(client, {
      node: s.node, pods: s.pods, placement: s.placement, pvcSize: s.pvcSize, timeoutMs: s.timeoutMs, cleanupWaitMs: s.cleanupWaitMs,
      leftovers: s.deleteLeftovers ? 'delete' : interactive ? 'ask' : 'keep',
      ...(s.image !== undefined ? { image: s.image } : {}),
      ...(s.pvcStorageClass !== undefined ? { pvcStorageClass: s.pvcStorageClass } : {}),
    }, {
      signal: stops.run.signal, cleanupSignal: stops.cleanup.signal,
      notice: (line) => progress.note(stripControls(line)),
      progress: (p) => progress.update(p),
      ...(interactive ? { confirm: (q: string) => { progress.clear(); return confirmOnTerminal(io, q); } } : {}),
      apiFailures: () => [...failed],
    });
  } catch (error) {
    if (stops.run.signal.aborted) {
      io.stderr.write('interrupted before anything was created\n');
      return EXIT_SIGNAL[stops.signal() ?? 'SIGINT'] ?? 130;
    }
    throw error;
  } finally {
    progress.clear();
    stops.dispose();
    await client.stop();
  }
  const cleanup = cleanupLine(result.cleanup);
  if (result.outcome === 'interrupted') {
    io.stderr.write(cleanup ? `interrupted; ${stripControls(cleanup)}\n` : 'interrupted before anything was created\n');
    return EXIT_SIGNAL[stops.signal() ?? 'SIGINT'] ?? 130;
  }
  const measurement = terminalSafe(result.measurement);
  if (s.save !== undefined) await saveMeasurement(s.save, measurement);
  await render(io, s, measurement, before);
  if (cleanup) io.stderr.write(`${stripControls(cleanup)}\n`);
  if (measurement.outcome === 'timeout') return EXIT_TIMEOUT;
  return measurement.slo.met ? EXIT_OK : EXIT_FINDINGS;
}
