// A rule's short fix (remediation.summary) is written for the places that have one line: the
// findings annotation, Events, the terminal's default view. These checks render the rule with
// typical values and reject one whose line would be cut.
import { entryLine } from '../wire/annotations.ts';
import { MAX_LINE_BYTES, SEVERITY_TAG, shortestLine } from '../wire/finding-line.ts';
import { byteLength } from '../text/bytes.ts';
import { renderValue } from './conditions.ts';
import type { RuleDefinition } from './schema.ts';
import type { PathError } from './rule-file.ts';
import { paramOfKey, substitute } from './template.ts';

/** What a `{{fact.key}}` placeholder counts as: a typical observed value ("250", "powersave", "18.2"). */
export const TYPICAL_VALUE = '123456';

/** The template with every fact replaced by a typical value and every param by its own value. */
export function withTypicalValues(template: string, params: RuleDefinition['params']): string {
  return substitute(template, (placeholder) => {
    if (placeholder.kind === 'param-by-fact') return TYPICAL_VALUE;
    const param = placeholder.kind === 'param' ? placeholder.name : paramOfKey(placeholder.key);
    return param !== undefined ? renderValue(params?.[param]) : TYPICAL_VALUE;
  });
}

export function oneLineErrors(rule: RuleDefinition, at: (string | number)[]): PathError[] {
  const summary = rule.remediation.summary;
  const where = [...at, 'remediation', 'summary'];
  if (/[\r\n]/.test(summary.trim())) {
    return [{ segments: where, message: 'must be one line: it is shown where only one line fits (annotations, Events)' }];
  }
  const observed = withTypicalValues(rule.observed, rule.params);
  const line = shortestLine({
    tag: SEVERITY_TAG.critical, ruleId: rule.id, observed, expected: '', fix: withTypicalValues(summary.trim(), rule.params),
  });
  const errors: PathError[] = [];
  const over = byteLength(line) - MAX_LINE_BYTES;
  if (over > 0) {
    errors.push({
      segments: where,
      message: `with typical values (each {{fact}} as ${TYPICAL_VALUE.length} characters) the finding line is ${byteLength(line)} bytes, ${over} over the ${MAX_LINE_BYTES} that kubectl describe shows: shorten the summary or the observed text ("${line}")`,
    });
  }
  // Only node rules reach the Node's report annotation; cluster rules are shown by `report`.
  const entry = entryLine({ rule: rule.id, status: 'fail', severity: rule.severity, observed }, ',');
  if (rule.scope !== 'cluster' && !entry.includes(JSON.stringify(observed))) {
    errors.push({
      segments: [...at, 'observed'],
      message: `with typical values the observed text does not fit the report annotation's ${MAX_LINE_BYTES}-byte line for this rule: shorten it ("${observed}")`,
    });
  }
  return errors;
}
