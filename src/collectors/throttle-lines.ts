// Recognises client-go's client-side throttling messages in log lines, whatever wraps them (CRI log
// format, Docker json-file, journal short-iso, syslog) and reads each line's time.
//   1.17–1.20  Throttling request took 298.07161ms, request: PUT:https://…
//   1.21–1.32  Waited for 1.19s due to client-side throttling, not priority and fairness, request: GET:https://…
//   1.21–1.32  Waited for 1s, retries: 1, retry-after: 1s - request: GET:https://…       (retry variant)
//   1.33+      "Waited before sending request" delay="1.19s" reason="client-side throttling, …" verb="GET" URL="…"

export type ThrottleFormat = 'throttling-request-took' | 'waited-for' | 'waited-for-retry' | 'structured';

export interface ThrottleMatch {
  waitMs: number;
  format: ThrottleFormat;
}

/** Cheap test for a chunk of text: does it hold anything a throttle pattern could match? */
export const THROTTLE_HINT = /Throttling request took|Waited for |Waited before sending request/;

const PATTERNS: { format: ThrottleFormat; regex: RegExp }[] = [
  { format: 'throttling-request-took', regex: /Throttling request took ([0-9.]+[a-zµμ]+(?:[0-9.]+[a-zµμ]+)*), request: / },
  { format: 'waited-for', regex: /Waited for ([0-9.]+[a-zµμ]+(?:[0-9.]+[a-zµμ]+)*) due to client-side throttling/ },
  { format: 'waited-for-retry', regex: /Waited for ([0-9.]+[a-zµμ]+(?:[0-9.]+[a-zµμ]+)*), [^\n]*? - request: / },
  { format: 'structured', regex: /Waited before sending request\\?"[^\n]*?\bdelay=\\?"([0-9.]+[a-zµμ]+(?:[0-9.]+[a-zµμ]+)*)\\?"/ },
];

const UNIT_MS: Record<string, number> = { ns: 1e-6, us: 1e-3, 'µs': 1e-3, 'μs': 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Go's time.Duration text ("298.07161ms", "1m2.5s", "500µs") in milliseconds. */
export function parseGoDuration(text: string): number | undefined {
  if (!/^(?:[0-9]*\.?[0-9]+(?:ns|us|µs|μs|ms|s|m|h))+$/.test(text)) return undefined;
  let total = 0;
  for (const [, amount, unit] of text.matchAll(/([0-9]*\.?[0-9]+)(ns|us|µs|μs|ms|s|m|h)/g)) total += Number(amount) * (UNIT_MS[unit as string] as number);
  return Number.isFinite(total) ? total : undefined;
}

export function matchThrottle(line: string): ThrottleMatch | undefined {
  if (!THROTTLE_HINT.test(line)) return undefined;
  for (const { format, regex } of PATTERNS) {
    const match = regex.exec(line);
    const waitMs = match ? parseGoDuration(match[1] as string) : undefined;
    if (waitMs !== undefined) return { waitMs, format };
  }
  return undefined;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** A line's time in epoch ms, from its wrapper or its klog header; undefined when it has none. */
export function lineTime(line: string, referenceYear: number): number | undefined {
  const iso = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(\.\d+)?(Z|[+-]\d{2}:?\d{2})?\s/.exec(line);
  if (iso) {
    const fraction = (iso[2] ?? '').slice(0, 4);
    const zone = (iso[3] ?? 'Z').replace(/^([+-]\d{2})(\d{2})$/, '$1:$2');
    const ms = Date.parse(`${iso[1]}${fraction}${zone}`);
    return Number.isNaN(ms) ? undefined : ms;
  }
  if (line.startsWith('{')) return dockerJsonTime(line);
  const syslog = /^([A-Z][a-z]{2}) +(\d{1,2}) (\d{2}):(\d{2}):(\d{2})\s/.exec(line);
  if (syslog) return utc(referenceYear, MONTHS.indexOf(syslog[1] as string), Number(syslog[2]), syslog.slice(3, 6).map(Number));
  const klog = /^[IWEF](\d{2})(\d{2}) (\d{2}):(\d{2}):(\d{2})/.exec(line);
  if (klog) return utc(referenceYear, Number(klog[1]) - 1, Number(klog[2]), klog.slice(3, 6).map(Number));
  return undefined;
}

function utc(year: number, month: number, day: number, [h, m, s]: number[]): number | undefined {
  if (month < 0 || month > 11) return undefined;
  const ms = Date.UTC(year, month, day, h, m, s);
  return Number.isNaN(ms) ? undefined : ms;
}

/** Docker's json-file driver: {"log":"…\n","stream":"stderr","time":"2021-01-20T10:00:00.123456789Z"}. */
function dockerJsonTime(line: string): number | undefined {
  const time = /"time":"([^"]+)"/.exec(line)?.[1];
  if (!time) return undefined;
  const ms = Date.parse(time.replace(/(\.\d{3})\d+/, '$1'));
  return Number.isNaN(ms) ? undefined : ms;
}

/** What a throttle line may contribute to the output: never the line itself (it may carry a token). */
export interface ThrottledRequest {
  verb: string | null;
  /** The URL path only: no scheme, host, query string or fragment; token-like segments replaced. */
  path: string | null;
}

const VERBS = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS']);
const MAX_PATH_CHARS = 160;
export const REDACTED = '<redacted>';

/** Path segments of Kubernetes URLs are DNS names (lowercase); anything else, or a long random-looking string, may be a secret. */
function tokenLike(segment: string): boolean {
  if (segment === '') return false;
  if (!/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(segment) || segment.length > 253) return true;
  return segment.length >= 24 && /^[a-z0-9]+$/.test(segment) && /[0-9]/.test(segment) && /[a-z]/.test(segment);
}

function safePath(url: string): string | null {
  let pathname: string;
  try {
    pathname = new URL(url).pathname;
  } catch {
    return null;
  }
  const path = pathname.split('/').map((segment) => (tokenLike(segment) ? REDACTED : segment)).join('/');
  return path.length > MAX_PATH_CHARS ? `${path.slice(0, MAX_PATH_CHARS)}…` : path;
}

/** The verb and path a throttle line names ("request: GET:https://…" or verb="GET" URL="https://…"). */
export function throttledRequest(line: string): ThrottledRequest {
  const legacy = /request: ([A-Z]+):([^\s"\\]+)/.exec(line);
  const structured = /\bverb=\\?"([A-Z]+)\\?"[^\n]*?\bURL=\\?"([^"\\\s]+)/.exec(line);
  const [verb, url] = legacy ? [legacy[1], legacy[2]] : structured ? [structured[1], structured[2]] : [undefined, undefined];
  return { verb: verb !== undefined && VERBS.has(verb) ? verb : null, path: url === undefined ? null : safePath(url) };
}
