// Every failure of the Kubernetes client is a KubeError that says which verb on which resource
// failed and why, in one line fit for a terminal or a log: the server's Status message is kept,
// stripped of control characters and capped (a proxy may send anything).
import { oneLine } from '../text/controls.ts';
import type { ResourceRef } from './resources.ts';

export type Verb = 'get' | 'list' | 'watch' | 'create' | 'patch' | 'delete' | 'deletecollection' | 'log';

/**
 * What went wrong, as a short token (also a metric label): the HTTP status as a string ('403'), or
 * 'timeout', 'stopped' (the client was stopped), 'malformed' (a response that is not what the API
 * sends), 'too-large', 'credentials' (token file, exec plugin), 'invalid' (a bad name or argument),
 * or a network error code ('ECONNREFUSED', 'ECONNRESET', 'CERT_HAS_EXPIRED', …).
 */
export type ErrorCode = string;

export interface KubeErrorFields {
  verb: Verb;
  /** "pods in namespace ci", "nodes \"worker-1\"", "csidrivers.storage.k8s.io". */
  target: string;
  code: ErrorCode;
  status?: number;
  /** The Status object's reason: Forbidden, NotFound, Expired, Gone, TooManyRequests, … */
  reason?: string;
  /** The server's own words (Status.message), or the local cause. */
  detail: string;
  retryAfterMs?: number;
  /** For a network failure: the server that could not be reached (https://10.0.0.1:6443). */
  server?: string;
}

const MAX_DETAIL_CHARS = 400;

/** One line of plain text: the control table (src/text/controls.ts) and U+FFFD (what binary input decodes to) become spaces, capped. */
export function printable(text: string, maxChars = MAX_DETAIL_CHARS): string {
  const clean = oneLine(text.replace(/\ufffd/g, ' '));
  return clean.length > maxChars ? `${clean.slice(0, maxChars - 1)}…` : clean;
}

export class KubeError extends Error {
  readonly verb: Verb;
  readonly target: string;
  readonly code: ErrorCode;
  readonly status: number | undefined;
  readonly reason: string | undefined;
  readonly detail: string;
  readonly retryAfterMs: number | undefined;
  readonly server: string | undefined;

  constructor(fields: KubeErrorFields) {
    const detail = printable(fields.detail);
    super(`cannot ${fields.verb} ${fields.target}: ${describe(fields.code, fields.status, detail, fields.server)}`);
    this.name = 'KubeError';
    this.verb = fields.verb;
    this.target = fields.target;
    this.code = fields.code;
    this.status = fields.status;
    this.reason = fields.reason;
    this.detail = detail;
    this.retryAfterMs = fields.retryAfterMs;
    this.server = fields.server === undefined ? undefined : printable(fields.server, 200);
  }

  /** The short form for logs that already say what was being done: "HTTP 403: pods is forbidden: …". */
  get summary(): string {
    return describe(this.code, this.status, this.detail, this.server);
  }

  /** No answer from the server at all (refused, unroutable, no TCP/TLS connection in time): not a refusal by it. */
  get unreachable(): boolean {
    return this.status === undefined && !LOCAL_CODES.has(this.code);
  }

  /** 410: the resourceVersion (of a watch) or the continue token (of a paginated list) is too old. */
  get expired(): boolean {
    return this.status === 410 || this.reason === 'Expired' || this.reason === 'Gone';
  }

  get forbidden(): boolean {
    return this.status === 403;
  }

  get notFound(): boolean {
    return this.status === 404;
  }

  get conflict(): boolean {
    return this.status === 409;
  }

  get unauthorized(): boolean {
    return this.status === 401;
  }
}

/** Codes whose detail says it all (the rest are network errors). */
const LOCAL_CODES = new Set(['timeout', 'stopped', 'malformed', 'too-large', 'credentials', 'invalid', 'error']);

function describe(code: ErrorCode, status: number | undefined, detail: string, server?: string): string {
  if (status !== undefined) return `HTTP ${status}${detail ? `: ${detail}` : ''}`;
  if (LOCAL_CODES.has(code)) return detail;
  return `cannot reach the API server${server ? ` ${server}` : ''}: ${code}${detail && detail !== code ? ` (${detail})` : ''}`;
}

/** "pods in namespace ci", "nodes \"n1\"", "pods \"p\" in namespace ci" (log: "pods/log …"). */
export function describeTarget(resource: ResourceRef, namespace?: string, name?: string, subresource?: string): string {
  const plural = resource.group ? `${resource.plural}.${resource.group}` : resource.plural;
  const what = subresource ? `${plural}/${subresource}` : plural;
  const named = name === undefined ? what : `${what} "${printable(name, 253)}"`;
  return namespace === undefined ? named : `${named} in namespace ${printable(namespace, 63)}`;
}

/** Retry-After in milliseconds: delta-seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(header: string | string[] | undefined, nowMs: number = Date.now()): number | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined || value.trim() === '') return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - nowMs);
}

/** A short, readable message for any error: a KubeError's summary, else its message without control characters. */
export function describeError(err: unknown): string {
  if (err instanceof KubeError) return err.summary;
  const e = err as { code?: unknown; message?: unknown } | null;
  if (typeof e?.code === 'string' && /^E[A-Z]+$/.test(e.code)) return `cannot reach the API server: ${e.code}`;
  return printable(typeof e?.message === 'string' ? e.message : String(err));
}

/** A 410 on a paginated list's continue token: the snapshot is gone; restart the list from the first page. */
export class ContinueExpired extends KubeError {
  override name = 'ContinueExpired';
}
