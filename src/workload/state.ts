// Everything the agent's watches feed (pods on this node, this Node, CSIDriver objects, this node's
// CSINode), folded into bounded state; snapshot() hands the scan plain data.
import { AttachLatencyTracker } from './attach-latency.ts';
import { podView } from './pod-view.ts';
import { PodStartupTracker } from './pod-startup.ts';
import { STARTUP_FIGURES, WATCHED_PARTS, type CsiDriverInfo, type StartupFigure, type WatchedPart, type WorkloadSnapshot } from './snapshot.ts';
import type { Obj } from '../kube/objects.ts';
import { DEFAULT_MAX_SAMPLES, DEFAULT_WINDOW_MS } from './window.ts';


export interface WorkloadStateOptions {
  nodeName: string;
  now?: () => number;
  /** How far back the start-up and attach figures reach (the agent's --startup-window; default 1h; Infinity: all). */
  windowMs?: number;
  /** Samples each figure keeps at most (default 1000). */
  maxSamples?: number;
  maxTracked?: number;
  onPhase?(figure: StartupFigure, seconds: number): void;
}

const MAX_DRIVERS = 500;
const MAX_VOLUME_NAMES = 1000;

export class WorkloadState {
  readonly nodeName: string;
  readonly startup: PodStartupTracker;
  readonly attach: AttachLatencyTracker;
  private readonly now: () => number;
  private readonly window: WorkloadSnapshot['window'];
  private readonly drivers = new Map<string, CsiDriverInfo>();
  private csiNodeDrivers: string[] | null = null;
  private volumesAttached: string[] = [];
  private volumesInUse: string[] = [];
  private kubeletVersion: string | null = null;
  private containerRuntimeVersion: string | null = null;
  private readonly settled = new Set<WatchedPart>();
  private readonly waiters: (() => void)[] = [];
  /** resourceVersion of the last pod delivered (tests wait on it). */
  lastPodVersion: string | undefined;
  private readonly unsynced: WorkloadSnapshot['unsynced'] = {
    pods: 'the pod watch has not listed yet', csiDrivers: 'the CSIDriver watch has not listed yet',
    csiNode: 'the CSINode watch has not listed yet', node: 'the Node watch has not listed yet',
  } satisfies Record<WatchedPart, string>;

  constructor(opts: WorkloadStateOptions) {
    this.nodeName = opts.nodeName;
    this.now = opts.now ?? Date.now;
    this.window = { ms: opts.windowMs ?? DEFAULT_WINDOW_MS, maxSamples: opts.maxSamples ?? DEFAULT_MAX_SAMPLES };
    const maxTracked = opts.maxTracked ?? 2000;
    this.startup = new PodStartupTracker({
      now: this.now, windowMs: this.window.ms, maxSamples: this.window.maxSamples, maxTracked, onPhase: opts.onPhase,
      kubeletVersion: () => this.kubeletVersion,
    });
    this.attach = new AttachLatencyTracker(this.window.ms, this.window.maxSamples, maxTracked);
  }

  /** A watch listed (reason undefined) or failed (its reason stays until the next list). */
  synced(part: WatchedPart, failure?: string): void {
    if (failure === undefined) delete this.unsynced[part];
    else this.unsynced[part] = failure;
    this.settled.add(part);
    if (this.settled.size === WATCHED_PARTS.length) for (const resolve of this.waiters.splice(0)) resolve();
  }

