// Follows the run's pods from the one pod watch: each pod's milestones as the watch received them
// and as the kubelet stamped them (timeline.ts), from the moment the create request left the command
// (its own clock, in ms). Attach latency goes through the agent's own workload state. Also keeps,
// per pod, why it is not Ready yet, for a timeout's report.
import { podView } from '../workload/pod-view.ts';
import { WorkloadState } from '../workload/state.ts';
import type { NotReadyGroup, PodSample } from './result.ts';
import { byCodePoint, byText } from '../order.ts';
import { sampleOf } from './pod-sample.ts';
import { sandboxStampOf } from '../workload/pod-milestones.ts';
import { Timelines, type Timeline } from './timeline.ts';
import type { Obj } from '../kube/objects.ts';

export interface Counts {
  created: number;
  scheduled: number;
  started: number;
  ready: number;
  /** Ended without becoming Ready (phase Failed or Succeeded). */
  ended: number;
  /** Pods that still exist (cleanup waits for 0). */
  present: number;
}

interface Brief {
  reason: string;
  message: string;
}

const MAX_MESSAGE = 240;

function clip(text: unknown): string {
  return typeof text === 'string' ? text.replace(/\s+/g, ' ').trim().slice(0, MAX_MESSAGE) : '';
}

/** Why a pod is not Ready, as the scheduler or the kubelet said it. */
export function whyNotReady(pod: Obj): Brief {
  const status = pod?.status ?? {};
  if (status.phase === 'Failed' || status.phase === 'Succeeded') {
    return { reason: `${status.phase}${status.reason ? `: ${clip(status.reason)}` : ''}`, message: clip(status.message) };
  }
  const conditions: Obj[] = Array.isArray(status.conditions) ? status.conditions : [];
  const scheduled = conditions.find((c) => c?.type === 'PodScheduled');
  if (!pod?.spec?.nodeName) {
    if (scheduled?.status === 'False') return { reason: clip(scheduled.reason) || 'not scheduled', message: clip(scheduled.message) };
    return { reason: 'not scheduled yet', message: '' };
  }
  const containers: Obj[] = Array.isArray(status.containerStatuses) ? status.containerStatuses : [];
  for (const c of containers) {
    if (c?.state?.waiting) return { reason: clip(c.state.waiting.reason) || 'waiting', message: clip(c.state.waiting.message) };
    if (c?.state?.terminated) return { reason: `container exited: ${clip(c.state.terminated.reason) || 'terminated'}`, message: clip(c.state.terminated.message) };
  }
  if (containers.length === 0 && conditions.length <= 1) return { reason: 'no status from the kubelet yet', message: `bound to ${clip(pod.spec.nodeName)}` };
  const unready = conditions.find((c) => c?.type === 'Ready' && c.status !== 'True');
  const started = containers.length > 0 && containers.every((c) => c?.started === true || (c?.started == null && Boolean(c?.state?.running)));
  return { reason: clip(unready?.reason) || (started ? 'started, not Ready' : 'not Ready'), message: clip(unready?.message) };
}

export class PodFollower {
  readonly state: WorkloadState;
  readonly timelines = new Timelines();
  /** Events arriving now come from a LIST after the watch failed, not from the watch. */
  private relisting = false;
  watchFailures = 0;
  private readonly now: () => number;
  private readonly sentAt = new Map<string, number>();
  private readonly latest = new Map<string, Obj>();
  private readonly created = new Set<string>();
  private readonly present = new Set<string>();
  private readonly ready = new Set<string>();
  private readonly ended = new Set<string>();
  private readonly scheduled = new Set<string>();
  private readonly started = new Set<string>();
  private readonly listeners = new Set<() => void>();

  constructor(nodeName: string, pods: number, now: () => number) {
    this.now = now;
    this.state = new WorkloadState({ nodeName, now, windowMs: Infinity, maxSamples: Math.max(1, pods), maxTracked: pods + 16 });
  }

