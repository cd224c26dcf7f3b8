// CSI controller sidecars (cluster.csi.<sidecar>.*): the workloads that run them, their versions,
// drivers and client limits (from the pod templates), and client-side throttling lines in the
// recent logs of a few of their running pods (seed 002's symptom).
import type { FactSet } from '../facts/fact-set.ts';
import type { ApiResult } from './api.ts';
import { describeWait, flagValue, imageParts, tallyLog } from './logs.ts';
import { SIDECAR_NAMES, SIDECARS, untrustedText, workloadLabel, type Container, type Found, type Sidecar, type Workload } from './workloads.ts';

export { SIDECARS, type Sidecar } from './workloads.ts';

/** Images that are helpers, not the driver, when naming a controller pod's driver. */
const HELPERS = /^(csi-[a-z-]+|livenessprobe|.*node-driver-registrar|.*snapshot-controller)$/;
/** Log tails read per sidecar kind: a controller runs 1–3 replicas; more would be per-node plugins. */
export const MAX_PODS_PER_SIDECAR = 5;
/** client-go's default for these sidecars' --kube-api-qps / --kube-api-burst. */
const DEFAULT_QPS = 5;
const DEFAULT_BURST = 10;

export interface SidecarInstance {
  sidecar: Sidecar;
  workload: Workload;
  container: string;
  version: string;
  driver: string;
  qps: number;
  burst: number;
}

/** One container's log tail, named "namespace/pod container"; failed reads say why. */
export interface LabelledLog { label: string; log: ApiResult<string> }

function driverOf(containers: Container[]): string {
  const driver = containers.map((c) => ({ c, image: imageParts(c.image) })).find(({ image }) => !HELPERS.test(image.name));
  return driver ? `${driver.c.name} (${driver.image.name}:${driver.image.tag})` : 'unknown driver';
}

/** The sidecars a workload's pod template runs, with their versions and client limits. */
export function sidecarInstances(workload: Workload): SidecarInstance[] {
  return workload.containers.flatMap((container): SidecarInstance[] => {
    const image = imageParts(container.image);
    const sidecar = SIDECAR_NAMES.find((s) => SIDECARS[s] === image.name);
    if (!sidecar) return [];
    return [{
      sidecar, workload, container: container.name, version: image.tag, driver: driverOf(workload.containers),
      qps: Number(flagValue(container.args, 'kube-api-qps') ?? DEFAULT_QPS), burst: Number(flagValue(container.args, 'kube-api-burst') ?? DEFAULT_BURST),
    }];
  });
}

/**
 * Throttled-request count over the logs read. Decided when a line was found, or when every log was
 * read; a log that could not be read never turns into "0 throttled".
 */
export function throttleFacts(facts: FactSet, prefix: string, reads: LabelledLog[], window: string): void {
  const failed = reads.filter((r) => !r.log.ok);
  let count = 0;
  let maxWaitMs = 0;
  const lines: string[] = [];
  for (const { label, log } of reads) {
    if (!log.ok) continue;
    const tally = tallyLog(log.value);
    count += tally.count;
    maxWaitMs = Math.max(maxWaitMs, tally.maxWaitMs);
    lines.push(`${label}: ${tally.count}${tally.count > 0 ? ` (longest ${describeWait(tally.maxWaitMs)})` : ''}`);
  }
  const source = `api:pods/log (${window})`;
  const failures = failed.map((r) => `${r.label}: ${r.log.ok ? '' : r.log.reason}`);
  if (count === 0 && (failed.length > 0 || reads.length === 0)) {
    const why = reads.length === 0 ? 'no log read' : `cannot read ${failed.length} log(s): ${failures.join('; ')}`;
    facts.unknown(`${prefix}.throttled`, why, source);
    facts.unknown(`${prefix}.maxWaitMs`, 'logs not read', source);
    return;
  }
  const detail = [...lines, ...failures.map((f) => `unread ${f}`)].join('; ');
  facts.set(`${prefix}.throttled`, count, source, detail);
  facts.set(`${prefix}.maxWaitMs`, Math.round(maxWaitMs), source);
}

export interface SidecarLogs {
  /** Per sidecar: the log tails read, and workloads whose pods could not be read (as failed reads). */
  reads: Record<Sidecar, LabelledLog[]>;
}

const WORKLOADS = 'api:deployments,statefulsets,daemonsets';

/**
 * `found`: the CSI workloads, or why the workload lists failed (when none was found). Only trusted
 * workloads (identity.ts) decide; how sure that is goes into the facts: `present` is `inferred` when
 * every instance is trusted by its ServiceAccount's binding rather than its namespace.
 */
export function sidecarFacts(facts: FactSet, found: ApiResult<Found>, logs: SidecarLogs, window: string): void {
  for (const sidecar of SIDECAR_NAMES) {
    const prefix = `cluster.csi.${sidecar}`;
    if (!found.ok) {
      facts.unknown(`${prefix}.present`, `cannot list workloads: ${found.reason}`);
      continue;
    }
    const instances = found.value.trusted.flatMap(sidecarInstances).filter((i) => i.sidecar === sidecar);
    const lookalikes = found.value.untrusted;
    if (instances.length === 0 && lookalikes.count > 0) {
      facts.unknown(`${prefix}.present`, untrustedText(lookalikes, `an image named ${SIDECARS[sidecar]}`), WORKLOADS);
      continue;
    }
    const verified = instances.some((i) => i.workload.identity.level === 'verified');
    const ignored = lookalikes.count > 0 ? `; ${lookalikes.count} look-alike workload(s) elsewhere not used` : '';
    facts.set(`${prefix}.present`, instances.length > 0, instances.length === 0 || verified ? WORKLOADS : 'inferred',
      instances.length > 0 ? `${instances.length} workload container(s) running ${SIDECARS[sidecar]}${ignored}` : `no workload runs ${SIDECARS[sidecar]}`);
    if (instances.length === 0) continue;
    facts.set(`${prefix}.instances`, instances.map((i) => `${workloadLabel(i.workload)}: ${SIDECARS[sidecar]}:${i.version}, driver ${i.driver}, QPS ${i.qps}/burst ${i.burst} (${i.workload.identity.level}: ${i.workload.identity.why})`), WORKLOADS);
    facts.set(`${prefix}.versions`, [...new Set(instances.map((i) => i.version))].sort(), WORKLOADS);
    facts.set(`${prefix}.drivers`, [...new Set(instances.map((i) => i.driver))].sort(), WORKLOADS);
    facts.set(`${prefix}.kubeAPIQPS`, Math.min(...instances.map((i) => i.qps)), WORKLOADS, '--kube-api-qps (default 5)');
    throttleFacts(facts, prefix, logs.reads[sidecar], window);
  }
}
