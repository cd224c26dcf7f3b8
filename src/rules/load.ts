// Loads rule files: YAML parse errors and schema errors both come back as file:line:col with the key,
// never as exceptions. The bundled rules/ directory is always loaded first unless the caller opts out.
import { readdir, realpath, stat, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ErrorObject } from 'ajv';
import { isMap, isNode, isPair, isScalar, LineCounter, parseAllDocuments, type Document } from 'yaml';
import { errorCode } from '../host/host-root.ts';
import { fileTypeOf } from '../host/read-failure.ts';
import { openRegularFile } from '../host/open-checked.ts';
import { validateRuleFile } from './file-validator.ts';
import { knownRuleFile } from './known-rule-files.ts';
import { ruleConditions, type RuleDefinition, type RuleOverride } from './schema.ts';
import type { LoadedOverride, LoadedRule, ParsedRuleFile, RuleFileError, RuleLoadResult } from './rule-file.ts';
import { didYouMean } from '../text/suggest.ts';
import { factsIn } from './conditions.ts';
import { crossFileErrors, ruleErrors } from './validate.ts';
import { MAX_RULE_FILE_TOKENS, MAX_RULE_TOKENS_TOTAL, yamlCost } from './yaml-budget.ts';

/** The bundled files are 9-14 KiB; a 1 MiB quoted scalar took the agent's lite-mode heap to 90 MiB resident. */
export const MAX_RULE_FILE_BYTES = 256 * 1024;
export const MAX_RULE_FILES = 256;
export const BUNDLED_RULES_DIR = fileURLToPath(new URL('../../rules/', import.meta.url));

export function formatRuleError(error: RuleFileError): string {
  return `${error.file}:${error.line}:${error.col}: ${error.key ? `${error.key}: ` : ''}${error.message}`;
}

/** Each entry may be a directory (its *.yaml / *.yml files, sorted) or a single file. */
export async function loadRules(locations: string[]): Promise<RuleLoadResult> {
  const result: RuleLoadResult = { rules: [], overrides: [], files: [], errors: [] };
  // `rules lint rules` names the bundled directory a second time: a file is loaded once, whatever path reaches it.
  const loaded = new Set<string>();
  const budget = { tokens: MAX_RULE_TOKENS_TOTAL };
  for (const location of locations) {
    const files = await ruleFilesAt(location, result.errors);
    for (const file of files) {
      const identity = await realpath(file).catch(() => path.resolve(file));
      if (loaded.has(identity)) continue;
      loaded.add(identity);
      result.files.push(file);
      await loadFile(file, result, budget);
    }
  }
  for (const error of crossFileErrors(result.rules, result.overrides)) result.errors.push({ ...error, col: 1 });
  return result;
}

async function ruleFilesAt(location: string, errors: RuleFileError[]): Promise<string[]> {
  try {
    if (!(await stat(location)).isDirectory()) return [location];
    const entries = (await readdir(location)).filter((name) => /\.ya?ml$/.test(name)).sort();
    if (entries.length > MAX_RULE_FILES) {
      errors.push({ file: location, line: 0, col: 0, key: '', message: `holds ${entries.length} YAML files; at most ${MAX_RULE_FILES} are read from one directory` });
      return [];
    }
    return entries.map((name) => path.join(location, name));
  } catch (error) {
    const reason = errorCode(error) === 'ENOENT' ? 'does not exist; check the --rules path' : `cannot be read (${errorCode(error) ?? String(error)})`;
    errors.push({ file: location, line: 0, col: 0, key: '', message: reason });
    return [];
  }
}

/**
 * A rule file's text: regular files only (a FIFO would block the read forever, a device could act
 * on being opened) and at most MAX_RULE_FILE_BYTES (a huge scalar costs seconds and gigabytes to
 * parse); what it may cost to parse is then its tokens' (yaml-budget.ts).
 */