  /** The pod watch failed: what arrives until the next `listed` comes from its re-list. */
  watchFailed(): void {
    this.watchFailures += 1;
    this.relisting = true;
  }

  listed(): void {
    this.relisting = false;
  }

  /** The create request for `name` leaves (again: once it is written to the connection) at `at`. */
  sending(name: string, at: number): void {
    this.sentAt.set(name, at);
    this.timelines.sending(name, at);
  }

  createdOk(name: string): void {
    this.created.add(name);
    this.present.add(name);
    this.changed();
  }

  /** `viaList`: from a LIST (the final one, say) rather than the watch. */
  podEvent(type: string, pod: Obj, viaList = this.relisting): void {
    const name = pod?.metadata?.name;
    const uid = pod?.metadata?.uid;
    if (typeof name !== 'string' || typeof uid !== 'string' || !this.sentAt.has(name)) return;
    if (type === 'DELETED') {
      this.present.delete(name);
      this.state.podDeleted(pod);
    } else {
      this.present.add(name);
      this.created.add(name);
      this.latest.set(name, pod);
      this.state.podSeen(pod, this.sentAt.get(name));
      if (this.timelines.seen(pod, this.now(), viaList)) this.ready.add(name);
      this.note(name, pod);
    }
    this.changed();
  }

  nodeEvent(type: string, node: Obj): void {
    this.state.nodeSeen(type === 'DELETED' ? undefined : node);
  }

  private note(name: string, pod: Obj): void {
    const view = podView(pod);
    if (!view) return;
    if (view.reached.scheduled !== undefined || pod?.spec?.nodeName) this.scheduled.add(name);
    if (view.reached.started !== undefined) this.started.add(name);
    if (view.terminal && !this.ready.has(name)) this.ended.add(name);
  }

  /**
   * One sample per Ready pod, by name; `pulls`: image pull time per pod from its Pulled event;
   * `kubeletVersion`: the node's, which decides where initialization ends (from 1.36, at the sandbox).
   */
  samples(pulls: ReadonlyMap<string, number> = new Map(), kubeletVersion: string | null = null): PodSample[] {
    const stamp = sandboxStampOf(kubeletVersion);
    return this.timelines.all()
      .map((t) => sampleOf(t, pulls.get(t.name) ?? null, stamp))
      .filter((s): s is PodSample => s !== undefined)
      .sort((a, b) => byCodePoint(a.pod, b.pod));
  }

  /** Whether the kubelet has written any status for any of the pods yet. */
  get kubeletWrote(): boolean {
    return this.timelines.all().some((t) => t.marks.sandbox || t.marks.initialized || t.marks.started || t.marks.ready);
  }

  timeline(name: string): Timeline | undefined {
    return this.timelines.get(name);
  }

  counts(): Counts {
    return {
      created: this.created.size, scheduled: this.scheduled.size, started: this.started.size,
      ready: this.ready.size, ended: this.ended.size, present: this.present.size,
    };
  }

  /** Every created pod is Ready or ended. */
  get settled(): boolean {
    return this.created.size > 0 && this.ready.size + this.ended.size >= this.created.size;
  }

  /** Resolves at the next change (a pod event or a create answered). */
  nextChange(): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => { this.listeners.delete(done); resolve(); };
      this.listeners.add(done);
    });
  }

  private changed(): void {
    for (const listener of [...this.listeners]) listener();
  }

  /** The pods not Ready, grouped by why, most common first. */
  notReady(): NotReadyGroup[] {
    const groups = new Map<string, NotReadyGroup>();
    for (const name of this.created) {
      if (this.ready.has(name)) continue;
      const pod = this.latest.get(name);
      const brief = pod ? whyNotReady(pod) : { reason: 'never seen on the watch', message: '' };
      const group = groups.get(brief.reason) ?? { reason: brief.reason, pods: 0, example: brief.message ? `${name}: ${brief.message}` : name };
      group.pods += 1;
      groups.set(brief.reason, group);
    }
    return [...groups.values()].sort((a, b) => b.pods - a.pods || byText(a.reason, b.reason));
  }
}
