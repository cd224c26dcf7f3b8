// The run's data turned into the Measurement: phase percentiles over the Ready pods, the SLO verdict
// over all created pods, the slowest pods, why the others are not Ready, attach latency from the same
// tracker the agent uses, and what the advisor said about the node at the start.
import type { AdvisorSnapshot } from './advisor.ts';
import type { PodFollower } from './follow.ts';
import type { PodPlan } from './objects.ts';
import {
  MEASUREMENT_KIND, MEASUREMENT_SCHEMA_VERSION, phaseStats, phaseTable, slowestPods, sloVerdict, type Measurement, type NotReadyGroup, type PhaseStats,
} from './result.ts';
import { kubeletVersionOf } from '../workload/state.ts';
import { validity } from './pod-sample.ts';
import type { Obj } from '../kube/objects.ts';

/** What the run knew before the first pod: used to describe it in the result. */
export interface Context {
  options: { node: string; pods: number; timeoutMs: number; serviceAccountWaitMs?: number; cleanupWaitMs?: number };
  plan: PodPlan;
  node: Obj;
  imageSource: Measurement['settings']['imageSource'];
  cluster: { version: string } | { unknown: string };
  advisor: AdvisorSnapshot;
}

export interface Ending {
  namespace: string;
  outcome: Measurement['outcome'];
  burstAt: number;
  finishedAt: number;
  createErrors: Map<string, { pods: number; example: string }>;
  /** Image pull time per pod, from its Pulled event. */
  pulls?: ReadonlyMap<string, number>;
  requests?: number;
  failedRequests?: number;
}

/** Status delays up to this are the stamps' whole-second precision plus a prompt write. */
const PROMPT_WRITE_MS = 1_500;

/** The sentence that names client throttling when the pods waited for the kubelet's status writes. */
export function throttlingNote(delay: PhaseStats, advisor: AdvisorSnapshot): string | undefined {
  if (delay.p50Ms === null || delay.p50Ms < PROMPT_WRITE_MS) return undefined;
  const qps = advisor.facts['kubelet.kubeAPIQPS'];
  const burst = advisor.facts['kubelet.kubeAPIBurst'];
  const limits = qps && burst && 'value' in qps && 'value' in burst && qps.value !== null ? ` (the advisor reads ${String(qps.value)}/${String(burst.value)})` : '';
  return `the kubelet had the pods Ready a median ${(delay.p50Ms / 1000).toFixed(1)} s (p99 ${((delay.p99Ms ?? 0) / 1000).toFixed(1)} s) before the API showed it: ` +
    `its status writes waited in its API client's rate limiter - client throttling; raise the kubelet's --kube-api-qps/--kube-api-burst${limits}`;
}

function attachStats(follower: PodFollower): PhaseStats {
  const w = follower.state.attach.window;
  // The run's window is unbounded (every attach of the run counts): any moment reads all of them.
  const now = Date.now();
  const at = (p: number): number | null => { const v = w.percentile(p, now); return v === null ? null : Math.round(v); };
  return { samples: w.size(now), p50Ms: at(50), p90Ms: at(90), p99Ms: at(99), maxMs: at(100) };
}

export function buildMeasurement(ctx: Context, follower: PodFollower, end: Ending): Measurement {
  const counts = follower.counts();
  const kubeletVersion = kubeletVersionOf(ctx.node.status?.nodeInfo?.kubeletVersion);
  const samples = follower.samples(end.pulls, kubeletVersion);
  const phases = phaseTable(samples);
  const statusDelay = phaseStats(samples.map((s) => s.statusDelayMs ?? 0));
  const throttling = throttlingNote(statusDelay, ctx.advisor);
  const failedToCreate = [...end.createErrors.values()].reduce((sum, g) => sum + g.pods, 0);
  const createErrors: NotReadyGroup[] = [...end.createErrors].map(([reason, g]) => ({ reason, pods: g.pods, example: g.example }));
  return {
    schemaVersion: MEASUREMENT_SCHEMA_VERSION,
    kind: MEASUREMENT_KIND,
    node: ctx.options.node,
    namespace: end.namespace,
    clusterVersion: 'version' in ctx.cluster ? ctx.cluster.version : null,
    ...('unknown' in ctx.cluster ? { clusterVersionUnknown: ctx.cluster.unknown } : {}),
    kubeletVersion,
    startedAt: new Date(end.burstAt).toISOString(),
    finishedAt: new Date(end.finishedAt).toISOString(),
    settings: {
      pods: ctx.options.pods, image: ctx.plan.image, imageSource: ctx.imageSource, placement: ctx.plan.placement,
      pvcStorageClass: ctx.plan.pvcStorageClass ?? null, timeoutSeconds: Math.round(ctx.options.timeoutMs / 1000),
    },
    outcome: end.outcome,
    counts: { requested: ctx.options.pods, created: counts.created, ready: samples.length, notReady: counts.created - samples.length, failedToCreate },
    phases,
    attach: ctx.plan.pvcStorageClass !== undefined ? attachStats(follower) : null,
    slo: sloVerdict(samples, counts.created, phases, statusDelay),
    statusDelay,
    ...(throttling ? { throttling } : {}),
    validity: validity({
      timelines: follower.timelines.all(), samples, requested: ctx.options.pods, failedCreates: failedToCreate,
      requests: end.requests ?? 0, failedRequests: end.failedRequests ?? 0,
    }),
    slowest: slowestPods(samples),
    notReady: follower.notReady(),
    createErrors,
    samples,
    advisor: ctx.advisor,
    api: { requests: 0, failed: [] },
  };
}

