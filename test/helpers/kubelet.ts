// The kubelet a test plays on the real control plane (envtest has none). For the pods bound to its
// node it writes what a kubelet writes: PodScheduled (when the pod came with spec.nodeName),
// Initialized, started containers, Ready; the pod's volumes into Node.status.volumesAttached (as the
// attach/detach controller reports an attach); and it confirms graceful deletions with the final
// DELETE (gracePeriodSeconds 0) a kubelet sends once the containers stopped. It also renews the
// Node's Ready heartbeat, so a running kube-controller-manager keeps the node Ready.
//
// Timing, per pod, from a script of delays:
// - 'backdated' (default): each status carries planned timestamps (whole seconds, as the API
//   stores them) and is written only once its time is LAG_MS in the past. Code that prefers the
//   API's time for what it observed late (the agent's pod phases: more than 2 s late) then reads
//   exactly the planned delays, however loaded the machine is.
// - 'live': each step is written after its delay with the current time, as a kubelet does.
// Every write and what the test's own watch saw is recorded in `records`, for expectations.
import { request as httpsRequest } from 'node:https';
import type { ControlPlane } from './control-plane.ts';

export const LAG_MS = 2_300;

export interface PodScript {
  /** Pods created with spec.nodeName: PodScheduled this long after the kubelet saw the pod. */
  scheduleMs?: number;
  /** Initialized this long after scheduling (backdated: counted from the next whole second). */
  initMs: number;
  /** Containers started this long after Initialized (after the attach, when there is one). */
  createMs: number;
  /** Ready this long after the containers started. */
  readyMs: number;
  /** Pods with PVCs: each claim's volume appears in Node.status.volumesAttached this long after the pod was seen bound (live). */
  attachMs?: number;
  /** Leave the pod as it is before this step (a pod that never gets there). */
  stopBefore?: 'scheduled' | 'initialized' | 'started' | 'ready';
}

export interface PodRecord {
  name: string;
  namespace: string;
  uid: string;
  /** Test clock (ms) when the test's watch first saw the pod bound to this node. */
  boundSeenAt: number;
  /** What the kubelet wrote (ms; backdated: the timestamps in the API, whole seconds). */
  scheduledAt?: number;
  initializedAt?: number;
  startedAt?: number;
  readyAt?: number;
  /** Test clock when the test's own pod watch first received the pod Running with Ready=True. */
  readySeenAt?: number;
  /** Test clock when the volumesAttached patch was answered, and when the test's Node watch showed it. */
  attachedAt?: number;
  attachSeenAt?: number;
  volume?: string;
}

export interface FakeKubeletOptions {
  script(pod: any): PodScript | undefined;
  mode?: 'backdated' | 'live';
  heartbeatMs?: number;
  /** CSI driver named in the attached volumes' names. */
  driver?: string;
}

const STRATEGIC = 'application/strategic-merge-patch+json';
const MERGE = 'application/merge-patch+json';

/** RFC 3339 with whole seconds, as the API writes times. */
export const apiTime = (ms: number): string => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
const nextSecond = (ms: number): number => Math.ceil(ms / 1000) * 1000;

export class FakeKubelet {
  readonly records = new Map<string, PodRecord>();
  private readonly cp: ControlPlane;
  private readonly node: string;
  private readonly opts: FakeKubeletOptions;
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly handled = new Set<string>();
  private readonly deleting = new Set<string>();
  private readonly attached: string[] = [];
  private readonly watches: ListWatch[] = [];
  private heartbeat: NodeJS.Timeout | undefined;
  private readonly chains = new Map<string, Promise<unknown>>();
  readonly errors: string[] = [];

  private constructor(cp: ControlPlane, node: string, opts: FakeKubeletOptions) {
    this.cp = cp;
    this.node = node;
    this.opts = opts;
  }

  /** Starts watching (resolves once the watch is open). */
  static async start(cp: ControlPlane, node: string, opts: FakeKubeletOptions): Promise<FakeKubelet> {
    const kubelet = new FakeKubelet(cp, node, opts);
    // As a kubelet does: only the pods bound to this node (a pod shows up when the scheduler binds it).
    const selector = `fieldSelector=${encodeURIComponent(`spec.nodeName=${node}`)}`;
    kubelet.watches.push(new ListWatch(cp, `/api/v1/pods?${selector}`, (type, pod, at) => kubelet.onPod(type, pod, at)));
    kubelet.watches.push(new ListWatch(cp, `/api/v1/nodes?fieldSelector=${encodeURIComponent(`metadata.name=${node}`)}`, (_type, obj, at) => kubelet.onNode(obj, at)));
    await Promise.all(kubelet.watches.map((w) => w.started));
    kubelet.heartbeat = setInterval(() => { kubelet.beat().catch((e) => kubelet.errors.push(String(e))); }, opts.heartbeatMs ?? 10_000);
    return kubelet;
  }