  /** Resolves once every watch has listed or failed once, after timeoutMs, or when `signal` aborts (the first scan waits for it). */
  settledOrTimeout(timeoutMs: number, signal?: AbortSignal): Promise<void> {
    if (this.settled.size === WATCHED_PARTS.length || signal?.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, timeoutMs);
      const waiters = this.waiters;
      function done(): void {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        const i = waiters.indexOf(done);
        if (i >= 0) waiters.splice(i, 1);
        resolve();
      }
      waiters.push(done);
      signal?.addEventListener('abort', done, { once: true });
    });
  }

  hasListed(part: WatchedPart): boolean {
    return this.unsynced[part] === undefined;
  }

  /**
   * A pod as a watch delivered it. `createdAt` (ms) replaces the API's whole-second
   * creationTimestamp when the caller knows better: `measure` sent the create request itself.
   */
  podSeen(pod: unknown, createdAt?: number): void {
    this.lastPodVersion = (pod as Obj | undefined)?.metadata?.resourceVersion;
    const view = podView(pod);
    if (!view) return;
    if (createdAt !== undefined) view.createdAt = createdAt;
    this.startup.observe(view);
    const boundAt = this.startup.scheduledAt(view.uid);
    if (view.terminal || view.reached.started !== undefined || view.reached.ready !== undefined) this.attach.podStarted(view.uid);
    else if (boundAt !== undefined) this.attach.podBound(view.uid, boundAt, view.attachCandidates);
  }

  podDeleted(pod: unknown): void {
    const uid = (pod as Obj | undefined)?.metadata?.uid;
    if (typeof uid !== 'string') return;
    this.startup.forget(uid);
    this.attach.podDeleted(uid);
  }

  nodeSeen(node: unknown): void {
    if (node === undefined || node === null) {
      this.volumesAttached = [];
      this.volumesInUse = [];
      this.kubeletVersion = null;
      this.containerRuntimeVersion = null;
      return this.attach.nodeGone();
    }
    const status = (node as Obj | undefined)?.status as Obj | undefined;
    this.kubeletVersion = kubeletVersionOf(status?.nodeInfo?.kubeletVersion);
    this.containerRuntimeVersion = runtimeVersionOf(status?.nodeInfo?.containerRuntimeVersion);
    const names = (list: unknown, pick: (x: any) => unknown): string[] =>
      Array.isArray(list) ? list.map(pick).filter((n): n is string => typeof n === 'string').slice(0, MAX_VOLUME_NAMES) : [];
    this.volumesAttached = names(status?.volumesAttached, (v) => v?.name);
    this.volumesInUse = names(status?.volumesInUse, (v) => v);
    this.attach.nodeVolumes(this.volumesAttached, this.now());
  }

  csiDriverSeen(driver: unknown, deleted = false): void {
    const d = driver as Obj | undefined;
    const name = d?.metadata?.name;
    if (typeof name !== 'string') return;
    if (deleted) { this.drivers.delete(name); return; }
    const attach = d?.spec?.attachRequired;
    this.drivers.set(name, { attachRequired: typeof attach === 'boolean' ? attach : null });
    if (this.drivers.size > MAX_DRIVERS) this.drivers.delete(this.drivers.keys().next().value as string);
  }

  csiNodeSeen(csiNode: unknown, deleted = false): void {
    const c = csiNode as Obj | undefined;
    if (c?.metadata?.name !== this.nodeName) return;
    const list = c?.spec?.drivers;
    this.csiNodeDrivers = deleted ? null
      : Array.isArray(list) ? list.map((x: Obj) => x?.name).filter((n): n is string => typeof n === 'string').slice(0, MAX_DRIVERS) : [];
  }

  snapshot(): WorkloadSnapshot {
    const w = this.attach.window;
    const now = this.now();
    return {
      nodeName: this.nodeName,
      unsynced: { ...this.unsynced },
      kubeletVersion: this.kubeletVersion,
      containerRuntimeVersion: this.containerRuntimeVersion,
      volumesAttached: [...this.volumesAttached],
      volumesInUse: [...this.volumesInUse],
      csiDrivers: Object.fromEntries(this.drivers),
      csiNodeDrivers: this.csiNodeDrivers === null ? null : [...this.csiNodeDrivers],
      window: { ...this.window },
      attach: {
        samples: w.size(now), p50Ms: roundOrNull(w.percentile(50, now)), p90Ms: roundOrNull(w.percentile(90, now)),
        overflowed: w.overflowed(now), drivers: this.attach.drivers(now),
      },
      startup: Object.fromEntries(STARTUP_FIGURES.map((p) => [p, this.startup.summary(p)])) as WorkloadSnapshot['startup'],
      trackedPods: this.startup.tracked,
    };
  }
}

function roundOrNull(ms: number | null): number | null {
  return ms === null ? null : Math.round(ms);
}

/** The kubelet's own version report, if it looks like one ("v1.31.2", "v1.30.2+k3s1"); anything else is dropped. */
export function kubeletVersionOf(value: unknown): string | null {
  return typeof value === 'string' && /^v?\d{1,3}\.\d{1,4}\.\d{1,4}(?:[-+][0-9A-Za-z.+-]{1,40})?$/.test(value) ? value : null;
}

/** The runtime's own report ("containerd://2.1.4", "cri-o://1.30.1"), if it looks like one; anything else is dropped. */
export function runtimeVersionOf(value: unknown): string | null {
  return typeof value === 'string' && /^[a-z][a-z0-9.-]{0,20}:\/\/v?\d{1,3}\.\d{1,4}(?:\.\d{1,4})?(?:[-+~][0-9A-Za-z.+~-]{1,40})?$/.test(value) ? value : null;
}
