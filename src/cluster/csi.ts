// CSI controller sidecars (cluster.csi.<sidecar>.*): where they run, their versions and client
// limits, and client-side throttling lines in their recent logs (seed 002's symptom).
import type { FactSet } from '../facts/fact-set.ts';
import type { ApiResult } from './api.ts';
import { containerArgs, describeWait, flagValue, imageParts, tallyLog } from './logs.ts';

type Obj = Record<string, any>;

export const SIDECARS = {
  'external-provisioner': 'csi-provisioner',
  'external-attacher': 'csi-attacher',
  'external-resizer': 'csi-resizer',
} as const;
export type Sidecar = keyof typeof SIDECARS;

/** Images that are helpers, not the driver, when naming a controller pod's driver. */
const HELPERS = /^(csi-[a-z-]+|livenessprobe|.*node-driver-registrar|.*snapshot-controller)$/;
/** Log tails read per sidecar kind: a controller runs 1–3 replicas; more would be per-node plugins. */
export const MAX_PODS_PER_SIDECAR = 5;
/** client-go's default for these sidecars' --kube-api-qps / --kube-api-burst. */
const DEFAULT_QPS = 5;
const DEFAULT_BURST = 10;

export interface SidecarInstance {
  sidecar: Sidecar;
  namespace: string;
  pod: string;
  container: string;
  version: string;
  driver: string;
  qps: number;
  burst: number;
}

export interface LogRead { instance: SidecarInstance; log: ApiResult<string> }
/** One container's log tail, named "namespace/pod container". */
export interface LabelledLog { label: string; log: ApiResult<string> }

export function labelled({ instance, log }: LogRead): LabelledLog {
  return { label: `${instance.namespace}/${instance.pod} ${instance.container}`, log };
}

function driverOf(pod: Obj): string {
  const driver = (pod.spec?.containers ?? []).map((c: Obj) => ({ c, image: imageParts(String(c.image ?? '')) }))
    .find(({ image }: { image: { name: string } }) => !HELPERS.test(image.name));
  return driver ? `${driver.c.name} (${driver.image.name}:${driver.image.tag})` : 'unknown driver';
}

export function findSidecars(pods: Obj[]): SidecarInstance[] {
  const found: SidecarInstance[] = [];
  for (const pod of pods) {
    for (const container of pod.spec?.containers ?? []) {
      const image = imageParts(String(container.image ?? ''));
      const sidecar = (Object.keys(SIDECARS) as Sidecar[]).find((s) => SIDECARS[s] === image.name);
      if (!sidecar) continue;
      const args = containerArgs(container);
      found.push({
        sidecar, namespace: pod.metadata.namespace, pod: pod.metadata.name, container: container.name, version: image.tag,
        driver: driverOf(pod), qps: Number(flagValue(args, 'kube-api-qps') ?? DEFAULT_QPS), burst: Number(flagValue(args, 'kube-api-burst') ?? DEFAULT_BURST),
      });
    }
  }
  return found.sort((a, b) => `${a.namespace}/${a.pod}`.localeCompare(`${b.namespace}/${b.pod}`));
}

/** The instances whose logs are read: at most MAX_PODS_PER_SIDECAR of each kind. */
export function instancesToRead(instances: SidecarInstance[]): SidecarInstance[] {
  return (Object.keys(SIDECARS) as Sidecar[]).flatMap((s) => instances.filter((i) => i.sidecar === s).slice(0, MAX_PODS_PER_SIDECAR));
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
  if (count === 0 && failed.length > 0) {
    facts.unknown(`${prefix}.throttled`, `cannot read ${failed.length} log(s): ${failures.join('; ')}`, source);
    facts.unknown(`${prefix}.maxWaitMs`, 'logs not read', source);
    return;
  }
  const detail = [...lines, ...failures.map((f) => `unread ${f}`)].join('; ');
  facts.set(`${prefix}.throttled`, count, source, detail);
  facts.set(`${prefix}.maxWaitMs`, Math.round(maxWaitMs), source);
}

export function sidecarFacts(facts: FactSet, pods: ApiResult<Obj[]>, reads: LogRead[], window: string): void {
  for (const sidecar of Object.keys(SIDECARS) as Sidecar[]) {
    const prefix = `cluster.csi.${sidecar}`;
    if (!pods.ok) {
      facts.unknown(`${prefix}.present`, `cannot list Pods: ${pods.reason}`);
      continue;
    }
    const instances = findSidecars(pods.value).filter((i) => i.sidecar === sidecar);
    facts.set(`${prefix}.present`, instances.length > 0, 'api:pods', instances.length > 0 ? `${instances.length} container(s) running ${SIDECARS[sidecar]}` : `no ${SIDECARS[sidecar]} container`);
    if (instances.length === 0) continue;
    facts.set(`${prefix}.instances`, instances.map((i) => `${i.namespace}/${i.pod}: ${SIDECARS[sidecar]}:${i.version}, driver ${i.driver}, QPS ${i.qps}/burst ${i.burst}`), 'api:pods');
    facts.set(`${prefix}.versions`, [...new Set(instances.map((i) => i.version))].sort(), 'api:pods');
    facts.set(`${prefix}.drivers`, [...new Set(instances.map((i) => i.driver))].sort(), 'api:pods');
    facts.set(`${prefix}.kubeAPIQPS`, Math.min(...instances.map((i) => i.qps)), 'api:pods', '--kube-api-qps (default 5)');
    throttleFacts(facts, prefix, reads.filter((r) => r.instance.sidecar === sidecar).map(labelled), window);
  }
}
