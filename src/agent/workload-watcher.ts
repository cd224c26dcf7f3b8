// The workload-path watches: pods on this node (fieldSelector spec.nodeName), CSIDriver objects and
// this node's CSINode, each one list-watch (a LIST at start and after errors, then watches; no
// periodic LIST; errors back off inside the informer). They feed WorkloadState; the Node itself
// comes from the NodeWatcher the agent already runs.
import type { Informer } from '../kube/informer.ts';
import type { KubeObject } from '../kube/objects.ts';
import type { WorkloadState } from '../workload/state.ts';

type Part = 'pods' | 'csiDrivers' | 'csiNode';

export interface WorkloadInformers {
  pods: Informer<KubeObject>;
  csiDrivers: Informer<KubeObject>;
  csiNode: Informer<KubeObject>;
}

export class WorkloadWatcher {
  private readonly informers: Informer<KubeObject>[];

  constructor(informers: WorkloadInformers, state: WorkloadState) {
    const feed = (informer: Informer<KubeObject>, part: Part, seen: (o: KubeObject) => void, deleted: (o: KubeObject) => void): Informer<KubeObject> =>
      informer.on({
        added: seen, updated: seen, deleted,
        listed: () => state.synced(part),
        // A failure before the first LIST leaves the facts unknown with the reason; later ones keep what
        // was seen, unless there was too much to hold (then what was seen is incomplete).
        failed: (reason, err) => { if (!state.hasListed(part) || err.code === 'too-large') state.synced(part, reason); },
      });
    this.informers = [
      feed(informers.pods, 'pods', (p) => state.podSeen(p), (p) => state.podDeleted(p)),
      feed(informers.csiDrivers, 'csiDrivers', (d) => state.csiDriverSeen(d), (d) => state.csiDriverSeen(d, true)),
      feed(informers.csiNode, 'csiNode', (c) => state.csiNodeSeen(c), (c) => state.csiNodeSeen(c, true)),
    ];
  }

  start(): void {
    for (const informer of this.informers) informer.start();
  }

  async stop(): Promise<void> {
    await Promise.all(this.informers.map((informer) => informer.stop()));
  }
}
