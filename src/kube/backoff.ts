// kube/: the one Kubernetes client; imports only host/ (checked opens of its files), text/ and input-error.ts, and `scan` never loads it.
// Client-side pacing: a token bucket for every request, and exponential backoff with full jitter
// (capped) after failures; a 429's (or 503's) Retry-After wins when it is longer.
import { KubeError } from './errors.ts';

export class TokenBucket {
  private tokens: number;
  private last: number;
  private readonly qps: number;
  private readonly burst: number;
  private readonly now: () => number;

  constructor(qps: number, burst: number, now: () => number = () => performance.now()) {
    this.qps = qps;
    this.burst = burst;
    this.tokens = burst;
    this.now = now;
    this.last = now();
  }

  /** Milliseconds until a token is free (0 = now), taking it. */
  reserve(): number {
    const t = this.now();
    this.tokens = Math.min(this.burst, this.tokens + ((t - this.last) / 1000) * this.qps);
    this.last = t;
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : (-this.tokens / this.qps) * 1000;
  }

  /** Wait for a token; an aborted signal ends the wait at once (rejecting with its reason). */
  async take(signal?: AbortSignal): Promise<void> {
    const wait = this.reserve();
    if (wait > 0) await delay(wait, signal);
  }
}

export interface BackoffPolicy {
  baseMs: number;
  capMs: number;
}

export const DEFAULT_BACKOFF: BackoffPolicy = { baseMs: 1_000, capMs: 5 * 60_000 };

/** Full jitter: uniform in [0, min(cap, base·2^(attempt-1))], never below base/2. */
export function backoffDelay(attempt: number, policy: BackoffPolicy, random: () => number = Math.random): number {
  const ceiling = Math.min(policy.capMs, policy.baseMs * 2 ** Math.max(0, attempt - 1));
  return Math.max(policy.baseMs / 2, Math.round(ceiling * random()));
}

/** Retry-After the server sent with a 429/503 (of any request, watches included), in milliseconds. */
export function retryAfterMs(err: unknown): number | undefined {
  return err instanceof KubeError ? err.retryAfterMs : undefined;
}

/** A Retry-After longer than this is treated as this (a broken proxy must not park the agent for days). */
export const MAX_RETRY_AFTER_MS = 10 * 60_000;

/** Next retry delay: the jittered backoff, or the server's Retry-After when that is longer. */
export function retryDelay(err: unknown, attempt: number, policy: BackoffPolicy, random?: () => number): number {
  const backoff = backoffDelay(attempt, policy, random);
  const serverAsked = retryAfterMs(err);
  return serverAsked === undefined ? backoff : Math.max(Math.min(serverAsked, MAX_RETRY_AFTER_MS), backoff);
}

/** Interval ±10 %. */
export function jittered(intervalMs: number, random: () => number = Math.random): number {
  return Math.round(intervalMs * (0.9 + 0.2 * random()));
}

/** Sleep that an abort ends early: resolves on time, rejects with the signal's reason when aborted. */
export function delay(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const onAbort = (): void => { clearTimeout(timer); reject(signal?.reason); };
    const timer = setTimeout(() => { signal?.removeEventListener('abort', onAbort); resolve(); }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
