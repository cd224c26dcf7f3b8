// Two labels on the Node for `kubectl get nodes -L` and kube-state-metrics' kube_node_labels (its
// --metric-labels-allowlist): the grade and how many critical rules fail. Values only from a fixed
// set (a grade letter, a count), so a label selector can use them (`-l node-tuning-advisor.io/grade=F`)
// and the admission policy can admit exactly these keys and values.
import type { Report } from '../report/types.ts';
import { ANNOTATION_PREFIX } from './annotations.ts';

export const GRADE_LABEL = `${ANNOTATION_PREFIX}grade`;
export const CRITICAL_FAILING_LABEL = `${ANNOTATION_PREFIX}critical-failing`;
export const ADVISOR_LABELS = [GRADE_LABEL, CRITICAL_FAILING_LABEL];
/** The policy admits up to 3 digits; more than that is shown as 999. */
const MAX_COUNT = 999;

export type LabelPatch = Record<string, string | null>;

export function renderLabels(report: Report): Record<string, string> {
  const critical = report.findings.filter((f) => f.status === 'fail' && f.severity === 'critical').length;
  return { [GRADE_LABEL]: report.grade, [CRITICAL_FAILING_LABEL]: String(Math.min(critical, MAX_COUNT)) };
}

/** The merge patch that makes our labels `desired` (others untouched), undefined when they already are. */
export function diffLabels(desired: Record<string, string>, current: Record<string, string> | undefined): LabelPatch | undefined {
  const patch: LabelPatch = {};
  for (const key of ADVISOR_LABELS) {
    const want = desired[key] ?? null;
    if ((current?.[key] ?? null) !== want) patch[key] = want;
  }
  return Object.keys(patch).length > 0 ? patch : undefined;
}
