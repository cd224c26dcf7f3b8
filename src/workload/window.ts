// The samples taken in the last `windowMs`, each with the time it was taken, at most `capacity` of
// them: a ring over two Float64Arrays, so memory is set at construction and never grows, however many
// pods pass through. A figure is over the window: a sample leaves it when it is older, not when newer
// ones push it out. Only when more than `capacity` samples fall inside one window does the ring drop
// the oldest of them (the figure then covers the newest `capacity`, and `overflowed` says so).
import { percentile } from '../probe/percentiles.ts';

/** The agent's default --startup-window, and the samples a window keeps at most (per figure). */
export const DEFAULT_WINDOW_MS = 3_600_000;
export const DEFAULT_MAX_SAMPLES = 1000;

export class TimedWindow {
  private readonly values: Float64Array;
  private readonly times: Float64Array;
  readonly windowMs: number;
  private next = 0;
  private filled = 0;
  /** When the newest sample the ring overwrote was taken (-Infinity: none yet). */
  private overwrittenAt = -Infinity;
  /** Samples ever pushed, including those that have since left the window or the ring. */
  total = 0;

  /** `windowMs` may be Infinity (measure: every sample of its run counts). */
  constructor(capacity: number, windowMs: number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError(`window capacity must be a positive integer, got ${capacity}`);
    if (!(windowMs > 0)) throw new RangeError(`window length must be positive, got ${windowMs} ms`);
    this.values = new Float64Array(capacity);
    this.times = new Float64Array(capacity);
    this.windowMs = windowMs;
  }

  get capacity(): number {
    return this.values.length;
  }

  /** Records `value` taken at `at` (ms); returns its slot (for a caller's parallel data), -1 when not finite. */
  push(at: number, value: number): number {
    if (!Number.isFinite(value) || !Number.isFinite(at)) return -1;
    const slot = this.next;
    if (this.filled === this.capacity) this.overwrittenAt = Math.max(this.overwrittenAt, this.times[slot] as number);
    this.values[slot] = value;
    this.times[slot] = at;
    this.next = (slot + 1) % this.capacity;
    this.filled = Math.min(this.filled + 1, this.capacity);
    this.total += 1;
    return slot;
  }

  /** The slots whose sample was taken within the window ending at `now`, oldest first. */
  slots(now: number): number[] {
    const since = now - this.windowMs;
    const out: number[] = [];
    const first = this.filled < this.capacity ? 0 : this.next;
    for (let i = 0; i < this.filled; i++) {
      const slot = (first + i) % this.capacity;
      if ((this.times[slot] as number) >= since) out.push(slot);
    }
    return out;
  }

  /** How many samples the window holds at `now`. */
  size(now: number): number {
    return this.slots(now).length;
  }

  /** More samples fell inside the window ending at `now` than the ring holds: the oldest of them were dropped. */
  overflowed(now: number): boolean {
    return this.overwrittenAt >= now - this.windowMs;
  }

  /** Nearest-rank percentile of the samples in the window at `now`; null when it holds none. */
  percentile(p: number, now: number): number | null {
    const slots = this.slots(now);
    if (slots.length === 0) return null;
    const sorted = Float64Array.from(slots, (slot) => this.values[slot] as number).sort();
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

/** 3 600 000 → "1h", 90 000 → "1m30s", 45 000 → "45s": how a window is named in reasons and details. */
export function windowText(ms: number): string {
  if (!Number.isFinite(ms)) return 'the whole run';
  const seconds = Math.round(ms / 1000);
  const parts: [number, string][] = [[Math.floor(seconds / 3600), 'h'], [Math.floor((seconds % 3600) / 60), 'm'], [seconds % 60, 's']];
  return parts.filter(([n]) => n > 0).map(([n, unit]) => `${n}${unit}`).join('') || `${ms}ms`;
}
