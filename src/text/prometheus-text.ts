// text/: shared by every layer; imports nothing from src/ but its own folder (test/unit/layers.test.ts).
// The samples a caller wants from Prometheus text exposition (etcd's and the kubelet's /metrics), fed
// line by line as a body streams in (lines.ts): everything else is skipped, so what is kept is bounded
// by the wanted names, never by the body. Samples are summed over label sets; a histogram with more
// bounds than any real one (15-30) is dropped rather than kept bound by bound.
import { LineSplitter, type LineBounds } from './lines.ts';

/** Samples by metric name, summed over label sets: histograms by base name (le → count), others by name. */
export interface ParsedMetrics {
  buckets: Map<string, Map<number, number>>;
  values: Map<string, number>;
}

export const MAX_BUCKETS = 128;
const DEFAULT_BOUNDS: LineBounds = { maxLines: 200_000, maxLineChars: 64 * 1024 };
const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)(?:\s+-?\d+)?$/;
const LE = /(?:^\{|,)\s*le="([^"]*)"/;

function parseNumber(text: string): number {
  if (text === '+Inf' || text === 'Inf') return Infinity;
  if (text === '-Inf') return -Infinity;
  return Number(text);
}

/** A parser fed through `lines`; `result()` once the text has ended. Malformed lines are skipped. */
export function prometheusReader(wanted: ReadonlySet<string>, bounds: LineBounds = DEFAULT_BOUNDS): { lines: LineSplitter; result(): ParsedMetrics } {
  const parsed: ParsedMetrics = { buckets: new Map(), values: new Map() };
  const tooMany = new Set<string>();
  const lines = new LineSplitter(bounds, (raw) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const match = SAMPLE.exec(line);
    if (!match) return;
    const [, name, labels, valueText] = match as unknown as [string, string, string | undefined, string];
    const base = name.endsWith('_bucket') ? name.slice(0, -'_bucket'.length) : name;
    if (!wanted.has(base) || tooMany.has(base)) return;
    const value = parseNumber(valueText);
    if (!Number.isFinite(value)) return;
    if (base === name) {
      parsed.values.set(name, (parsed.values.get(name) ?? 0) + value);
      return;
    }
    const le = labels === undefined ? undefined : LE.exec(labels)?.[1];
    const bound = le === undefined ? NaN : parseNumber(le);
    if (Number.isNaN(bound) || value < 0) return;
    const histogram = parsed.buckets.get(base) ?? new Map<number, number>();
    histogram.set(bound, (histogram.get(bound) ?? 0) + value);
    parsed.buckets.set(base, histogram);
    if (histogram.size > MAX_BUCKETS) {
      tooMany.add(base);
      parsed.buckets.delete(base);
    }
  });
  return { lines, result: () => parsed };
}

/** The wanted samples of a whole text. */
export function parsePrometheusText(text: string, wanted: ReadonlySet<string>, bounds?: LineBounds): ParsedMetrics {
  const reader = prometheusReader(wanted, bounds);
  reader.lines.push(text);
  reader.lines.end();
  return reader.result();
}
