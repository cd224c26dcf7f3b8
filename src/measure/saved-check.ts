// A saved measurement checked field by field before anything reads it: `--compare` reads the
// figures, `measure show` draws every pod. The file may be anything (an old run, a hand edit,
// another tool's output, a hostile one): each field a view uses is checked, a missing optional one
// gets its empty value, and a problem names the field.
import { PUBLISHED_FACTS } from '../wire/summary-facts.ts';
import { STARTUP_PHASES } from '../workload/snapshot.ts';
import { MILESTONES } from '../workload/pod-milestones.ts';
import type { RecordedFact } from './advisor.ts';
import { PLACEMENTS } from './objects.ts';
import { MEASUREMENT_KIND, MEASUREMENT_SCHEMA_VERSION, largest, type Measurement, type PhaseStats } from './result.ts';

type Obj = Record<string, unknown>;

export class Invalid extends Error {}

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
const isDuration = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v) && v >= 0;
const isCount = (v: unknown): v is number => Number.isInteger(v) && (v as number) >= 0;
const IMAGE_SOURCES = ['flag', 'node', 'fallback'];

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

function milestones(value: unknown, where: string): void {
  if (value === undefined) return;
  if (!isObject(value)) throw new Invalid(`${where} is not an object`);
  for (const [name, mark] of Object.entries(value)) {
    if (!(MILESTONES as readonly string[]).includes(name)) throw new Invalid(`${where} names no milestone "${name.slice(0, 40)}"`);
    if (!isObject(mark) || typeof mark.seenMs !== 'number' || !Number.isFinite(mark.seenMs) || (mark.kubeletMs !== null && (typeof mark.kubeletMs !== 'number' || !Number.isFinite(mark.kubeletMs)))) {
      throw new Invalid(`${where}.${name} is not {seenMs, kubeletMs}`);
    }
  }
}

/** One pod's sample (its phases drawn as a bar); `where` is "samples[3]". */
function sample(value: unknown, where: string): void {
  if (!isObject(value)) throw new Invalid(`${where} is not an object`);
  if (!isString(value.pod)) throw new Invalid(`${where}.pod is not a pod name`);
  const phases = value.phases;
  if (!isObject(phases)) throw new Invalid(`${where}.phases is not an object`);
  for (const phase of STARTUP_PHASES) if (!isDuration(phases[phase])) throw new Invalid(`${where}.phases.${phase} is not a number of milliseconds`);
  if (value.statusDelayMs !== undefined && !isDuration(value.statusDelayMs)) throw new Invalid(`${where}.statusDelayMs is not a number of milliseconds`);
  if (value.readySeenBy !== undefined && value.readySeenBy !== 'list') throw new Invalid(`${where}.readySeenBy is not "list"`);
  milestones(value.milestones, `${where}.milestones`);
}

function samples(value: Obj, key: 'samples' | 'slowest'): void {
  if (value[key] === undefined) value[key] = [];
  const list = value[key];
  if (!Array.isArray(list)) throw new Invalid(`${key} is not a list`);
  list.forEach((s, i) => sample(s, `${key}[${i}]`));
}

function groups(value: Obj, key: 'notReady' | 'createErrors'): void {
  if (value[key] === undefined) value[key] = [];
  const list = value[key];
  if (!Array.isArray(list) || !list.every((g) => isObject(g) && isString(g.reason) && isCount(g.pods) && isString(g.example ?? ''))) {
    throw new Invalid(`${key} is not a list of {reason, pods, example}`);
  }
}

function settings(value: Obj): void {
  const s = field(value, 'settings', isObject, 'an object');
  field(s, 'pods', isCount, 'a count');
  field(s, 'image', isString, 'a string');
  if (!PLACEMENTS.includes(s.placement as never)) throw new Invalid('settings.placement is not scheduler or node-name');
  if (s.pvcStorageClass !== null && !isString(s.pvcStorageClass)) throw new Invalid('settings.pvcStorageClass is not a string or null');
  s.imageSource ??= 'flag';
  if (!IMAGE_SOURCES.includes(s.imageSource as string)) throw new Invalid('settings.imageSource is not flag, node or fallback');
  s.timeoutSeconds ??= 0;
  if (!isCount(s.timeoutSeconds)) throw new Invalid('settings.timeoutSeconds is not a count');
}

