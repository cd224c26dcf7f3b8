// Loads rule files: YAML parse errors and schema errors both come back as file:line:col with the key,
// never as exceptions. The bundled rules/ directory is always loaded first unless the caller opts out.
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv, type ErrorObject } from 'ajv';
import { isMap, isNode, isPair, isScalar, LineCounter, parseAllDocuments, type Document } from 'yaml';
import { errorCode } from '../host/host-root.ts';
import { conditionSchema, ruleFileSchema, type RuleDefinition, type RuleOverride } from './schema.ts';
import { crossFileErrors, ruleErrors } from './validate.ts';

export const BUNDLED_RULES_DIR = fileURLToPath(new URL('../../rules/', import.meta.url));

export interface RuleFileError {
  file: string;
  line: number;
  col: number;
  key: string;
  message: string;
}

export interface Located {
  file: string;
  line: number;
}

export type LoadedRule = RuleDefinition & Located;
export type LoadedOverride = RuleOverride & Located;

export interface RuleLoadResult {
  rules: LoadedRule[];
  overrides: LoadedOverride[];
  files: string[];
  errors: RuleFileError[];
}

export function formatRuleError(error: RuleFileError): string {
  return `${error.file}:${error.line}:${error.col}: ${error.key ? `${error.key}: ` : ''}${error.message}`;
}

const ajv = new Ajv({ allErrors: true, strict: false });
ajv.addSchema(conditionSchema);
const validateFile = ajv.compile(ruleFileSchema);

/** Each entry may be a directory (its *.yaml / *.yml files, sorted) or a single file. */
export async function loadRules(locations: string[]): Promise<RuleLoadResult> {
  const result: RuleLoadResult = { rules: [], overrides: [], files: [], errors: [] };
  for (const location of locations) {
    const files = await ruleFilesAt(location, result.errors);
    for (const file of files) {
      result.files.push(file);
      await loadFile(file, result);
    }
  }
  for (const error of crossFileErrors(result.rules, result.overrides)) result.errors.push({ ...error, col: 1 });
  return result;
}

async function ruleFilesAt(location: string, errors: RuleFileError[]): Promise<string[]> {
  try {
    if (!(await stat(location)).isDirectory()) return [location];
    const entries = await readdir(location);
    return entries.filter((name) => /\.ya?ml$/.test(name)).sort().map((name) => path.join(location, name));
  } catch (error) {
    const reason = errorCode(error) === 'ENOENT' ? 'does not exist; check the --rules path' : `cannot be read (${errorCode(error) ?? String(error)})`;
    errors.push({ file: location, line: 0, col: 0, key: '', message: reason });
    return [];
  }
}

async function loadFile(file: string, result: RuleLoadResult): Promise<void> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    result.errors.push({ file, line: 0, col: 0, key: '', message: `cannot be read (${errorCode(error) ?? String(error)})` });
    return;
  }
  const lineCounter = new LineCounter();
  const parsed = parseAllDocuments(text, { lineCounter, prettyErrors: true });
  const documents: Document[] = 'empty' in parsed ? [] : parsed;
  if (documents.length === 0) {
    result.errors.push({ file, line: 1, col: 1, key: '', message: 'holds no YAML document; expected apiVersion, kind and rules' });
    return;
  }
  for (const doc of documents) {
    if (doc.errors.length > 0) {
      for (const error of doc.errors) {
        const at = error.linePos?.[0] ?? { line: 1, col: 1 };
        result.errors.push({ file, line: at.line, col: at.col, key: '', message: error.message.split('\n')[0] as string });
      }
      continue;
    }
    let data: unknown;
    try {
      data = doc.toJS();
    } catch (error) {
      // Errors only toJS finds, such as an alias to an anchor defined later.
      result.errors.push({ file, line: 1, col: 1, key: '', message: (error as Error).message.split('\n')[0] as string });
      continue;
    }
    if (!validateFile(data)) {
      for (const error of usefulErrors(validateFile.errors ?? [])) result.errors.push(locate(file, doc, lineCounter, error));
      continue;
    }
    const semantic = semanticErrorsIn(data as Record<string, unknown>);
    for (const error of semantic) {
      result.errors.push({ file, ...positionOf(doc, lineCounter, error.segments), key: error.segments.join('.'), message: error.message });
    }
    if (semantic.length === 0) collect(file, doc, lineCounter, data as Record<string, unknown>, result);
  }
}

