// The test's own account of when pods became Ready, independent of the code under test: one watch
// of every pod with a label selector, resumed from the last resourceVersion whenever the server
// ends it (a loaded apiserver closes watchers that fall behind a burst), recording when each pod was
// first received Running with Ready=True.
import type { ControlPlane } from './control-plane.ts';

export class ReadyWitness {
  /** namespace/name → this process's clock (ms) when the watch first delivered the pod Running and Ready. */
  readonly readyAt = new Map<string, number>();
  /** How often the server ended the watch (each one resumed). */
  restarts = 0;
  private version = '';
  private current: { stop(): void } | undefined;
  private stopped = false;
  private readonly cp: ControlPlane;
  private readonly selector: string;

  private constructor(cp: ControlPlane, selector: string) {
    this.cp = cp;
    this.selector = selector;
  }

  static async start(cp: ControlPlane, labelSelector: string): Promise<ReadyWitness> {
    const witness = new ReadyWitness(cp, labelSelector);
    const list = await cp.must('GET', `/api/v1/pods?labelSelector=${encodeURIComponent(labelSelector)}`);
    witness.version = list.metadata.resourceVersion;
    await witness.open();
    return witness;
  }

  stop(): void {
    this.stopped = true;
    this.current?.stop();
  }

  private async open(): Promise<void> {
    const url = `/api/v1/pods?watch=true&allowWatchBookmarks=true&labelSelector=${encodeURIComponent(this.selector)}&resourceVersion=${this.version}`;
    const watch = this.cp.watch(url, (type, pod, at) => this.event(type, pod, at), {}, () => {
      if (this.stopped) return;
      this.restarts += 1;
      this.open().catch(() => {});
    });
    this.current = watch;
    const status = await watch.started;
    if (status !== 200) throw new Error(`witness watch: HTTP ${status}`);
  }

  private event(type: string, pod: any, at: number): void {
    if (typeof pod?.metadata?.resourceVersion === 'string') this.version = pod.metadata.resourceVersion;
    if (type !== 'ADDED' && type !== 'MODIFIED') return;
    const ready = pod.status?.conditions?.some((c: any) => c.type === 'Ready' && c.status === 'True');
    const key = `${pod.metadata.namespace}/${pod.metadata.name}`;
    if (ready && pod.status.phase === 'Running' && !this.readyAt.has(key)) this.readyAt.set(key, at);
  }
}
