// JSON Schema of the rule files, checked with ajv. Semantic checks that a schema cannot express
// (unique ids, params that a condition names) live in load.ts.
import type { Severity } from '../report/types.ts';

export const API_VERSION = 'node-tuning-advisor.io/v1';

export const OPERATORS = [
  'In', 'NotIn', 'Exists', 'DoesNotExist', 'Gt', 'Ge', 'Lt', 'Le', 'GtLt', 'IsTrue', 'IsFalse',
  'VersionGt', 'VersionGe', 'VersionLt', 'VersionLe',
] as const;
export type Operator = (typeof OPERATORS)[number];

export type Scalar = string | number | boolean;

export interface LeafCondition {
  fact: string;
  op: Operator;
  value?: Scalar;
  values?: Scalar[];
  param?: string;
}
export type Condition = LeafCondition | { all: Condition[] } | { any: Condition[] } | { not: Condition };

export interface RuleReference {
  seed?: string;
  url?: string;
  note?: string;
}

/** node: checked by `scan`/`agent` on each host; cluster: checked once by `report` over `cluster.*` facts. */
export type RuleScope = 'node' | 'cluster';
export const RULE_SCOPES: readonly RuleScope[] = ['node', 'cluster'];
export const CLUSTER_FACT_PREFIX = 'cluster.';

export interface RuleDefinition {
  id: string;
  scope?: RuleScope;
  title: string;
  category: string;
  severity: Severity;
  weight: number;
  params?: Record<string, Scalar | Scalar[]>;
  appliesWhen?: Condition;
  /**
   * Whether the facts hold enough to judge (e.g. samples ≥ minSamples), checked once the rule
   * applies: false → not-applicable for lack of data, `notEnoughData` saying why. Moving to or
   * from it is no Event: nothing was fixed or broken.
   */
  enoughDataWhen?: Condition;
  /** Why there is not enough to judge, for people (a template): "fewer than {{params.minSamples}} pods … in the last {{workload.window}}". */
  notEnoughData?: string;
  failsWhen: Condition;
  observed: string;
  expected: string;
  message: string;
  evidence?: string[];
  /** staticSummary: the summary without node-specific facts, for static places (the alerts' fix map). */
  remediation: { summary: string; staticSummary?: string; text: string; commands?: string[] };
  references: RuleReference[];
  /**
   * Not written in a rule: the loader copies the labels of the facts this rule reads from its file's
   * `facts:` map, for the reasons a person reads ("the kubelet's kubeAPIQPS: 5").
   */
  factLabels?: Record<string, string>;
}

export interface RuleOverride {
  id: string;
  disabled?: boolean;
  severity?: Severity;
  weight?: number;
  params?: Record<string, Scalar | Scalar[]>;
}

const scalar = { type: ['string', 'number', 'boolean'] };
const factKey = { type: 'string', pattern: '^[A-Za-z][A-Za-z0-9_-]*(\\.[A-Za-z0-9_-]+)*$' };
const params = {
  type: 'object',
  propertyNames: { pattern: '^[A-Za-z][A-Za-z0-9_]*$' },
  additionalProperties: { anyOf: [scalar, { type: 'array', items: scalar }] },
};
const severity = { enum: ['info', 'warning', 'critical'] };
const weight = { type: 'number', minimum: 0, maximum: 10 };

const leafCondition = {
  type: 'object',
  required: ['fact', 'op'],
  additionalProperties: false,
  properties: {
    fact: factKey,
    op: { enum: [...OPERATORS] },
    value: scalar,
    values: { type: 'array', items: scalar, minItems: 1 },
    param: { type: 'string' },
  },
};

