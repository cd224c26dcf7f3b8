// report/: the Report and Finding types and the score; imports only facts/.
// Score and grade say what fails: every failing rule takes weight × severity points off 100.
//   points: info 1, warning 5, critical 15        grade: A ≥ 90, B ≥ 80, C ≥ 70, D ≥ 60, else F,
//   at most B while a warning fails and at most C while a critical fails (A: nothing above info fails).
// What could not be decided takes nothing: it is coverage, reported beside the score ("checked 14 of
// 18"), so a host the advisor cannot fully read never ranks below one that is broken.
import type { Coverage, Finding, FindingStatus, Report, Severity } from './types.ts';

export const SEVERITY_POINTS: Record<Severity, number> = { info: 1, warning: 5, critical: 15 };

/** The best grade a node may have while a rule of this severity fails. */
const GRADE_CAP: Record<Severity, Report['grade']> = { info: 'A', warning: 'B', critical: 'C' };
const GRADES: readonly Report['grade'][] = ['A', 'B', 'C', 'D', 'F'];

export function scoreImpact(status: FindingStatus, severity: Severity, weight: number): number {
  return status === 'fail' ? weight * SEVERITY_POINTS[severity] : 0;
}

export function scoreOf(findings: readonly Finding[]): number {
  const lost = findings.reduce((sum, finding) => sum + finding.scoreImpact, 0);
  return Math.max(0, Math.round(100 - lost));
}

function gradeOfScore(score: number): Report['grade'] {
  if (score >= 90) return 'A';
  if (score >= 80) return 'B';
  if (score >= 70) return 'C';
  if (score >= 60) return 'D';
  return 'F';
}

/** The grade of a score, capped by the most severe failing rule (none: the score alone). */
export function gradeOf(score: number, worstFailing?: Severity): Report['grade'] {
  const byScore = gradeOfScore(score);
  if (worstFailing === undefined) return byScore;
  const cap = GRADE_CAP[worstFailing];
  return GRADES.indexOf(byScore) >= GRADES.indexOf(cap) ? byScore : cap;
}

const SEVERITY_RANK: Record<Severity, number> = { info: 1, warning: 2, critical: 3 };

/** The most severe of these severities; undefined for none. */
export function worstSeverity(severities: Iterable<Severity>): Severity | undefined {
  let worst: Severity | undefined;
  for (const s of severities) if (worst === undefined || SEVERITY_RANK[s] > SEVERITY_RANK[worst]) worst = s;
  return worst;
}

/** 0 for none, 1 info, 2 warning, 3 critical: for ordering nodes by what fails on them. */
export function severityRank(severity: Severity | undefined): number {
  return severity === undefined ? 0 : SEVERITY_RANK[severity];
}

/** Score, grade and coverage of a set of findings. */
export function judge(findings: readonly Finding[]): { score: number; grade: Report['grade']; coverage: Coverage } {
  const score = scoreOf(findings);
  const worst = worstSeverity(findings.filter((f) => f.status === 'fail').map((f) => f.severity));
  return { score, grade: gradeOf(score, worst), coverage: coverageOf(findings) };
}

/** Of the rules that apply (not `not-applicable`), how many were decided (pass or fail). */
export function coverageOf(findings: readonly Pick<Finding, 'status' | 'severity'>[]): Coverage {
  let decided = 0;
  let unknown = 0;
  let criticalUnknown = 0;
  for (const f of findings) {
    if (f.status === 'pass' || f.status === 'fail') decided += 1;
    else if (f.status === 'unknown') {
      unknown += 1;
      if (f.severity === 'critical') criticalUnknown += 1;
    }
  }
  return { decided, applicable: decided + unknown, unknown, criticalUnknown };
}

/** Coverage from a report's counts (what the annotation carries) and its unknown rules' severities. */
export function coverageFromCounts(counts: Record<FindingStatus, number>, unknownSeverities: readonly Severity[]): Coverage {
  const decided = counts.pass + counts.fail;
  return {
    decided, applicable: decided + counts.unknown, unknown: counts.unknown,
    criticalUnknown: unknownSeverities.filter((s) => s === 'critical').length,
  };
}

/** "checked 14 of 18 rules (1 critical undecided)": of the rules that apply, how many were decided. */
export function coverageText(coverage: Coverage): string {
  if (coverage.applicable === 0) return 'no rule applies';
  const critical = coverage.criticalUnknown > 0 ? ` (${coverage.criticalUnknown} critical undecided)` : '';
  return `checked ${coverage.decided} of ${coverage.applicable} rule${coverage.applicable === 1 ? '' : 's'}${critical}`;
}
