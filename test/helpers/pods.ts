// Pod, Node-status and CSI objects shaped like the API's JSON (timestamps as RFC 3339 with whole
// seconds, as kube-apiserver writes them), for the workload-path tests.
type Obj = Record<string, any>;

/** The API's timestamp format: whole seconds, truncated. */
export function apiTime(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

export interface PodStage {
  createdAt: number;
  scheduledAt?: number;
  initializedAt?: number;
  /** PodReadyToStartContainers True (its stamp); absent: False. */
  sandboxAt?: number;
  startedAt?: number;
  readyAt?: number;
  volumes?: Obj[];
  node?: string;
  phase?: string;
  annotations?: Record<string, string>;
}

function condition(type: string, at: number | undefined): Obj {
  return at === undefined
    ? { type, status: 'False', lastProbeTime: null, lastTransitionTime: null }
    : { type, status: 'True', lastProbeTime: null, lastTransitionTime: apiTime(at) };
}

export function podObject(name: string, stage: PodStage): Obj {
  const running = stage.startedAt !== undefined;
  return {
    metadata: { name, namespace: 'ci', uid: `uid-${name}`, creationTimestamp: apiTime(stage.createdAt), ...(stage.annotations ? { annotations: stage.annotations } : {}) },
    spec: { nodeName: stage.node ?? 'worker-1', containers: [{ name: 'app', image: 'busybox' }], volumes: stage.volumes ?? [] },
    status: {
      phase: stage.phase ?? (running ? 'Running' : 'Pending'),
      conditions: [
        condition('PodReadyToStartContainers', stage.sandboxAt), condition('PodScheduled', stage.scheduledAt), condition('Initialized', stage.initializedAt),
        condition('ContainersReady', stage.readyAt), condition('Ready', stage.readyAt),
      ],
      containerStatuses: [{
        name: 'app', image: 'busybox', ready: stage.readyAt !== undefined, restartCount: 0, started: running,
        state: running ? { running: { startedAt: apiTime(stage.startedAt as number) } } : { waiting: { reason: 'ContainerCreating' } },
      }],
    },
  };
}

export const PVC = (claim: string): Obj => ({ name: 'data', persistentVolumeClaim: { claimName: claim } });
export const EMPTY_DIR: Obj = { name: 'scratch', emptyDir: {} };
export const csiName = (driver: string, handle: string): string => `kubernetes.io/csi/${driver}^${handle}`;

export function csiDriver(name: string, attachRequired?: boolean): Obj {
  return { metadata: { name }, spec: attachRequired === undefined ? {} : { attachRequired } };
}

export function csiNode(node: string, drivers: string[]): Obj {
  return { metadata: { name: node }, spec: { drivers: drivers.map((d) => ({ name: d, nodeID: node, topologyKeys: null })) } };
}