function verdict(value: Obj): void {
  const slo = field(value, 'slo', isObject, 'an object');
  if (!isMs(slo.p99TotalMs) || typeof slo.met !== 'boolean') throw new Invalid('slo has no p99TotalMs and met');
  slo.thresholdMs ??= 5000;
  slo.largestPhase ??= null;
  if (!isDuration(slo.thresholdMs) || (slo.largestPhase !== null && !isString(slo.largestPhase)) || (slo.note !== undefined && !isString(slo.note))) {
    throw new Invalid('slo.thresholdMs, slo.largestPhase or slo.note is not what a run writes');
  }
  if (value.validity !== undefined) {
    const v = value.validity;
    if (!isObject(v) || typeof v.valid !== 'boolean' || !Array.isArray(v.problems) || !v.problems.every(isString)) throw new Invalid('validity is not {valid, problems}');
  }
  if (value.throttling !== undefined && !isString(value.throttling)) throw new Invalid('throttling is not a string');
}

function counts(value: Obj): void {
  const c = field(value, 'counts', isObject, 'an object');
  for (const key of ['created', 'ready']) field(c, key, isCount, 'a count');
  for (const key of ['requested', 'notReady', 'failedToCreate']) {
    c[key] ??= 0;
    field(c, key, isCount, 'a count');
  }
}

function advisor(value: Obj): void {
  const a = field(value, 'advisor', isObject, 'an object');
  const facts = field(a, 'facts', isObject, 'an object');
  for (const key of PUBLISHED_FACTS) facts[key] = key in facts ? recordedFact(facts[key], key) : { unknown: 'not recorded in this file' };
  a.state ??= 'none';
  if (!['ok', 'none', 'unreadable'].includes(a.state as string)) throw new Invalid('advisor.state is not ok, none or unreadable');
  for (const key of ['score', 'grade']) {
    a[key] ??= null;
    if (a[key] !== null && !isString(a[key]) && !isCount(a[key])) throw new Invalid(`advisor.${key} is not a score or grade`);
  }
  if (a.problem !== undefined && !isString(a.problem)) throw new Invalid('advisor.problem is not a string');
}

function versions(value: Obj): void {
  for (const key of ['clusterVersion', 'kubeletVersion']) {
    value[key] ??= null;
    if (value[key] !== null && !isString(value[key])) throw new Invalid(`${key} is not a string or null`);
  }
  const api = (value.api ??= { requests: 0, failed: [] });
  if (!isObject(api) || !isCount(api.requests)) throw new Invalid('api is not {requests, failed}');
}

/** The measurement in a saved file, every field a view or the comparison reads checked. */
export function checkMeasurement(value: unknown): Measurement {
  if (!isObject(value)) throw new Invalid('the file is not a JSON object');
  if (value.kind !== MEASUREMENT_KIND) throw new Invalid(`kind is not ${MEASUREMENT_KIND} (not a file written by measure pod-startup --save)`);
  if (value.schemaVersion !== MEASUREMENT_SCHEMA_VERSION) throw new Invalid(`schemaVersion ${JSON.stringify(value.schemaVersion)?.slice(0, 20)}: this version reads ${MEASUREMENT_SCHEMA_VERSION}`);
  field(value, 'node', isString, 'a string');
  field(value, 'startedAt', isString, 'a string');
  settings(value);
  if (value.outcome !== 'complete' && value.outcome !== 'timeout') throw new Invalid('outcome is not complete or timeout');
  versions(value);
  const phases = field(value, 'phases', isObject, 'an object');
  for (const phase of STARTUP_PHASES) phases[phase] = stats(phases[phase], `phases.${phase}`);
  value.attach ??= null;
  if (value.attach !== null) value.attach = stats(value.attach, 'attach');
  // Written since the watch-receive timing; older files have neither.
  if (value.statusDelay !== undefined) value.statusDelay = stats(value.statusDelay, 'statusDelay');
  verdict(value);
  // The largest phase as this version names it (statusDelay among the parts), whatever version wrote the file.
  (value.slo as Obj).largestPhase = largest(value as unknown as Measurement);
  counts(value);
  samples(value, 'samples');
  samples(value, 'slowest');
  groups(value, 'notReady');
  groups(value, 'createErrors');
  advisor(value);
  return value as unknown as Measurement;
}
