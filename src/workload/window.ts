// A fixed-capacity window of the most recent samples (a ring over a Float64Array): memory is set at
// construction and never grows, however many pods pass through.
import { percentile } from '../probe/percentiles.ts';

export class SampleWindow {
  private readonly ring: Float64Array;
  private next = 0;
  private filled = 0;
  /** Samples ever pushed, including those the window has since dropped. */
  total = 0;

  constructor(capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError(`window capacity must be a positive integer, got ${capacity}`);
    this.ring = new Float64Array(capacity);
  }

  get capacity(): number {
    return this.ring.length;
  }

  get size(): number {
    return this.filled;
  }

  push(value: number): void {
    if (!Number.isFinite(value)) return;
    this.ring[this.next] = value;
    this.next = (this.next + 1) % this.ring.length;
    this.filled = Math.min(this.filled + 1, this.ring.length);
    this.total += 1;
  }

  /** Nearest-rank percentile of the samples in the window; null when it is empty. */
  percentile(p: number): number | null {
    if (this.filled === 0) return null;
    const sorted = this.ring.slice(0, this.filled).sort();
    return percentile(sorted, p);
  }
}

/** A Map that forgets its oldest entries beyond `limit` (insertion order). */
export function capMap<K, V>(map: Map<K, V>, limit: number): void {
  for (const key of map.keys()) {
    if (map.size <= limit) return;
    map.delete(key);
  }
}
