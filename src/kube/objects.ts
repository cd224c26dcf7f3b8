// Plain shapes of what the API server sends (JSON decoded, no model classes), and the checks every
// object passes before any cache or caller sees it: a watch line or list item that is not an object
// with metadata and a name is refused as a whole, never half-used.

export interface ObjectMeta {
  name: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  [field: string]: unknown;
}

export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  /** The rest (spec, status, data, …), as JSON decoded: read defensively. */
  [field: string]: any;
}

export interface KubeList<T extends KubeObject = KubeObject> {
  resourceVersion: string;
  items: T[];
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK';

export interface WatchEvent<T extends KubeObject = KubeObject> {
  type: WatchEventType;
  object: T;
}

/** An API object's fields read one by one: each is checked where it is read (the one such type). */
export type Obj = Record<string, any>;

/** A Node as the agent reads it. */
export interface NodeObject extends KubeObject {
  spec?: Obj;
  status?: Obj;
}

/** A core/v1 Event as the agent creates it. */
export interface EventObject extends KubeObject {
  involvedObject: { apiVersion?: string; kind?: string; name: string; namespace?: string; uid?: string };
  reason: string;
  type: 'Normal' | 'Warning';
  message: string;
  source?: { component?: string; host?: string };
  reportingComponent?: string;
  reportingInstance?: string;
  action?: string;
  firstTimestamp?: string;
  lastTimestamp?: string;
  count?: number;
}

/** A defect in what the server sent (decode.ts, projection.ts); the client turns it into a KubeError 'malformed'. */
export class Malformed extends Error {}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function stringMap(value: unknown): boolean {
  return isPlainObject(value) && Object.values(value).every((v) => typeof v === 'string');
}

const OPTIONAL_STRINGS = ['namespace', 'uid', 'resourceVersion', 'creationTimestamp', 'deletionTimestamp'] as const;

/**
 * Why `value` is not a Kubernetes object (undefined when it is): an object whose metadata is an
 * object with a non-empty string name; namespace, uid, resourceVersion strings when present;
 * labels and annotations maps of strings when present. `requireVersion`: watch events carry one.
 */
export function objectProblem(value: unknown, requireVersion = false): string | undefined {
  if (!isPlainObject(value)) return `not an object (${kindOf(value)})`;
  const meta = value.metadata;
  if (!isPlainObject(meta)) return `metadata is ${kindOf(meta)}`;
  if (typeof meta.name !== 'string' || meta.name === '') return `metadata.name is ${kindOf(meta.name)}`;
  for (const key of OPTIONAL_STRINGS) {
    if (meta[key] !== undefined && typeof meta[key] !== 'string') return `metadata.${key} is ${kindOf(meta[key])}`;
  }
  if (requireVersion && typeof meta.resourceVersion !== 'string') return 'metadata.resourceVersion is missing';
  for (const key of ['labels', 'annotations'] as const) {
    if (meta[key] !== undefined && meta[key] !== null && !stringMap(meta[key])) return `metadata.${key} is not a map of strings`;
  }
  return undefined;
}

/** A description of a JSON value's type for messages: never the value itself. */
export function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return value === '' ? 'empty' : 'a string';
  if (value === undefined) return 'missing';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/** Numeric resourceVersions (etcd revisions) compare as numbers; opaque ones do not compare (undefined). */
export function compareResourceVersions(a: string | undefined, b: string | undefined): number | undefined {
  if (a === undefined || b === undefined || !/^\d{1,30}$/.test(a) || !/^\d{1,30}$/.test(b)) return undefined;
  const x = BigInt(a);
  const y = BigInt(b);
  return x === y ? 0 : x < y ? -1 : 1;
}

/** "namespace/name" or "name": the key of an object in a cache. */
export function objectKey(obj: KubeObject): string {
  return obj.metadata.namespace ? `${obj.metadata.namespace}/${obj.metadata.name}` : obj.metadata.name;
}