function collect(file: string, doc: Document, lines: LineCounter, data: Record<string, unknown>, result: RuleLoadResult): void {
  const lineOf = (segments: (string | number)[]) => positionOf(doc, lines, segments).line;
  if (data.kind === 'RuleSet') {
    (data.rules as RuleDefinition[]).forEach((rule, index) => result.rules.push({ ...rule, file, line: lineOf(['rules', index]) }));
  } else {
    (data.overrides as RuleOverride[]).forEach((override, index) =>
      result.overrides.push({ ...override, file, line: lineOf(['overrides', index]) }),
    );
  }
}

function semanticErrorsIn(data: Record<string, unknown>) {
  if (data.kind !== 'RuleSet') return [];
  return (data.rules as RuleDefinition[]).flatMap((rule, index) => ruleErrors(rule, ['rules', index]));
}

/** Drops ajv's "must match then schema" wrappers and repeats, keeping the errors that say what is wrong. */
function usefulErrors(errors: ErrorObject[]): ErrorObject[] {
  const seen = new Set<string>();
  return errors.filter((error) => {
    if (error.keyword === 'if') return false;
    const key = `${error.instancePath}|${error.keyword}|${JSON.stringify(error.params)}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function locate(file: string, doc: Document, lines: LineCounter, error: ErrorObject): RuleFileError {
  const segments = error.instancePath
    .split('/')
    .slice(1)
    .map((part) => part.replaceAll('~1', '/').replaceAll('~0', '~'))
    .map((part) => (/^\d+$/.test(part) ? Number(part) : part));
  const extra = (error.params as { additionalProperty?: string }).additionalProperty;
  const missing = (error.params as { missingProperty?: string }).missingProperty;
  const keyPath = [...segments, ...(extra ? [extra] : [])];
  const position = extra ? positionOfKey(doc, lines, segments, extra) : positionOf(doc, lines, segments);
  return { file, ...position, key: keyPath.join('.') || '(top level)', message: describe(error, extra, missing) };
}

function describe(error: ErrorObject, extra: string | undefined, missing: string | undefined): string {
  const params = error.params as { allowedValues?: unknown[]; allowedValue?: unknown };
  if (extra) return `unknown key "${extra}"${suggestion(error, extra)}`;
  if (missing) return `missing required key "${missing}"`;
  if (params.allowedValues) return `must be one of ${params.allowedValues.join(', ')}`;
  if (params.allowedValue !== undefined) return `must be ${JSON.stringify(params.allowedValue)}`;
  return error.message ?? 'is not valid';
}

const KNOWN_KEYS = [
  'id', 'scope', 'title', 'category', 'severity', 'weight', 'params', 'appliesWhen', 'failsWhen', 'observed', 'expected',
  'message', 'evidence', 'remediation', 'references', 'fact', 'op', 'value', 'values', 'param', 'all', 'any', 'not',
  'summary', 'text', 'commands', 'seed', 'url', 'note', 'disabled', 'rules', 'overrides', 'apiVersion', 'kind',
];

function suggestion(_error: ErrorObject, key: string): string {
  const close = KNOWN_KEYS.map((known) => ({ known, distance: editDistance(key.toLowerCase(), known.toLowerCase()) }))
    .filter(({ distance }) => distance <= 2)
    .sort((a, b) => a.distance - b.distance)[0];
  return close ? ` (did you mean "${close.known}"?)` : '';
}

export function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min((previous[j] as number) + 1, (current[j - 1] as number) + 1, (previous[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length] as number;
}

function positionOf(doc: Document, lines: LineCounter, segments: (string | number)[]): { line: number; col: number } {
  // Walk down as far as the path exists; a missing key points at its parent.
  for (let depth = segments.length; depth >= 0; depth--) {
    const node = depth === 0 ? doc.contents : doc.getIn(segments.slice(0, depth), true);
    if (isNode(node) && node.range) return lines.linePos(node.range[0]);
  }
  return { line: 1, col: 1 };
}

function positionOfKey(doc: Document, lines: LineCounter, segments: (string | number)[], key: string): { line: number; col: number } {
  const parent = segments.length === 0 ? doc.contents : doc.getIn(segments, true);
  if (isMap(parent)) {
    const pair = parent.items.find((item) => isPair(item) && isScalar(item.key) && item.key.value === key);
    if (pair && isScalar(pair.key) && pair.key.range) return lines.linePos(pair.key.range[0]);
  }
  return positionOf(doc, lines, segments);
}