// An if/then chain instead of oneOf, so that a typo in one branch reports that branch's error only.
const combinator = (key: 'all' | 'any' | 'not') => ({
  required: [key],
  additionalProperties: false,
  properties: { [key]: key === 'not' ? { $ref: 'condition' } : { type: 'array', minItems: 1, items: { $ref: 'condition' } } },
});
const condition = {
  $id: 'condition',
  type: 'object',
  if: { required: ['fact'] },
  then: leafCondition,
  else: {
    if: { required: ['all'] },
    then: combinator('all'),
    else: {
      if: { required: ['any'] },
      then: combinator('any'),
      else: { if: { required: ['not'] }, then: combinator('not'), else: leafCondition },
    },
  },
};

/** kebab-case, as short as a label value: an id is printed in findings, annotations and messages. */
const ruleId = { type: 'string', maxLength: 63, pattern: '^[a-z0-9]+(-[a-z0-9]+)*$' };

const rule = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'title', 'category', 'severity', 'weight', 'failsWhen', 'observed', 'expected', 'message', 'remediation', 'references'],
  properties: {
    id: ruleId,
    scope: { enum: ['node', 'cluster'] },
    title: { type: 'string', minLength: 1 },
    category: { type: 'string', minLength: 1 },
    severity,
    weight,
    params,
    appliesWhen: { $ref: 'condition' },
    enoughDataWhen: { $ref: 'condition' },
    notEnoughData: { type: 'string', minLength: 1 },
    failsWhen: { $ref: 'condition' },
    observed: { type: 'string' },
    expected: { type: 'string' },
    message: { type: 'string', minLength: 1 },
    evidence: { type: 'array', items: factKey },
    remediation: {
      type: 'object',
      additionalProperties: false,
      required: ['summary', 'text'],
      properties: {
        // The fix in a few words; validate.ts checks it is one line and fits a finding line.
        summary: { type: 'string', minLength: 1 },
        staticSummary: { type: 'string', minLength: 1, maxLength: 100, pattern: '^[^\\n]+$' },
        text: { type: 'string', minLength: 1 },
        commands: { type: 'array', items: { type: 'string' } },
      },
    },
    references: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        additionalProperties: false,
        minProperties: 1,
        properties: { seed: { type: 'string' }, url: { type: 'string', pattern: '^https?://' }, note: { type: 'string' } },
      },
    },
  },
};

/** One entry of a RuleOverrides file's `overrides:` (also the Helm chart's ruleOverrides items). */
export const ruleOverrideSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id'],
  properties: { id: ruleId, disabled: { type: 'boolean' }, severity, weight, params },
};

export const ruleFileSchema = {
  type: 'object',
  required: ['apiVersion', 'kind'],
  properties: {
    apiVersion: { const: API_VERSION },
    kind: { enum: ['RuleSet', 'RuleOverrides'] },
  },
  if: { properties: { kind: { const: 'RuleSet' } } },
  then: {
    additionalProperties: false,
    required: ['rules'],
    properties: {
      apiVersion: true, kind: true, rules: { type: 'array', items: rule },
      // fact key → a few words for people, used in reasons instead of the key.
      facts: { type: 'object', propertyNames: factKey, additionalProperties: { type: 'string', minLength: 3, maxLength: 80, pattern: '^[^\\n{}:]+$' } },
    },
  },
  else: {
    additionalProperties: false,
    required: ['overrides'],
    properties: {
      apiVersion: true,
      kind: true,
      overrides: { type: 'array', items: ruleOverrideSchema },
    },
  },
};

export const conditionSchema = condition;

export function isLeaf(condition: Condition): condition is LeafCondition {
  return 'fact' in condition;
}

/** A rule's conditions in the order they are evaluated, each with its key. */
export function ruleConditions(rule: Pick<RuleDefinition, 'appliesWhen' | 'enoughDataWhen' | 'failsWhen'>): [string, Condition][] {
  const all: [string, Condition | undefined][] = [['appliesWhen', rule.appliesWhen], ['enoughDataWhen', rule.enoughDataWhen], ['failsWhen', rule.failsWhen]];
  return all.filter((entry): entry is [string, Condition] => entry[1] !== undefined);
}
