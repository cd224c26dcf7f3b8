// Checks a schema cannot express: operators given the operands they need, params that exist,
// template placeholders that resolve, unique ids, overrides that name a loaded rule.
import { oneLineErrors } from './one-line.ts';
import { paramOfKey, placeholders } from './template.ts';
import type { PathError } from './rule-file.ts';
import { CLUSTER_FACT_PREFIX, isLeaf, ruleConditions, type Condition, type LeafCondition, type RuleDefinition, type RuleOverride } from './schema.ts';

/** Facts that only enrich the report: a rule deciding on them would inherit their misreadings. */
export const ENRICHMENT_ONLY_PREFIX = 'inventory.';

const NO_OPERAND = new Set(['Exists', 'DoesNotExist', 'IsTrue', 'IsFalse']);
const NUMERIC = new Set(['Gt', 'Ge', 'Lt', 'Le']);
const LIST = new Set(['In', 'NotIn']);

function leafErrors(leaf: LeafCondition, params: RuleDefinition['params'], at: (string | number)[]): PathError[] {
  if (leaf.fact.startsWith(ENRICHMENT_ONLY_PREFIX)) {
    return [{ segments: [...at, 'fact'], message: `${leaf.fact} only enriches the report (systeminformation); decide on the /proc and /sys facts instead` }];
  }
  const operand = leaf.param !== undefined ? params?.[leaf.param] : (leaf.values ?? leaf.value);
  const given = [leaf.value, leaf.values, leaf.param].filter((part) => part !== undefined).length;
  if (leaf.param !== undefined && params?.[leaf.param] === undefined) {
    return [{ segments: [...at, 'param'], message: `names param "${leaf.param}", which the rule's params do not define` }];
  }
  if (NO_OPERAND.has(leaf.op)) {
    return given > 0 ? [{ segments: at, message: `${leaf.op} takes no value, values or param` }] : [];
  }
  if (given !== 1) return [{ segments: at, message: `${leaf.op} needs exactly one of value, values or param` }];
  if (LIST.has(leaf.op) && !Array.isArray(operand)) {
    return [{ segments: at, message: `${leaf.op} needs a list: use values: [...] (or a param holding a list)` }];
  }
  if (NUMERIC.has(leaf.op) && typeof operand !== 'number') {
    return [{ segments: at, message: `${leaf.op} compares numbers: give a numeric value or param` }];
  }
  if (leaf.op === 'GtLt' && !(Array.isArray(operand) && operand.length === 2 && operand.every((n) => typeof n === 'number'))) {
    return [{ segments: at, message: 'GtLt needs values: [low, high] (two numbers)' }];
  }
  if (leaf.op.startsWith('Version') && (Array.isArray(operand) || typeof operand === 'boolean')) {
    return [{ segments: at, message: `${leaf.op} needs one version string, e.g. value: "1.27"` }];
  }
  return [];
}

export function conditionErrors(condition: Condition, params: RuleDefinition['params'], at: (string | number)[]): PathError[] {
  if (isLeaf(condition)) return leafErrors(condition, params, at);
  if ('not' in condition) return conditionErrors(condition.not, params, [...at, 'not']);
  const [key, parts] = 'all' in condition ? ['all', condition.all] : ['any', condition.any];
  return parts.flatMap((part, index) => conditionErrors(part, params, [...at, key, index]));
}

export function templateErrors(rule: RuleDefinition, at: (string | number)[]): PathError[] {
  const errors: PathError[] = [];
  const fields: [string[], string][] = [
    [['observed'], rule.observed], [['expected'], rule.expected], [['message'], rule.message],
    [['remediation', 'summary'], rule.remediation.summary], ...(rule.notEnoughData === undefined ? [] : [[['notEnoughData'], rule.notEnoughData] as [string[], string]]),
  ];
  for (const [field, template] of fields) {
    for (const placeholder of placeholders(template)) {
      if (placeholder.kind === 'param' && rule.params?.[placeholder.name] === undefined) {
        errors.push({ segments: [...at, ...field], message: `uses {{params.${placeholder.name}}}, which the rule's params do not define` });
      }
      if (placeholder.kind === 'param-by-fact' && !Object.keys(rule.params ?? {}).some((key) => key.startsWith(`${placeholder.name}_`))) {
        errors.push({ segments: [...at, ...field], message: `uses {{params.${placeholder.name}[…]}}, but the rule defines no param named ${placeholder.name}_<value>` });
      }
    }
  }
  return [...errors, ...staticSummaryErrors(rule, at)];
}

/** The keys of a template's fact placeholders ({{kernel.hz}}, not {{params.x}}): their text differs from node to node. */
function factPlaceholders(template: string): string[] {
  return placeholders(template).flatMap((p) => (p.kind === 'fact' && paramOfKey(p.key) === undefined ? [p.key] : []));
}

/**
 * The alerts show a rule's fix from a static map generated from the rule files (no free text in
 * metric labels): a summary that names a node's facts needs `staticSummary`, the same fix without them.
 */