  stop(): void {
    for (const watch of this.watches) watch.stop();
    clearInterval(this.heartbeat);
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }

  /** Records of the pods in `namespace` that this kubelet ran. */
  podsIn(namespace: string): PodRecord[] {
    return [...this.records.values()].filter((r) => r.namespace === namespace);
  }

  private onPod(type: string, pod: any, at: number): void {
    const uid = pod?.metadata?.uid as string;
    if (!uid || type === 'DELETED') return;
    if (pod.spec?.nodeName !== this.node) return;
    const record: PodRecord = this.records.get(uid) ?? { name: pod.metadata.name, namespace: pod.metadata.namespace, uid, boundSeenAt: at };
    this.records.set(uid, record);
    const ready = pod.status?.phase === 'Running' && pod.status?.conditions?.some((c: any) => c.type === 'Ready' && c.status === 'True');
    if (ready && record.readySeenAt === undefined) record.readySeenAt = at;
    if (pod.metadata.deletionTimestamp) return this.confirmDeletion(pod);
    if (this.handled.has(uid)) return;
    this.handled.add(uid);
    const script = this.opts.script(pod);
    if (script) this.play(pod, record, script);
  }

  /** When each volume this kubelet attached first showed in the Node's status, as a watcher sees it. */
  private onNode(node: any, at: number): void {
    const names = new Set((node?.status?.volumesAttached ?? []).map((v: any) => v?.name));
    for (const record of this.records.values()) {
      if (record.volume !== undefined && record.attachSeenAt === undefined && names.has(record.volume)) record.attachSeenAt = at;
    }
  }

  private later(at: number, step: () => Promise<unknown>): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      step().catch((e) => this.errors.push(String(e)));
    }, Math.max(0, at - Date.now()));
    this.timers.add(timer);
  }

  private patchPod(pod: any, status: unknown): Promise<unknown> {
    if (this.deleting.has(pod.metadata.uid)) return Promise.resolve();
    return this.cp.must('PATCH', `/api/v1/namespaces/${pod.metadata.namespace}/pods/${pod.metadata.name}/status`, { status }, { contentType: STRATEGIC });
  }

  private play(pod: any, record: PodRecord, s: PodScript): void {
    const backdated = (this.opts.mode ?? 'backdated') === 'backdated';
    const lag = backdated ? LAG_MS : 0;
    const at = (ms: number): number => (backdated ? nextSecond(ms) : ms);
    const bound = record.boundSeenAt;
    const needsScheduled = !pod.status?.conditions?.some((c: any) => c.type === 'PodScheduled' && c.status === 'True');
    const scheduled = needsScheduled ? at(bound + (s.scheduleMs ?? 0)) : bound;
    const initialized = (backdated ? nextSecond(scheduled) : scheduled) + s.initMs;
    const claims = (pod.spec.volumes ?? []).filter((v: any) => v.persistentVolumeClaim);
    const attachAt = claims.length > 0 && s.attachMs !== undefined ? bound + s.attachMs : undefined;
    const started = (attachAt !== undefined ? at(Math.max(initialized, attachAt)) : initialized) + s.createMs;
    const ready = started + s.readyMs;
    const steps: ['scheduled' | 'initialized' | 'started' | 'ready', number, () => Promise<unknown>][] = [];
    if (needsScheduled) steps.push(['scheduled', scheduled, () => { record.scheduledAt = scheduled; return this.patchPod(pod, { conditions: [cond('PodScheduled', scheduled)] }); }]);
    steps.push(['initialized', initialized, () => { record.initializedAt = initialized; return this.patchPod(pod, { conditions: [cond('Initialized', initialized)] }); }]);
    steps.push(['started', started, () => { record.startedAt = started; return this.patchPod(pod, { phase: 'Running', containerStatuses: containers(pod, started, false) }); }]);
    steps.push(['ready', ready, () => {
      record.readyAt = ready;
      return this.patchPod(pod, { conditions: [cond('ContainersReady', ready), cond('Ready', ready)], containerStatuses: containers(pod, started, true) });
    }]);
    for (const [name, when, write] of steps) {
      if (s.stopBefore === name) break;
      // One pod's writes in order: a late timer must not overtake an earlier step.
      this.later(when + lag, () => {
        const next = (this.chains.get(record.uid) ?? Promise.resolve()).then(write, write);
        this.chains.set(record.uid, next);
        return next;
      });
    }
    if (attachAt !== undefined && s.stopBefore !== 'started' && s.stopBefore !== 'initialized') {
      const volume = `kubernetes.io/csi/${this.opts.driver ?? 'attach.csi.example.com'}^${pod.metadata.namespace}-${claims[0].persistentVolumeClaim.claimName}`;
      record.volume = volume;
      this.later(attachAt, async () => {
        this.attached.push(volume);
        const names = [...this.attached];
        await this.cp.must('PATCH', `/api/v1/nodes/${this.node}/status`, { status: { volumesInUse: names, volumesAttached: names.map((name) => ({ name, devicePath: '' })) } }, { contentType: MERGE });
        record.attachedAt = Date.now();
      });
    }
  }

  /** The kubelet's last word on a graceful delete: containers stopped, remove the object. */
  private confirmDeletion(pod: any): void {
    const uid = pod.metadata.uid as string;
    if (this.deleting.has(uid)) return;
    this.deleting.add(uid);
    this.cp.request('DELETE', `/api/v1/namespaces/${pod.metadata.namespace}/pods/${pod.metadata.name}`,
      { apiVersion: 'v1', kind: 'DeleteOptions', gracePeriodSeconds: 0, preconditions: { uid } })
      
      .then((res) => { if (res.status !== 200 && res.status !== 404) this.errors.push(`delete ${pod.metadata.name}: HTTP ${res.status} ${res.body?.message ?? ''}`); })
      .catch((e) => this.errors.push(String(e)));
  }

  private async beat(): Promise<void> {
    const now = new Date().toISOString();
    await this.cp.must('PATCH', `/api/v1/nodes/${this.node}/status`, {
      status: { conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'fake kubelet', lastHeartbeatTime: now }] },
    }, { contentType: STRATEGIC });
  }
}