async function readRuleFile(file: string): Promise<{ text: string } | { message: string }> {
  let handle: FileHandle | undefined;
  try {
    // Checked through an O_PATH descriptor before it is opened for reading (no stat-then-open race).
    const checked = await openRegularFile(file);
    if (!checked.ok) return { message: `${fileTypeOf(checked.info)}, not a regular file; --rules takes YAML files or directories of them` };
    handle = checked.handle;
    const opened = handle;
    // Not zero-filled: only the bytes read are used (a zeroed 1 MiB per file is pages touched for nothing).
    const data = Buffer.allocUnsafe(MAX_RULE_FILE_BYTES + 1);
    let size = 0;
    while (size < data.length) {
      const { bytesRead } = await opened.read(data, size, data.length - size, null);
      if (bytesRead === 0) break;
      size += bytesRead;
    }
    if (size > MAX_RULE_FILE_BYTES) return { message: `is larger than ${MAX_RULE_FILE_BYTES / 1024} KiB; a rule file is at most that (split it, or check that this is the file you meant)` };
    return { text: data.toString('utf8', 0, size) };
  } catch (error) {
    return { message: `cannot be read (${errorCode(error) ?? String(error)})` };
  } finally {
    await handle?.close();
  }
}

/** Parsed unless it costs more than the heap can take (yaml-budget.ts); the bundled files are parsed at build time. */
async function loadFile(file: string, result: RuleLoadResult, budget: { tokens: number }): Promise<void> {
  const read = await readRuleFile(file);
  if ('message' in read) {
    result.errors.push({ file, line: 0, col: 0, key: '', message: read.message });
    return;
  }
  let parsed = knownRuleFile(read.text);
  if (!parsed) {
    const cost = yamlCost(read.text, Math.min(MAX_RULE_FILE_TOKENS, budget.tokens));
    if (!cost.ok) {
      result.errors.push({ file, line: 0, col: 0, key: '', message: cost.message });
      return;
    }
    budget.tokens -= cost.tokens;
    parsed = parseRuleText(read.text);
  }
  for (const rule of parsed.rules) result.rules.push({ ...rule, file } as LoadedRule);
  for (const override of parsed.overrides) result.overrides.push({ ...override, file } as LoadedOverride);
  for (const error of parsed.errors) result.errors.push({ ...error, file });
}

/** Parses and checks one rule file's text (YAML, schema, semantic checks). */
export function parseRuleText(text: string): ParsedRuleFile {
  const file = '';
  const result: RuleLoadResult = { rules: [], overrides: [], files: [], errors: [] };
  const lineCounter = new LineCounter();
  const parsed = parseAllDocuments(text, { lineCounter, prettyErrors: true });
  const documents: Document[] = 'empty' in parsed ? [] : parsed;
  if (documents.length === 0) {
    result.errors.push({ file, line: 1, col: 1, key: '', message: 'holds no YAML document; expected apiVersion, kind and rules' });
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
    if (!validateRuleFile(data)) {
      const kind = (data as { kind?: unknown } | null)?.kind;
      for (const error of usefulErrors(validateRuleFile.errors ?? [], kind)) result.errors.push(locate(file, doc, lineCounter, error, kind));
      continue;
    }
    const semantic = semanticErrorsIn(data as Record<string, unknown>);
    for (const error of semantic) {
      result.errors.push({ file, ...positionOf(doc, lineCounter, error.segments), key: error.segments.join('.'), message: error.message });
    }
    if (semantic.length === 0) collect(file, doc, lineCounter, data as Record<string, unknown>, result);
  }
  const strip = <T extends { file: string }>({ file: _, ...rest }: T) => rest;
  return { rules: result.rules.map(strip), overrides: result.overrides.map(strip), errors: result.errors.map(strip) };
}

function collect(file: string, doc: Document, lines: LineCounter, data: Record<string, unknown>, result: RuleLoadResult): void {
  const lineOf = (segments: (string | number)[]) => positionOf(doc, lines, segments).line;
  if (data.kind === 'RuleSet') {
    const labels = (data.facts ?? {}) as Record<string, string>;
    (data.rules as RuleDefinition[]).forEach((rule, index) => {
      const factLabels = labelsFor(rule, labels);
      result.rules.push({ ...rule, ...(factLabels ? { factLabels } : {}), file, line: lineOf(['rules', index]) });
    });
  } else {
    (data.overrides as RuleOverride[]).forEach((override, index) =>
      result.overrides.push({ ...override, file, line: lineOf(['overrides', index]) }),
    );
  }
}

/** The labels of the facts a rule reads (conditions and evidence), from its file's `facts:` map. */
function labelsFor(rule: RuleDefinition, labels: Record<string, string>): Record<string, string> | undefined {
  const read = [...ruleConditions(rule).flatMap(([, condition]) => factsIn(condition)), ...(rule.evidence ?? [])];
  const found = read.filter((key) => Object.hasOwn(labels, key)).map((key) => [key, labels[key] as string]);
  return found.length === 0 ? undefined : Object.fromEntries(found);
}

