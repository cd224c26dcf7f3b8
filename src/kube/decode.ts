// Decoding what the server sent: list bodies, watch lines and Status objects. Each check names the
// defect (never echoes the input); the client turns a defect into a KubeError with code 'malformed'.
import { isPlainObject, kindOf, objectProblem, type KubeList, type KubeObject, type WatchEvent } from './objects.ts';
import { parseProjected, type ObjectShape, type Shape } from './projection.ts';

export class Malformed extends Error {}

function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new Malformed(`${what}: not JSON`);
  }
}

/** One object; `nameRequired` false for create responses that have none (SelfSubjectReview and other reviews). */
export function decodeObject<T extends KubeObject>(text: string, nameRequired = true): T {
  const value = parseJson(text, 'response');
  if (!nameRequired && isPlainObject(value) && (value.metadata === undefined || (isPlainObject(value.metadata) && value.metadata.name === undefined))) {
    return { ...value, metadata: { ...(value.metadata as object | undefined) } } as T;
  }
  const problem = objectProblem(value);
  if (problem) throw new Malformed(`response: ${problem}`);
  return value as T;
}

/** A list body: items must all be objects with metadata and a name; `items: null` is an empty list. */
export function decodeList<T extends KubeObject>(text: string): KubeList<T> & { continue?: string } {
  return checkList<T>(parseJson(text, 'list'));
}

/** A list body decoded from its bytes keeping only `item`'s fields of each item (src/kube/projection.ts). */
export function decodeListBytes<T extends KubeObject>(bytes: Buffer, item: ObjectShape): KubeList<T> & { continue?: string } {
  return checkList<T>(parseProjected(bytes, listShape(item), 'list'));
}

const LIST_META: Shape = { fields: { resourceVersion: 'scalar', continue: 'scalar' } };
const listShapes = new WeakMap<ObjectShape, Shape>();

function listShape(item: ObjectShape): Shape {
  let shape = listShapes.get(item);
  if (!shape) listShapes.set(item, shape = { fields: { metadata: LIST_META, items: { items: item, max: Number.MAX_SAFE_INTEGER } } });
  return shape;
}

function checkList<T extends KubeObject>(value: unknown): KubeList<T> & { continue?: string } {
  if (!isPlainObject(value)) throw new Malformed(`list: ${kindOf(value)}`);
  const meta = value.metadata ?? {};
  if (!isPlainObject(meta)) throw new Malformed(`list: metadata is ${kindOf(meta)}`);
  if (meta.resourceVersion !== undefined && typeof meta.resourceVersion !== 'string') throw new Malformed(`list: metadata.resourceVersion is ${kindOf(meta.resourceVersion)}`);
  if (meta.continue !== undefined && typeof meta.continue !== 'string') throw new Malformed(`list: metadata.continue is ${kindOf(meta.continue)}`);
  const items = value.items ?? [];
  if (!Array.isArray(items)) throw new Malformed(`list: items is ${kindOf(items)}`);
  for (let i = 0; i < items.length; i++) {
    const problem = objectProblem(items[i]);
    if (problem) throw new Malformed(`list: items[${i}] ${problem}`);
  }
  return {
    resourceVersion: (meta.resourceVersion as string | undefined) ?? '',
    items: items as T[],
    ...(meta.continue ? { continue: meta.continue as string } : {}),
  };
}

export interface StatusInfo {
  code?: number;
  reason?: string;
  message?: string;
}

/** A Status object (an error body, or the object of a watch ERROR event); anything else gives nothing. */
export function statusOf(value: unknown): StatusInfo {
  if (!isPlainObject(value)) return {};
  return {
    ...(typeof value.code === 'number' ? { code: value.code } : {}),
    ...(typeof value.reason === 'string' ? { reason: value.reason } : {}),
    ...(typeof value.message === 'string' ? { message: value.message } : {}),
  };
}

export function statusFromBody(text: string): StatusInfo {
  try {
    return statusOf(JSON.parse(text));
  } catch {
    return {};
  }
}

const EVENT_TYPES = new Set(['ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK']);

export type DecodedLine<T extends KubeObject> = { event: WatchEvent<T> } | { error: StatusInfo };

/**
 * One watch line: ADDED/MODIFIED/DELETED with an object that has metadata, a name and a
 * resourceVersion; BOOKMARK with metadata.resourceVersion; ERROR with a Status.
 */
export function decodeWatchLine<T extends KubeObject>(line: string): DecodedLine<T> {
  return checkWatchEvent<T>(parseJson(line, 'watch event'));
}

/** A watch line decoded from its bytes, keeping only `object`'s fields of the object (and a Status's). */
export function decodeWatchBytes<T extends KubeObject>(line: Buffer, object: ObjectShape): DecodedLine<T> {
  return checkWatchEvent<T>(parseProjected(line, watchShape(object), 'watch event'));
}

const STATUS_FIELDS = { code: 'scalar', reason: 'scalar', message: 'scalar' } as const;
const watchShapes = new WeakMap<ObjectShape, Shape>();

/** An event's object shape with a Status's fields too (an ERROR event's object). */
function watchShape(object: ObjectShape): Shape {
  let shape = watchShapes.get(object);
  if (!shape) watchShapes.set(object, shape = { fields: { type: 'scalar', object: { ...object, fields: { ...object.fields, ...STATUS_FIELDS } } } });
  return shape;
}

function checkWatchEvent<T extends KubeObject>(value: unknown): DecodedLine<T> {
  if (!isPlainObject(value)) throw new Malformed(`watch event: ${kindOf(value)}`);
  const { type, object } = value;
  if (type === 'ERROR') {
    const status = statusOf(object);
    if (status.code === undefined) throw new Malformed('watch event: ERROR without a Status');
    return { error: status };
  }
  if (typeof type !== 'string' || !EVENT_TYPES.has(type)) throw new Malformed(`watch event: type is ${typeof type === 'string' ? 'unknown' : kindOf(type)}`);
  if (type === 'BOOKMARK') {
    const meta = isPlainObject(object) ? object.metadata : undefined;
    if (!isPlainObject(meta) || typeof meta.resourceVersion !== 'string') throw new Malformed('watch event: BOOKMARK without metadata.resourceVersion');
    return { event: { type, object: object as T } };
  }
  const problem = objectProblem(object, true);
  if (problem) throw new Malformed(`watch event: ${type} object ${problem}`);
  return { event: { type: type as WatchEvent['type'], object: object as T } };
}
