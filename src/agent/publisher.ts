// One publish: diff the rendered annotations against the watched Node, patch only on difference,
// then send the Events for the transitions that patch recorded. Events that fail stay queued.
import { KubeError } from '../kube/errors.ts';
import type { EventObject, NodeObject } from '../kube/objects.ts';
import type { Report } from '../report/types.ts';
import type { WriteApi } from './api.ts';
import { diffAnnotations, failingRulesOnNode, renderAnnotations, type AnnotationPatch } from '../publish/annotations.ts';
import { eventObject, transitions } from '../publish/events.ts';


export interface PublishOutcome {
  patched: boolean;
  events: number;
}

export class Publisher {
  private readonly api: WriteApi;
  private readonly dryRunOut: NodeJS.WritableStream | undefined;
  private readonly patched: (node: NodeObject) => void;
  private pending: EventObject[] = [];
  private sequence = 0;

  /** `patched` receives the server's Node after our PATCH: the newest state, whatever the watch says. */
  constructor(api: WriteApi, patched: (node: NodeObject) => void, dryRunOut?: NodeJS.WritableStream) {
    this.api = api;
    this.patched = patched;
    this.dryRunOut = dryRunOut;
  }

  async publish(report: Report, node: NodeObject): Promise<PublishOutcome> {
    const name = node.metadata?.name ?? report.node;
    const current = node.metadata?.annotations;
    const patch = diffAnnotations(renderAnnotations(report), current);
    const now = new Date();
    const events = patch === undefined ? [] : transitions(failingRulesOnNode(current), report)
      .map((t) => eventObject(t, { name, uid: node.metadata?.uid }, now, this.nextSuffix(now)));
    if (this.dryRunOut) return this.printDryRun(name, patch, events);
    let patched = false;
    if (patch !== undefined) {
      const updated = await this.api.patchAnnotations(name, patch);
      patched = true;
      this.pending.push(...events);
      this.patched(updated);
    }
    return { patched, events: await this.flushEvents() };
  }

  private async flushEvents(): Promise<number> {
    let sent = 0;
    while (this.pending.length > 0) {
      try {
        await this.api.createEvent(this.pending[0] as EventObject);
      } catch (err) {
        if (!(err instanceof KubeError && err.conflict)) throw err; // 409: already created by an earlier try
      }
      this.pending.shift();
      sent += 1;
    }
    return sent;
  }

  private nextSuffix(now: Date): string {
    this.sequence += 1;
    return `${now.getTime().toString(16)}${this.sequence.toString(16).padStart(4, '0')}`;
  }

  private printDryRun(name: string, patch: AnnotationPatch | undefined, events: EventObject[]): PublishOutcome {
    const out = this.dryRunOut as NodeJS.WritableStream;
    if (patch === undefined) {
      out.write(`dry-run: node ${name} already carries this report; nothing to send\n`);
      return { patched: false, events: 0 };
    }
    out.write(`dry-run: PATCH /api/v1/nodes/${name} (Content-Type: application/merge-patch+json)\n`);
    out.write(`${JSON.stringify({ metadata: { annotations: patch } }, null, 2)}\n`);
    for (const e of events) out.write(`dry-run: Event ${e.type} ${e.reason}: ${e.message}\n`);
    return { patched: false, events: 0 };
  }
}