function semanticErrorsIn(data: Record<string, unknown>) {
  if (data.kind !== 'RuleSet') return [];
  return (data.rules as RuleDefinition[]).flatMap((rule, index) => ruleErrors(rule, ['rules', index]));
}

const LIST_KEY: Record<string, string> = { RuleSet: 'rules', RuleOverrides: 'overrides' };

/**
 * Drops ajv's "must match then schema" wrappers and repeats, keeping the errors that say what is
 * wrong. With a wrong kind only the kind is reported (the rest follows from it); with the other
 * kind's list key, that key's explanation says it all ("missing overrides" would repeat it).
 */
function usefulErrors(errors: ErrorObject[], kind: unknown): ErrorObject[] {
  const seen = new Set<string>();
  const listKey = typeof kind === 'string' ? LIST_KEY[kind] : undefined;
  const otherListUsed = errors.some((e) => e.instancePath === '' && Object.values(LIST_KEY).includes(String(e.params.additionalProperty)));
  return errors.filter((error) => {
    if (error.keyword === 'if') return false;
    if (listKey === undefined && error.instancePath === '' && (error.keyword === 'additionalProperties' || error.params.missingProperty === 'rules' || error.params.missingProperty === 'overrides')) return false;
    if (otherListUsed && error.instancePath === '' && error.params.missingProperty === listKey) return false;
    const key = `${error.instancePath}|${error.keyword}|${JSON.stringify(error.params)}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function locate(file: string, doc: Document, lines: LineCounter, error: ErrorObject, kind: unknown): RuleFileError {
  const segments = error.instancePath
    .split('/')
    .slice(1)
    .map((part) => part.replaceAll('~1', '/').replaceAll('~0', '~'))
    .map((part) => (/^\d+$/.test(part) ? Number(part) : part));
  const extra = (error.params as { additionalProperty?: string }).additionalProperty;
  const missing = (error.params as { missingProperty?: string }).missingProperty;
  const keyPath = [...segments, ...(extra ? [extra] : [])];
  const position = extra ? positionOfKey(doc, lines, segments, extra) : positionOf(doc, lines, segments);
  const otherKind = segments.length === 0 && extra ? Object.entries(LIST_KEY).find(([, key]) => key === extra)?.[0] : undefined;
  const message = otherKind
    ? `"${extra}:" belongs in a kind: ${otherKind} file, but this file says kind: ${String(kind)}; set kind: ${otherKind}, or put the entries under "${LIST_KEY[String(kind)]}:"`
    : describe(error, extra, missing);
  return { file, ...position, key: keyPath.join('.') || '(top level)', message };
}

function describe(error: ErrorObject, extra: string | undefined, missing: string | undefined): string {
  const params = error.params as { allowedValues?: unknown[]; allowedValue?: unknown };
  if (extra) return `unknown key "${extra}"${suggestion(extra)}`;
  if (missing) return `missing required key "${missing}"`;
  if (params.allowedValues) return `must be one of ${params.allowedValues.join(', ')}`;
  if (params.allowedValue !== undefined) return `must be ${JSON.stringify(params.allowedValue)}`;
  if (error.instancePath.startsWith('/facts/') && error.keyword !== 'propertyNames') {
    return 'a fact label is 3 to 80 characters on one line, without ":", "{" or "}" (reasons print it before a colon)';
  }
  return error.message ?? 'is not valid';
}

const KNOWN_KEYS = [
  'id', 'scope', 'title', 'category', 'severity', 'weight', 'params', 'appliesWhen', 'enoughDataWhen', 'notEnoughData', 'failsWhen', 'observed', 'expected',
  'message', 'evidence', 'remediation', 'references', 'fact', 'op', 'value', 'values', 'param', 'all', 'any', 'not',
  'summary', 'staticSummary', 'text', 'commands', 'seed', 'url', 'note', 'disabled', 'rules', 'overrides', 'apiVersion', 'kind', 'facts',
];

/** The closest known key, never the key itself (a known key in the wrong place is no typo). */
function suggestion(key: string): string {
  return didYouMean(key, KNOWN_KEYS, 2);
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
