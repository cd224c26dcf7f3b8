// report/: the Report and Finding types and the score; imports only facts/.
// Score and grade. Every failing rule takes weight × severity points off 100; an unknown one takes
// half of that, because "could not check" is not "fine". Passing and not-applicable rules take nothing.
//   points: info 1, warning 5, critical 15        grade: A ≥ 90, B ≥ 80, C ≥ 70, D ≥ 60, else F
import type { Finding, FindingStatus, Report, Severity } from './types.ts';

export const SEVERITY_POINTS: Record<Severity, number> = { info: 1, warning: 5, critical: 15 };

export function scoreImpact(status: FindingStatus, severity: Severity, weight: number): number {
  const full = weight * SEVERITY_POINTS[severity];
  if (status === 'fail') return full;
  if (status === 'unknown') return full / 2;
  return 0;
}

export function scoreOf(findings: Finding[]): number {
  const lost = findings.reduce((sum, finding) => sum + finding.scoreImpact, 0);
  return Math.max(0, Math.round(100 - lost));
}

export function gradeOf(score: number): Report['grade'] {
  if (score >= 90) return 'A';
  if (score >= 80) return 'B';
  if (score >= 70) return 'C';
  if (score >= 60) return 'D';
  return 'F';
}
