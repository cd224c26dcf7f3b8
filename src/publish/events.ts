// Node Events for transitions only. The previous state is read from the report annotation already
// on the Node, so a restarted agent (no memory) neither repeats nor misses an Event.
import type { EventObject } from '../kube/objects.ts';
import type { Finding, Report, Severity } from '../report/types.ts';
import { findingLine } from './finding-line.ts';
import { oneLine } from '../text/controls.ts';
import { truncateBytes } from './text-bytes.ts';
import { byCodePoint } from '../order.ts';

export const REPORTING_COMPONENT = 'node-tuning-advisor';
/** Node Events live in "default", where kubelet writes them; `kubectl describe node` searches all namespaces. */
export const EVENT_NAMESPACE = 'default';
export const REASON_RECOMMENDATION = 'TuningRecommendation';
export const REASON_RESOLVED = 'TuningResolved';
/** Events have no 138-byte cut; this keeps "want …" in the message while it stays one readable line. */
const MAX_MESSAGE_BYTES = 300;

export interface Transition {
  reason: typeof REASON_RECOMMENDATION | typeof REASON_RESOLVED;
  type: 'Warning' | 'Normal';
  ruleId: string;
  message: string;
}

/**
 * A rule that fails now and did not before → Warning; one that failed before and now passes, is
 * not applicable or is gone from the rule set → Normal. A rule turning unknown sends nothing:
 * we do not know that it was fixed.
 */
export function transitions(previouslyFailing: Map<string, Severity>, report: Report): Transition[] {
  const byId = new Map(report.findings.map((f) => [f.ruleId, f]));
  const out: Transition[] = [];
  for (const finding of report.findings) {
    if (finding.status === 'fail' && !previouslyFailing.has(finding.ruleId)) out.push(recommendation(finding));
  }
  for (const [ruleId, severity] of [...previouslyFailing].sort(([a], [b]) => byCodePoint(a, b))) {
    const now = byId.get(ruleId);
    if (now === undefined) out.push(resolved(ruleId, `${severity} rule ${ruleId} is no longer in the rule set`));
    else if (now.status === 'pass' || now.status === 'not-applicable') {
      const observed = now.observed ? `: ${oneLine(now.observed)}` : '';
      out.push(resolved(ruleId, `${ruleId} passes now${observed}`));
    }
  }
  return out;
}

/** One line: what failed, against what, and the rule's short fix (its full fix is in `explain`); an info rule's is Normal. */
function recommendation(finding: Finding): Transition {
  return { reason: REASON_RECOMMENDATION, type: finding.severity === 'info' ? 'Normal' : 'Warning', ruleId: finding.ruleId, message: findingLine(finding, MAX_MESSAGE_BYTES) };
}

function resolved(ruleId: string, message: string): Transition {
  return { reason: REASON_RESOLVED, type: 'Normal', ruleId, message: truncateBytes(message, MAX_MESSAGE_BYTES) };
}

export interface NodeRef {
  name: string;
  uid?: string;
}

/** A core/v1 Event on the Node, as kubelet writes them (what `kubectl describe node` lists). */
export function eventObject(transition: Transition, node: NodeRef, now: Date, suffix: string): EventObject {
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: `${node.name}.${suffix}`, namespace: EVENT_NAMESPACE },
    involvedObject: { apiVersion: 'v1', kind: 'Node', name: node.name, uid: node.uid ?? node.name },
    reason: transition.reason,
    type: transition.type,
    message: transition.message,
    source: { component: REPORTING_COMPONENT, host: node.name },
    reportingComponent: REPORTING_COMPONENT,
    reportingInstance: node.name,
    action: transition.reason === REASON_RECOMMENDATION ? 'Recommend' : 'Resolve',
    firstTimestamp: now.toISOString(),
    lastTimestamp: now.toISOString(),
    count: 1,
  };
}
