// Measurement objects shaped like src/measure/result.ts, for compare, save and view tests.
import { PUBLISHED_FACTS } from '../../src/wire/summary-facts.ts';
import type { RecordedFact } from '../../src/measure/advisor.ts';
import { phaseStats, phaseTable, sloVerdict, slowestPods, type Measurement, type PodSample } from '../../src/measure/result.ts';

/** Pods whose phases are the given milliseconds, each as [scheduling, initialization, creation, readiness, statusDelay = 0]. */
export function samples(rows: ([number, number, number, number] | [number, number, number, number, number])[]): PodSample[] {
  return rows.map(([scheduling, initialization, creation, readiness, statusDelayMs = 0], i) => ({
    pod: `pod-startup-${String(i).padStart(3, '0')}`,
    phases: { scheduling, initialization, creation, readiness, total: scheduling + initialization + creation + readiness + statusDelayMs },
    statusDelayMs,
  }));
}

export function measurement(pods: PodSample[], overrides: Partial<Measurement> & { facts?: Record<string, RecordedFact> } = {}): Measurement {
  const { facts = {}, ...rest } = overrides;
  const phases = phaseTable(pods);
  const statusDelay = phaseStats(pods.map((p) => p.statusDelayMs ?? 0));
  const allFacts = Object.fromEntries(PUBLISHED_FACTS.map((k) => [k, facts[k] ?? { unknown: 'not published' }])) as Measurement['advisor']['facts'];
  return {
    schemaVersion: 1, kind: 'PodStartupMeasurement', node: 'worker-1', namespace: 'nta-measure-abcde',
    clusterVersion: 'v1.36.2', kubeletVersion: 'v1.36.2', startedAt: '2026-12-01T10:00:00.000Z', finishedAt: '2026-12-01T10:00:09.000Z',
    settings: { pods: pods.length, image: 'registry.k8s.io/pause:3.10', imageSource: 'node', placement: 'scheduler', pvcStorageClass: null, timeoutSeconds: 600 },
    outcome: 'complete',
    counts: { requested: pods.length, created: pods.length, ready: pods.length, notReady: 0, failedToCreate: 0 },
    phases, statusDelay, attach: null, slo: sloVerdict(pods, pods.length, phases, statusDelay), slowest: slowestPods(pods), notReady: [], createErrors: [], samples: pods,
    advisor: { state: 'ok', score: 73, grade: 'C', facts: allFacts },
    api: { requests: 120, failed: [] },
    ...rest,
  };
}