function staticSummaryErrors(rule: RuleDefinition, at: (string | number)[]): PathError[] {
  const { summary, staticSummary } = rule.remediation;
  if (staticSummary !== undefined && /\{\{/.test(staticSummary)) {
    return [{ segments: [...at, 'remediation', 'staticSummary'], message: 'is the fix without node-specific values: no {{…}} placeholders' }];
  }
  if (staticSummary === undefined && factPlaceholders(summary).length > 0) {
    return [{ segments: [...at, 'remediation', 'summary'], message: 'names facts, so it differs per node; add remediation.staticSummary (the same fix without them) for the alerts\' fix text' }];
  }
  return [];
}

/** Every fact key a rule names: conditions, evidence and {{…}} placeholders, with where it is named. */
function namedFacts(rule: RuleDefinition): { key: string; where: string }[] {
  const walk = (condition: Condition | undefined, where: string): { key: string; where: string }[] => {
    if (!condition) return [];
    if (isLeaf(condition)) return [{ key: condition.fact, where }];
    if ('not' in condition) return walk(condition.not, where);
    return ('all' in condition ? condition.all : condition.any).flatMap((part) => walk(part, where));
  };
  const templates = [rule.observed, rule.expected, rule.message, rule.remediation.summary, rule.remediation.text, ...(rule.remediation.commands ?? []), rule.notEnoughData ?? ''];
  const named = templates.flatMap(factPlaceholders);
  return [
    ...ruleConditions(rule).flatMap(([key, condition]) => walk(condition, key)),
    ...(rule.evidence ?? []).map((key) => ({ key, where: 'evidence' })),
    ...named.map((key) => ({ key, where: 'templates' })),
  ];
}

/**
 * Node rules see one host's facts, cluster rules (scope: cluster) only the `cluster.*` facts that
 * `report` gathers through the API; a rule mixing the two could never be decided by either.
 */
export function scopeErrors(rule: RuleDefinition, at: (string | number)[]): PathError[] {
  const cluster = rule.scope === 'cluster';
  const wrong = namedFacts(rule).find(({ key }) => key.startsWith(CLUSTER_FACT_PREFIX) !== cluster);
  if (!wrong) return [];
  const message = cluster
    ? `${wrong.where} names ${wrong.key}, but a scope: cluster rule sees only ${CLUSTER_FACT_PREFIX}* facts`
    : `${wrong.where} names ${wrong.key}, a cluster fact; give the rule scope: cluster (evaluated by "report")`;
  return [{ segments: [...at, cluster ? 'scope' : 'id'], message }];
}

/** enoughDataWhen and notEnoughData come together: a rule that may lack data says why in words. */
function enoughDataErrors(rule: RuleDefinition, at: (string | number)[]): PathError[] {
  if ((rule.enoughDataWhen === undefined) === (rule.notEnoughData === undefined)) return [];
  return rule.enoughDataWhen === undefined
    ? [{ segments: [...at, 'notEnoughData'], message: 'is the reason shown when enoughDataWhen is false: add enoughDataWhen, or remove it' }]
    : [{ segments: [...at, 'enoughDataWhen'], message: 'needs notEnoughData: the reason people read when there is not enough to judge (e.g. "fewer than {{params.minSamples}} pods started in the last {{workload.window}}")' }];
}

export function ruleErrors(rule: RuleDefinition, at: (string | number)[]): PathError[] {
  return [
    ...ruleConditions(rule).flatMap(([key, condition]) => conditionErrors(condition, rule.params, [...at, key])),
    ...enoughDataErrors(rule, at),
    ...templateErrors(rule, at),
    ...scopeErrors(rule, at),
    ...oneLineErrors(rule, at),
  ];
}

interface Located {
  file: string;
  line: number;
}

export interface CrossFileError extends Located {
  key: string;
  message: string;
}

export function crossFileErrors(rules: (RuleDefinition & Located)[], overrides: (RuleOverride & Located)[]): CrossFileError[] {
  const errors: CrossFileError[] = [];
  const byId = new Map<string, RuleDefinition & Located>();
  for (const rule of rules) {
    const first = byId.get(rule.id);
    if (first) {
      const message = `rule id "${rule.id}" is already defined at ${first.file}:${first.line}; to change a bundled rule use kind: RuleOverrides`;
      errors.push({ file: rule.file, line: rule.line, key: 'id', message });
    } else byId.set(rule.id, rule);
  }
  for (const override of overrides) {
    const rule = byId.get(override.id);
    if (!rule) {
      errors.push({ file: override.file, line: override.line, key: 'id', message: `no loaded rule has id "${override.id}"` });
      continue;
    }
    for (const name of Object.keys(override.params ?? {})) {
      if (rule.params?.[name] === undefined) {
        const known = Object.keys(rule.params ?? {}).join(', ') || 'none';
        errors.push({ file: override.file, line: override.line, key: `params.${name}`, message: `rule "${rule.id}" has no param "${name}" (it has: ${known})` });
      }
    }
  }
  return errors;
}
