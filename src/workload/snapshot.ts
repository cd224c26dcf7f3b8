// What the agent's watch caches know at scan time, as plain data: the collector that turns it into
// facts imports only this type, so the scan stays free of API clients and the agent of rules.
import type { KubeletConfigView, KubeletMetricsView } from './kubelet-view.ts';

export const STARTUP_PHASES = ['scheduling', 'initialization', 'creation', 'readiness', 'total'] as const;
export type StartupPhase = (typeof STARTUP_PHASES)[number];
/**
 * What the agent's pod watch reports: the phases, the total, and the status write's wait (the
 * kubelet's Ready stamp → the API showing Ready; client throttling), each as `measure` has them.
 */
export const STARTUP_FIGURES = [...STARTUP_PHASES, 'statusDelay'] as const;
export type StartupFigure = (typeof STARTUP_FIGURES)[number];

/** One figure over the window: its samples then, their p50 and p99 (null: none). */
export interface PhaseSummary {
  samples: number;
  p50Ms: number | null;
  p99Ms: number | null;
  /** More samples fell in the window than it keeps: the figure covers the newest of them. */
  overflowed: boolean;
}

export interface CsiDriverInfo {
  /** spec.attachRequired as set; null when unset (which means attach). */
  attachRequired: boolean | null;
}

/**
 * The agent's list-watches, one per part of the snapshot: the one list the informers
 * (agent/api.ts, agent/workload-watcher.ts), the unsynced reasons and the settle count follow.
 */
export const WATCHED_PARTS = ['pods', 'csiDrivers', 'csiNode', 'node'] as const;
export type WatchedPart = (typeof WATCHED_PARTS)[number];

export interface WorkloadSnapshot {
  nodeName: string;
  /** Why a part is not known yet (its watch has not listed, or failed); absent when synced. */
  unsynced: Partial<Record<WatchedPart, string>>;
  /** Node.status.nodeInfo.kubeletVersion as last seen on the Node watch ("v1.31.2"); null until seen or when malformed. */
  kubeletVersion: string | null;
  /** Node.status.nodeInfo.containerRuntimeVersion ("containerd://2.1.4"); null until seen or when malformed. */
  containerRuntimeVersion: string | null;
  /** Node.status.volumesAttached[].name and volumesInUse, as last seen on the Node watch. */
  volumesAttached: string[];
  volumesInUse: string[];
  /** CSIDriver objects by name (cluster-wide, one watch). */
  csiDrivers: Record<string, CsiDriverInfo>;
  /** spec.drivers[].name of this node's CSINode; null when the node has none. */
  csiNodeDrivers: string[] | null;
  /** How far back the start-up and attach figures reach (--startup-window), and how many samples each keeps at most. */
  window: { ms: number; maxSamples: number };
  attach: { samples: number; p50Ms: number | null; p90Ms: number | null; overflowed: boolean; drivers: string[] };
  startup: Record<StartupFigure, PhaseSummary>;
  /** Pods tracked now (started and waiting ones); bounded. */
  trackedPods: number;
  /** The agent's read of this node's kubelet /metrics just before the scan; absent: not read. */
  kubelet?: KubeletMetricsView;
  /** The agent's read of this node's kubelet /configz just before the scan; absent: not read. */
  kubeletConfig?: KubeletConfigView;
}
