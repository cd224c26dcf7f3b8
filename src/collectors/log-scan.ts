// Scans a log file backwards from its end in fixed-size chunks, stopping at the start of the time
// window or after a byte budget: time and memory stay bounded however large the file is.
import type { HostRoot } from '../host/host-root.ts';
import { eachLine, firstLines } from '../text/lines.ts';
import { lineTime, matchThrottle, throttledRequest, THROTTLE_HINT, type ThrottledRequest, type ThrottleFormat } from './throttle-lines.ts';

export interface ScanWindow {
  startMs: number;
  endMs: number;
  referenceYear: number;
}

export interface ScanLimits {
  chunkBytes: number;
  budgetBytes: number;
}

export const DEFAULT_LIMITS: ScanLimits = { chunkBytes: 1024 * 1024, budgetBytes: 32 * 1024 * 1024 };
const MAX_LINE_BYTES = 256 * 1024;

/** One throttled request as kept for output: its time, wait, verb and path; never the raw line. */
export interface ThrottleHit extends ThrottledRequest {
  waitMs: number;
  format: ThrottleFormat;
  atMs: number | undefined;
}

/** Running totals, so memory stays flat however many lines match. */
export interface ThrottleTally {
  count: number;
  maxWaitMs: number;
  /** The longest wait (its parts are copies, so they do not pin the chunk they were cut from). */
  worst?: ThrottleHit;
  formats: Set<ThrottleFormat>;
}

export function newTally(): ThrottleTally {
  return { count: 0, maxWaitMs: 0, formats: new Set() };
}

/** Counts a throttle line; the request it names is read only from the line that becomes the longest wait. */
export function addHit(tally: ThrottleTally, hit: Omit<ThrottleHit, keyof ThrottledRequest>, line: string): void {
  tally.count++;
  tally.formats.add(hit.format);
  if (tally.worst === undefined || hit.waitMs > tally.maxWaitMs) {
    tally.maxWaitMs = hit.waitMs;
    const request = throttledRequest(line);
    const copy = (text: string | null): string | null => (text === null ? null : Buffer.from(text).toString());
    tally.worst = { ...hit, verb: copy(request.verb), path: copy(request.path) };
  }
}

/** "2026-11-30T13:59:00.120Z waited 2394 ms before GET /api/v1/namespaces/default/pods". */
export function describeHit(hit: ThrottleHit): string {
  const at = hit.atMs === undefined ? 'at an unknown time' : new Date(hit.atMs).toISOString();
  const request = hit.verb || hit.path ? ` before ${[hit.verb ?? '?', hit.path ?? '?'].join(' ')}` : '';
  return `${at} waited ${Math.round(hit.waitMs)} ms${request}`;
}

export function mergeTallies(into: ThrottleTally, from: ThrottleTally): void {
  if (from.worst && (into.worst === undefined || from.maxWaitMs > into.maxWaitMs)) {
    into.worst = from.worst;
    into.maxWaitMs = from.maxWaitMs;
  }
  into.count += from.count;
  for (const format of from.formats) into.formats.add(format);
}

export interface FileScan {
  path: string;
  scannedBytes: number;
  sizeBytes: number;
  /** True when the scan reached lines older than the window or the file's start. */
  coveredWindow: boolean;
  tally: ThrottleTally;
  /** The newest line time seen (for a snapshot, the time the host was captured). */
  newestMs: number | undefined;
  error?: string;
}

/** Lines of text outside [start, end] are dropped; a line without a time counts as inside. */
export function collectHits(text: string, window: ScanWindow, keep: (line: string) => boolean, tally: ThrottleTally, maxLines = Infinity): void {
  if (!THROTTLE_HINT.test(text)) return;
  eachLine(text, { maxLines, maxLineChars: MAX_LINE_BYTES }, (line) => {
    const match = matchThrottle(line);
    if (!match || !keep(line)) return;
    const atMs = lineTime(line, window.referenceYear);
    if (atMs !== undefined && (atMs < window.startMs || atMs > window.endMs)) return;
    addHit(tally, { ...match, atMs }, line);
  });
}

/** The time of the first dated line in `lines` (the oldest in a chunk). */
function firstTime(lines: string[], year: number): number | undefined {
  for (const line of lines) {
    const t = lineTime(line, year);
    if (t !== undefined) return t;
  }
  return undefined;
}

export async function newestLineTime(host: HostRoot, path: string, year: number): Promise<number | undefined> {
  const tail = await host.readTail(path, { maxBytes: 64 * 1024 });
  if (!tail.ok) return undefined;
  return newestIn(tail.data.toString('utf8'), year, Infinity);
}

/**
 * Reads `path` backwards chunk by chunk. A chunk whose oldest line is still inside the window is only
 * searched for throttle messages; the chunk that crosses the window start is filtered line by line.
 */
export async function scanLogBackwards(
  host: HostRoot,
  path: string,
  window: ScanWindow,
  limits: ScanLimits = DEFAULT_LIMITS,
  keep: (line: string) => boolean = () => true,
): Promise<FileScan> {
  const scan: FileScan = { path, scannedBytes: 0, sizeBytes: 0, coveredWindow: false, tally: newTally(), newestMs: undefined };
  let end: number | undefined;
  let carry = Buffer.alloc(0);
  while (scan.scannedBytes < limits.budgetBytes) {
    const tail = await host.readTail(path, { maxBytes: Math.min(limits.chunkBytes, limits.budgetBytes - scan.scannedBytes), ...(end === undefined ? {} : { end }) });
    if (!tail.ok) return { ...scan, error: tail.reason };
    scan.sizeBytes = tail.size;
    scan.scannedBytes += tail.data.length;
    let buffer = carry.length > 0 ? Buffer.concat([tail.data, carry]) : tail.data;
    carry = Buffer.alloc(0);
    if (tail.start > 0) {
      const newline = buffer.indexOf(10);
      // A line longer than MAX_LINE_BYTES is not a log line we can use: drop it rather than grow.
      if (newline < 0) {
        if (buffer.length <= MAX_LINE_BYTES) carry = Buffer.from(buffer);
        end = tail.start;
        continue;
      }
      carry = Buffer.from(buffer.subarray(0, newline));
      buffer = buffer.subarray(newline + 1);
    }
    const text = buffer.toString('utf8');
    if (scan.newestMs === undefined) scan.newestMs = newestIn(text, window.referenceYear);
    const oldest = firstTime(firstLines(text, 50), window.referenceYear);
    const crossesStart = oldest !== undefined && oldest < window.startMs;
    collectHits(text, window, keep, scan.tally);
    if (crossesStart || tail.start === 0) {
      scan.coveredWindow = true;
      break;
    }
    end = tail.start;
  }
  return scan;
}

/** The time of the newest dated line among the last `maxLines` lines, read from the end without splitting. */
function newestIn(text: string, year: number, maxLines = 50): number | undefined {
  let end = text.length;
  for (let seen = 0; seen < maxLines && end >= 0; seen++) {
    const start = end === 0 ? 0 : text.lastIndexOf('\n', end - 1) + 1;
    if (end - start <= MAX_LINE_BYTES) {
      const t = lineTime(text.slice(start, end), year);
      if (t !== undefined) return t;
    }
    if (start === 0) break;
    end = start - 1;
  }
  return undefined;
}
