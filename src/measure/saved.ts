// `--save` writes a Measurement as JSON; `--compare` reads one back. The file may be anything (an
// old run, a hand edit, another tool's output): it is size-capped and every field compare uses is
// checked, and a problem names the file and the field.
import { writeFile } from 'node:fs/promises';
import { PUBLISHED_FACTS } from '../wire/summary-facts.ts';
import { STARTUP_PHASES } from '../workload/snapshot.ts';
import type { RecordedFact } from './advisor.ts';
import { PLACEMENTS } from './objects.ts';
import { MeasureError } from './preflight.ts';
import { openRegularFile } from '../host/open-checked.ts';
import { MEASUREMENT_KIND, MEASUREMENT_SCHEMA_VERSION, type Measurement, type PhaseStats } from './result.ts';

const MAX_FILE_BYTES = 8 * 1024 * 1024;

type Obj = Record<string, unknown>;

class Invalid extends Error {}

function isObject(value: unknown): value is Obj {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function field<T>(object: Obj, key: string, check: (v: unknown) => v is T, what: string): T {
  const value = object[key];
  if (!check(value)) throw new Invalid(`${key} is not ${what}`);
  return value;
}

const isString = (v: unknown): v is string => typeof v === 'string' && v.length <= 1024;
const isMs = (v: unknown): v is number | null => v === null || (typeof v === 'number' && Number.isFinite(v) && v >= 0);
const isCount = (v: unknown): v is number => Number.isInteger(v) && (v as number) >= 0;

function stats(value: unknown, where: string): PhaseStats {
  if (!isObject(value)) throw new Invalid(`${where} is not an object`);
  const out = { samples: 0, p50Ms: null, p90Ms: null, p99Ms: null, maxMs: null } as PhaseStats;
  out.samples = field(value, 'samples', isCount, 'a count');
  for (const key of ['p50Ms', 'p90Ms', 'p99Ms', 'maxMs'] as const) {
    if (!isMs(value[key])) throw new Invalid(`${where}.${key} is not a number of milliseconds or null`);
    out[key] = value[key] as number | null;
  }
  return out;
}

function recordedFact(value: unknown, key: string): RecordedFact {
  if (!isObject(value)) throw new Invalid(`advisor.facts.${key} is not an object`);
  if (typeof value.unknown === 'string') return { unknown: value.unknown.slice(0, 400) };
  const v = value.value;
  const plain = v === null || typeof v === 'number' || typeof v === 'boolean' || (typeof v === 'string' && v.length <= 400)
    || (Array.isArray(v) && v.length <= 16 && v.every((x) => typeof x === 'string' && x.length <= 64));
  if (!plain || !isString(value.from)) throw new Invalid(`advisor.facts.${key} is neither {value, from} nor {unknown}`);
  return { value: v as RecordedFact extends { value: infer V } ? V : never, from: value.from };
}

/** The parts of a saved Measurement that compare reads, checked. */
export function checkMeasurement(value: unknown): Measurement {
  if (!isObject(value)) throw new Invalid('the file is not a JSON object');
  if (value.kind !== MEASUREMENT_KIND) throw new Invalid(`kind is not ${MEASUREMENT_KIND} (not a file written by measure pod-startup --save)`);
  if (value.schemaVersion !== MEASUREMENT_SCHEMA_VERSION) throw new Invalid(`schemaVersion ${JSON.stringify(value.schemaVersion)?.slice(0, 20)}: this version reads ${MEASUREMENT_SCHEMA_VERSION}`);
  field(value, 'node', isString, 'a string');
  field(value, 'startedAt', isString, 'a string');
  const settings = field(value, 'settings', isObject, 'an object');
  field(settings, 'pods', isCount, 'a count');
  field(settings, 'image', isString, 'a string');
  if (!PLACEMENTS.includes(settings.placement as never)) throw new Invalid('settings.placement is not scheduler or node-name');
  if (settings.pvcStorageClass !== null && !isString(settings.pvcStorageClass)) throw new Invalid('settings.pvcStorageClass is not a string or null');
  if (value.outcome !== 'complete' && value.outcome !== 'timeout') throw new Invalid('outcome is not complete or timeout');
  if (value.clusterVersion !== null && !isString(value.clusterVersion)) throw new Invalid('clusterVersion is not a string or null');
  const phases = field(value, 'phases', isObject, 'an object');
  for (const phase of STARTUP_PHASES) phases[phase] = stats(phases[phase], `phases.${phase}`);
  if (value.attach !== null) value.attach = stats(value.attach, 'attach');
  // Written since the watch-receive timing; older files have neither.
  if (value.statusDelay !== undefined) value.statusDelay = stats(value.statusDelay, 'statusDelay');
  if (value.validity !== undefined) {
    const v = value.validity;
    if (!isObject(v) || typeof v.valid !== 'boolean' || !Array.isArray(v.problems) || !v.problems.every(isString)) throw new Invalid('validity is not {valid, problems}');
  }
  const slo = field(value, 'slo', isObject, 'an object');
  if (!isMs(slo.p99TotalMs) || typeof slo.met !== 'boolean') throw new Invalid('slo has no p99TotalMs and met');
  const counts = field(value, 'counts', isObject, 'an object');
  for (const key of ['created', 'ready']) field(counts, key, isCount, 'a count');
  const advisor = field(value, 'advisor', isObject, 'an object');
  const facts = field(advisor, 'facts', isObject, 'an object');
  for (const key of PUBLISHED_FACTS) facts[key] = key in facts ? recordedFact(facts[key], key) : { unknown: 'not recorded in this file' };
  return value as unknown as Measurement;
}

export async function readMeasurement(file: string, flag = '--compare'): Promise<Measurement> {
  let text: string;
  try {
    const checked = await openRegularFile(file);
    if (!checked.ok) throw new MeasureError(`${flag} ${file}: not a regular file`);
    try {
      if (checked.info.size > MAX_FILE_BYTES) throw new MeasureError(`${flag} ${file}: ${checked.info.size} bytes, more than a measurement is (${MAX_FILE_BYTES} at most)`);
      text = await checked.handle.readFile('utf8');
    } finally {
      await checked.handle.close();
    }
  } catch (err) {
    if (err instanceof MeasureError) throw err;
    throw new MeasureError(`${flag} ${file}: cannot read it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new MeasureError(`${flag} ${file}: not JSON; give a file written by measure pod-startup --save`);
  }
  try {
    return checkMeasurement(parsed);
  } catch (err) {
    if (err instanceof Invalid) throw new MeasureError(`${flag} ${file}: ${err.message}`);
    throw err;
  }
}

/** Writes the measurement (0644: nothing secret in it). */
export async function saveMeasurement(file: string, measurement: Measurement): Promise<void> {
  try {
    await writeFile(file, `${JSON.stringify(measurement, null, 2)}\n`, { mode: 0o644 });
  } catch (err) {
    throw new MeasureError(`--save ${file}: cannot write it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
}
