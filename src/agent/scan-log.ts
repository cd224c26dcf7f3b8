// The agent's one log line per cycle, in the style operators of node-problem-detector and
// node-feature-discovery expect: what the scan found, what changed since the last scan, what was sent.
import type { Finding, Report } from '../report/types.ts';
import type { PublishOutcome } from './publisher.ts';

/** Rule ids named in the line before "+N more". */
const NAMED_CHANGES = 3;

/** "scan: score 72/100 (C), 2 failing, 1 unknown; 1 rule changed (kernel-tick-rate pass→fail); PATCH yes, 1 Event sent; took 0.8 s". */
export function scanLine(report: Report, previous: Report | undefined, outcome: PublishOutcome, seconds: number): string {
  const { fail, unknown } = report.counts;
  return `scan: score ${report.score}/100 (${report.grade}), ${fail} failing, ${unknown} unknown; ${changedText(report, previous)}; `
    + `${sentText(outcome)}; took ${seconds.toFixed(1)} s`;
}

/** A cycle that only published again (after a failed attempt): "publish: PATCH yes, 2 Events sent". */
export function publishLine(outcome: PublishOutcome): string {
  return `publish: ${sentText(outcome)}`;
}

function sentText(outcome: PublishOutcome): string {
  return `PATCH ${outcome.patched ? 'yes' : 'no'}, ${outcome.events} Event${outcome.events === 1 ? '' : 's'} sent`;
}

/** Rules whose status differs from the previous scan's (first scan: "first scan"). */
function changedText(report: Report, previous: Report | undefined): string {
  if (previous === undefined) return 'first scan';
  const before = new Map<string, Finding['status']>(previous.findings.map((f) => [f.ruleId, f.status]));
  const changed = report.findings
    .filter((f) => before.get(f.ruleId) !== f.status)
    .map((f) => `${f.ruleId} ${before.get(f.ruleId) ?? 'new'}→${f.status}`);
  const gone = previous.findings.filter((f) => !report.findings.some((g) => g.ruleId === f.ruleId)).map((f) => `${f.ruleId} removed`);
  const all = [...changed, ...gone];
  if (all.length === 0) return '0 rules changed';
  const named = all.slice(0, NAMED_CHANGES).join(', ');
  const more = all.length > NAMED_CHANGES ? `, +${all.length - NAMED_CHANGES} more` : '';
  return `${all.length} rule${all.length === 1 ? '' : 's'} changed (${named}${more})`;
}
