// Attach latency without watching VolumeAttachments cluster-wide: for pods on this node that have a
// volume which may need an attach, the time from the pod being bound to this node until a new name
// appears in this Node's status.volumesAttached (as the watches observed both). A new name goes to
// the pod bound earliest that still waits for one; a pod stops waiting when its containers start
// (an NFS or other no-attach volume never adds a name, so it yields no sample), or when it is deleted.
// The samples are over a time window, as the start-up figures (window.ts).
import { DEFAULT_MAX_SAMPLES, DEFAULT_WINDOW_MS, TimedWindow, capMap } from './window.ts';
import { byCodePoint } from '../order.ts';

interface Waiting {
  boundAt: number;
  remaining: number;
}

export class AttachLatencyTracker {
  private readonly waiting = new Map<string, Waiting>();
  /** Pods no longer waiting (attached, or started): a later update must not make them wait again. */
  private readonly settled = new Map<string, true>();
  private known: Set<string> | undefined;
  private readonly maxWaiting: number;
  readonly window: TimedWindow;
  /** Driver (CSI) or plugin of each sample's volume, by the sample's slot in the window. */
  private readonly sampleDrivers: string[] = [];

  constructor(windowMs = DEFAULT_WINDOW_MS, maxSamples = DEFAULT_MAX_SAMPLES, maxWaiting = 2000) {
    this.window = new TimedWindow(maxSamples, windowMs);
    this.maxWaiting = maxWaiting;
  }

  get waitingPods(): number {
    return this.waiting.size;
  }

  /** A pod bound to this node at boundAt with `candidates` volumes that may need an attach. */
  podBound(uid: string, boundAt: number, candidates: number): void {
    if (candidates <= 0 || this.waiting.has(uid) || this.settled.has(uid)) return;
    this.waiting.set(uid, { boundAt, remaining: candidates });
    capMap(this.waiting, this.maxWaiting);
  }

  /** Its containers started (so its volumes are attached and mounted) or it ended. */
  podStarted(uid: string): void {
    if (this.waiting.delete(uid)) this.settle(uid);
  }

  podDeleted(uid: string): void {
    this.waiting.delete(uid);
    this.settled.delete(uid);
  }

  /** The Node is gone (deleted, or listed and absent): its next appearance is a new baseline. */
  nodeGone(): void {
    this.known = undefined;
  }

  /** The Node's volumesAttached names as the watch delivered them at `now`. */
  nodeVolumes(names: readonly string[], now: number): void {
    const current = new Set(names);
    const before = this.known;
    this.known = current;
    if (before === undefined) return; // the first sight of the Node: those attaches happened before we looked
    for (const name of names) {
      if (before.has(name)) continue;
      const uid = this.earliestWaiting();
      if (uid === undefined) continue;
      const w = this.waiting.get(uid) as Waiting;
      const slot = this.window.push(now, Math.max(0, now - w.boundAt));
      if (slot >= 0) this.sampleDrivers[slot] = driverOf(name);
      w.remaining -= 1;
      if (w.remaining <= 0) { this.waiting.delete(uid); this.settle(uid); }
    }
  }

  private settle(uid: string): void {
    this.settled.set(uid, true);
    capMap(this.settled, this.maxWaiting);
  }

  /** Distinct drivers of the attaches in the window at `now`, most frequent first. */
  drivers(now: number): string[] {
    const counts = new Map<string, number>();
    for (const slot of this.window.slots(now)) {
      const d = this.sampleDrivers[slot] as string;
      counts.set(d, (counts.get(d) ?? 0) + 1);
    }
    return [...counts].sort((a, b) => b[1] - a[1] || byCodePoint(a[0], b[0])).map(([d]) => d);
  }

  private earliestWaiting(): string | undefined {
    let best: string | undefined;
    let bestAt = Infinity;
    for (const [uid, w] of this.waiting) if (w.boundAt < bestAt) { best = uid; bestAt = w.boundAt; }
    return best;
  }
}

/** "kubernetes.io/csi/<driver>^<handle>" → driver; "kubernetes.io/iscsi/…" → "kubernetes.io/iscsi". */
export function driverOf(uniqueName: string): string {
  const csi = /^kubernetes\.io\/csi\/([^^]+)\^/.exec(uniqueName);
  if (csi) return csi[1] as string;
  const parts = uniqueName.split('/');
  return parts.length >= 2 ? `${parts[0]}/${parts[1]}` : uniqueName;
}