function cond(type: string, ms: number): Record<string, unknown> {
  return { type, status: 'True', lastProbeTime: null, lastTransitionTime: apiTime(ms) };
}

function containers(pod: any, startedMs: number, ready: boolean): Record<string, unknown>[] {
  return (pod.spec.containers ?? []).map((c: any) => ({
    name: c.name, image: c.image, imageID: '', ready, restartCount: 0, started: true, state: { running: { startedAt: apiTime(startedMs) } },
  }));
}

/**
 * A LIST, then a watch from its resourceVersion, re-opened from the last version when the server
 * ends it (or closes a slow watcher under load), re-listed after 410: the kubelet must not go blind
 * in the middle of a burst of pods.
 */
class ListWatch {
  readonly started: Promise<void>;
  private readonly cp: ControlPlane;
  private readonly path: string;
  private readonly onEvent: (type: string, object: any, at: number) => void;
  private version: string | undefined;
  private stopped = false;
  private req: ReturnType<typeof httpsRequest> | undefined;

  constructor(cp: ControlPlane, path: string, onEvent: (type: string, object: any, at: number) => void) {
    this.cp = cp;
    this.path = path;
    this.onEvent = onEvent;
    this.started = this.list().then(() => this.open());
  }

  stop(): void {
    this.stopped = true;
    this.req?.destroy();
  }

  private async list(): Promise<void> {
    const list = await this.cp.must('GET', this.path);
    const at = Date.now();
    for (const item of list.items ?? []) this.onEvent('ADDED', item, at);
    this.version = list.metadata.resourceVersion;
  }

  private open(): Promise<void> {
    return new Promise((resolve, reject) => {
      const url = new URL(`${this.path}&watch=1&allowWatchBookmarks=true&resourceVersion=${this.version}`, this.cp.url);
      const req = httpsRequest(url, { headers: { Authorization: `Bearer ${this.cp.adminToken}`, Accept: 'application/json' }, ca: this.cp.caPem }, (res) => {
        if (res.statusCode !== 200) { reject(new Error(`watch ${this.path}: HTTP ${res.statusCode}`)); res.resume(); return; }
        resolve();
        let buffered = '';
        let expired = false;
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          const at = Date.now();
          buffered += chunk;
          for (let nl = buffered.indexOf('\n'); nl >= 0; nl = buffered.indexOf('\n')) {
            const line = buffered.slice(0, nl);
            buffered = buffered.slice(nl + 1);
            if (!line.trim()) continue;
            const event = JSON.parse(line) as { type: string; object: any };
            if (event.type === 'ERROR') { expired = true; continue; }
            this.version = event.object?.metadata?.resourceVersion ?? this.version;
            if (event.type !== 'BOOKMARK') this.onEvent(event.type, event.object, at);
          }
        });
        res.on('error', () => {});
        res.on('close', () => { if (!this.stopped) this.reopen(expired); });
      });
      req.on('error', (err) => { if (!this.stopped) reject(err); });
      req.end();
      this.req = req;
    });
  }

  private reopen(expired: boolean): void {
    (expired ? this.list() : Promise.resolve()).then(() => this.open()).catch(() => setTimeout(() => { if (!this.stopped) this.reopen(true); }, 500));
  }
}
