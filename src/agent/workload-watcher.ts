// The workload-path watches: pods on this node (fieldSelector spec.nodeName), CSIDriver objects and
// this node's CSINode, each one ListWatch (one LIST at start and after a 410, then a watch; no
// periodic LIST), restarted after errors with backoff. They feed WorkloadState; the Node itself comes
// from the NodeWatcher the agent already runs.
import type { KubernetesObject, ListWatch, V1CSIDriver, V1CSINode, V1Pod } from '@kubernetes/client-node';
import type { WorkloadState } from '../workload/state.ts';
import { DEFAULT_BACKOFF, retryDelay, type BackoffPolicy } from './backoff.ts';
import { describeError } from './node-watcher.ts';

export interface WorkloadSource {
  watchPods(node: string, onList: () => void): ListWatch<V1Pod>;
  watchCsiDrivers(onList: () => void): ListWatch<V1CSIDriver>;
  watchCsiNode(node: string, onList: () => void): ListWatch<V1CSINode>;
}

type Part = 'pods' | 'csiDrivers' | 'csiNode';

interface Feed<T extends KubernetesObject> {
  seen(obj: T): void;
  deleted(obj: T): void;
}

/** One ListWatch kept running: errors restart it after a backoff (a 429's Retry-After wins). */
class KeptWatch<T extends KubernetesObject> {
  private readonly informer: ListWatch<T>;
  private readonly what: string;
  private readonly policy: BackoffPolicy;
  private readonly log: (line: string) => void;
  private readonly onFailure: (reason: string) => void;
  private failures = 0;
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(informer: ListWatch<T>, what: string, feed: Feed<T>, deps: { policy: BackoffPolicy; log: (line: string) => void; onFailure: (reason: string) => void }) {
    this.informer = informer;
    this.what = what;
    this.policy = deps.policy;
    this.log = deps.log;
    this.onFailure = deps.onFailure;
    informer.on('add', (obj) => { this.healthy(); feed.seen(obj); });
    informer.on('update', (obj) => { this.healthy(); feed.seen(obj); });
    informer.on('delete', (obj) => { this.healthy(); feed.deleted(obj); });
    informer.on('error', (err) => this.failed(err));
  }

  /**
   * A LIST or an event came through: the next failure backs off from the start again. (Only 'add'
   * did so before: a kind with no objects, or one re-listed after a 410, kept the count of the last
   * outage, and the next one waited minutes - seen on a real server, test/e2e/agent.test.ts.)
   */
  healthy(): void {
    this.failures = 0;
  }

  start(): void {
    this.stopped = false;
    void this.informer.start();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.informer.stop();
  }

  private failed(err: unknown): void {
    if (this.stopped) return;
    this.failures += 1;
    this.onFailure(`cannot list or watch ${this.what}: ${describeError(err)}`);
    const delay = retryDelay(err, this.failures, this.policy);
    this.log(`watch on ${this.what} failed (${describeError(err)}); attempt ${this.failures}, retrying in ${(delay / 1000).toFixed(1)} s`);
    clearTimeout(this.timer); // one restart pending at most, or two watches would run side by side
    this.timer = setTimeout(() => { if (!this.stopped) void this.informer.start(); }, delay);
    this.timer.unref();
  }
}

export class WorkloadWatcher {
  private readonly watches: KeptWatch<any>[];

  constructor(source: WorkloadSource, state: WorkloadState, log: (line: string) => void, policy: BackoffPolicy = DEFAULT_BACKOFF) {
    const node = state.nodeName;
    const kept: Partial<Record<Part, KeptWatch<any>>> = {};
    const listed = (part: Part) => () => { kept[part]?.healthy(); state.synced(part); };
    const deps = (part: Part) => ({
      policy, log,
      // A failure before the first LIST leaves the facts unknown with the reason; later ones keep what was seen.
      onFailure: (reason: string) => { if (!state.hasListed(part)) state.synced(part, reason); },
    });
    kept.pods = new KeptWatch(source.watchPods(node, listed('pods')), `pods on node ${node}`,
      { seen: (p) => state.podSeen(p), deleted: (p) => state.podDeleted(p) }, deps('pods'));
    kept.csiDrivers = new KeptWatch(source.watchCsiDrivers(listed('csiDrivers')), 'CSIDriver objects',
      { seen: (d) => state.csiDriverSeen(d), deleted: (d) => state.csiDriverSeen(d, true) }, deps('csiDrivers'));
    kept.csiNode = new KeptWatch(source.watchCsiNode(node, listed('csiNode')), `CSINode ${node}`,
      { seen: (c) => state.csiNodeSeen(c), deleted: (c) => state.csiNodeSeen(c, true) }, deps('csiNode'));
    this.watches = [kept.pods, kept.csiDrivers, kept.csiNode];
  }

  start(): void {
    for (const w of this.watches) w.start();
  }

  async stop(): Promise<void> {
    await Promise.all(this.watches.map((w) => w.stop()));
  }
}
