// Each run pod's milestones as this command's pod watch received them and as the kubelet stamped
// them (the agent's mechanism, workload/pod-milestones.ts), from when its create request was
// written to the connection. A pod counts as Ready when the watch shows it Running with Ready=True;
// the total is create request → that event.
import { noteReached, reachedNow, timeMs, type Marks } from '../workload/pod-milestones.ts';

type Obj = Record<string, any>;

export interface Timeline {
  name: string;
  sentAt: number;
  marks: Marks;
  /** API creationTimestamp (ms, whole seconds): compared with sentAt for clock skew. */
  createdStampAt: number | null;
}

export class Timelines {
  private readonly byName = new Map<string, Timeline>();

  sending(name: string, at: number): void {
    const t = this.byName.get(name);
    if (t) t.sentAt = at;
    else this.byName.set(name, { name, sentAt: at, marks: {}, createdStampAt: null });
  }

  has(name: string): boolean {
    return this.byName.has(name);
  }

  /** The pod as the watch (viaList false) or a LIST delivered it at `at`; returns true when it just became Ready. */
  seen(pod: Obj, at: number, viaList: boolean): boolean {
    const t = this.byName.get(pod?.metadata?.name);
    if (!t) return false;
    t.createdStampAt ??= timeMs(pod?.metadata?.creationTimestamp) ?? null;
    return noteReached(t.marks, reachedNow(pod), at, viaList);
  }

  get(name: string): Timeline | undefined {
    return this.byName.get(name);
  }

  all(): Timeline[] {
    return [...this.byName.values()];
  }
}
