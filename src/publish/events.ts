// Node Events for real transitions only: a rule that starts failing (Warning) and one that failed and
// now passes or no longer applies (TuningResolved). Undecided is no transition: a rule that turns
// unknown, or not applicable for lack of data (too few pods in the window), keeps its standing Warning
// (the annotation's lastDecided), and failing again after it sends nothing. The previous state is read
// from the report annotation already on the Node, so a restarted agent (no memory) neither repeats
// nor misses an Event.
import type { EventObject } from '../kube/objects.ts';
import { undecided, type Finding, type Report, type Severity } from '../report/types.ts';
import { findingLine, shortReason } from '../wire/finding-line.ts';
import { oneLine } from '../text/controls.ts';
import { truncateBytes } from '../text/bytes.ts';
import { byCodePoint } from '../order.ts';
import { EVENT_NAMESPACE, REASON_RECOMMENDATION, REASON_RESOLVED, REPORTING_COMPONENT } from '../wire/events.ts';

/** Events have no 138-byte cut; this keeps "want …" in the message while it stays one readable line. */
const MAX_MESSAGE_BYTES = 300;

export interface Transition {
  reason: typeof REASON_RECOMMENDATION | typeof REASON_RESOLVED;
  type: 'Warning' | 'Normal';
  ruleId: string;
  message: string;
}

/**
 * A rule that fails now and has no standing Warning → Warning; one with a standing Warning that now
 * passes, does not apply or is gone from the rule set → Normal. A rule turning undecided (unknown,
 * or not applicable for lack of data) sends nothing: we do not know that it was fixed.
 */
export function transitions(warned: Map<string, Severity>, report: Report): Transition[] {
  const byId = new Map(report.findings.map((f) => [f.ruleId, f]));
  const out: Transition[] = [];
  for (const finding of report.findings) {
    if (finding.status === 'fail' && !warned.has(finding.ruleId)) out.push(recommendation(finding));
  }
  for (const [ruleId, severity] of [...warned].sort(([a], [b]) => byCodePoint(a, b))) {
    const now = byId.get(ruleId);
    if (now === undefined) out.push(resolved(ruleId, `${severity} rule ${ruleId} is no longer in the rule set`));
    else if (now.status === 'pass') out.push(resolved(ruleId, `${ruleId} passes now: ${oneLine(now.observed)}`));
    else if (now.status === 'not-applicable' && !undecided(now)) out.push(resolved(ruleId, `${ruleId} no longer applies: ${shortReason(now.message, MAX_MESSAGE_BYTES)}`));
  }
  return out;
}

/** Rules with a standing Warning that are undecided now: the annotation keeps them (lastDecided). */
export function heldWarnings(warned: Map<string, Severity>, report: Report): Set<string> {
  return new Set(report.findings.filter((f) => warned.has(f.ruleId) && undecided(f)).map((f) => f.ruleId));
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
