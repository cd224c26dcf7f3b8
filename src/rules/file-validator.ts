// The JSON-Schema check of a rule file: ajv compiles ./schema.ts when this module loads. The bundle
// ships the same validator compiled at build time instead (scripts/bundle.ts, PRECOMPILED): no ajv
// and no code generation in the CLI or the agent, which saves each process 60-140 ms and 5-13 MiB.
import { Ajv, type ValidateFunction } from 'ajv';
import { conditionSchema, ruleFileSchema } from './schema.ts';

/** The ajv instance and the validator; `forExport` keeps the generated code for ajv's standalone output. */
export function compileRuleFileValidator(forExport = false): { ajv: Ajv; validate: ValidateFunction } {
  const ajv = new Ajv({ allErrors: true, strict: false, ...(forExport ? { code: { source: true, esm: true } } : {}) });
  ajv.addSchema(conditionSchema);
  return { ajv, validate: ajv.compile(ruleFileSchema) };
}

export const validateRuleFile: ValidateFunction = compileRuleFileValidator().validate;
