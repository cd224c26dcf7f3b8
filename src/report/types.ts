// The report: what `scan --output json` prints and what every publisher renders. Publishers read
// only this shape; they know nothing of rules or collectors.
import type { Fact, FactValue } from '../facts/fact-set.ts';

export const REPORT_SCHEMA_VERSION = 1;

export type Severity = 'info' | 'warning' | 'critical';
export const SEVERITIES: readonly Severity[] = ['info', 'warning', 'critical'];

export type FindingStatus = 'pass' | 'fail' | 'unknown' | 'not-applicable';

export interface Evidence {
  fact: string;
  value: FactValue;
  source: string;
  detail?: string;
  /** Why the fact is unknown, when it is. */
  unknown?: string;
}

export interface Remediation {
  /** The fix in a few words, for one-line places: annotation lines, Events, the terminal's default view. */
  summary: string;
  text: string;
  commands: string[];
}

export interface Reference {
  seed?: string;
  url?: string;
  note?: string;
}

export interface Finding {
  ruleId: string;
  title: string;
  category: string;
  status: FindingStatus;
  severity: Severity;
  weight: number;
  /** What was found, e.g. "CONFIG_HZ=250"; empty unless the rule passes or fails (nothing observed decided it). */
  observed: string;
  /** What the rule wants, e.g. "CONFIG_HZ=1000". */
  expected: string;
  /** One sentence: the finding, or why it is unknown / not applicable (facts named by their labels). */
  message: string;
  /** Unknown and not-applicable: the rule engine's own words ("kernel.hz = none cannot be compared with Lt 1000"). */
  engineReason?: string;
  /**
   * Not applicable for lack of data (the rule's enoughDataWhen is false: too few pods in the window),
   * not because the node has nothing to judge. Like unknown, it sends no Event either way.
   */
  lacksData?: true;
  evidence: Evidence[];
  remediation: Remediation;
  references: Reference[];
  /** Points this finding took off the score. */
  scoreImpact: number;
}

/** Of the rules that apply to the node, how many the scan could decide: beside the score, never in it. */
export interface Coverage {
  /** Passing and failing rules. */
  decided: number;
  /** Rules that are not `not-applicable`: decided + unknown. */
  applicable: number;
  unknown: number;
  /** Unknown rules of severity critical. */
  criticalUnknown: number;
}

export interface Report {
  schemaVersion: number;
  node: string;
  generatedAt: string;
  hostRoot: string;
  score: number;
  grade: 'A' | 'B' | 'C' | 'D' | 'F';
  counts: Record<FindingStatus, number>;
  coverage: Coverage;
  findings: Finding[];
  facts: Record<string, Fact>;
}

/** Nothing was decided: unknown, or not applicable for lack of data. Neither is a transition for Events. */
export function undecided(finding: Pick<Finding, 'status' | 'lacksData'>): boolean {
  return finding.status === 'unknown' || (finding.status === 'not-applicable' && finding.lacksData === true);
}
