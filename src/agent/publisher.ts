// One publish: diff the rendered annotations and labels against the watched Node, patch only on difference,
// then send the Events for the transitions that patch recorded. Events that fail stay queued.
// An Event's name is the Node's name, the time and 64 random bits: nobody can take it before the agent
// sends it, so a 409 is trusted as "already created" only for an Event whose earlier try may have
// reached the server (no answer, 5xx). A 409 on a name never sent before means someone else holds that
// name: the Event gets a fresh name, never counts as sent.
import { randomBytes } from 'node:crypto';
import { KubeError } from '../kube/errors.ts';
import type { EventObject, NodeObject } from '../kube/objects.ts';
import type { Report } from '../report/types.ts';
import type { NodeMetadataPatch, WriteApi } from './api.ts';
import { diffAnnotations, renderAnnotations, warnedRulesOnNode } from '../wire/annotations.ts';
import { diffLabels, renderLabels } from '../wire/node-labels.ts';
import { eventObject, heldWarnings, transitions } from '../publish/events.ts';


/** Fresh names tried for one Event whose name was taken by someone else, before the publish fails. */
const MAX_RENAMES = 3;

interface PendingEvent {
  event: EventObject;
  /** An earlier create of this name may have been written (no answer, or a 5xx): a 409 then is ours. */
  maybeCreated: boolean;
  renames: number;
}

export interface PublishOutcome {
  patched: boolean;
  events: number;
}

export class Publisher {
  private readonly api: WriteApi;
  private readonly dryRunOut: NodeJS.WritableStream | undefined;
  private readonly patched: (node: NodeObject) => void;
  private pending: PendingEvent[] = [];

  /** `patched` receives the server's Node after our PATCH: the newest state, whatever the watch says. */
  constructor(api: WriteApi, patched: (node: NodeObject) => void, dryRunOut?: NodeJS.WritableStream) {
    this.api = api;
    this.patched = patched;
    this.dryRunOut = dryRunOut;
  }

  async publish(report: Report, node: NodeObject): Promise<PublishOutcome> {
    const name = node.metadata?.name ?? report.node;
    const current = node.metadata?.annotations;
    // What the agent has told so far lives on the Node: the standing Warnings, kept while undecided.
    const warned = warnedRulesOnNode(current);
    const annotations = diffAnnotations(renderAnnotations(report, heldWarnings(warned, report)), current);
    const labels = diffLabels(renderLabels(report), node.metadata?.labels);
    const patch: NodeMetadataPatch | undefined = annotations === undefined && labels === undefined ? undefined
      : { ...(annotations ? { annotations } : {}), ...(labels ? { labels } : {}) };
    const now = new Date();
    const events = annotations === undefined ? [] : transitions(warned, report)
      .map((t) => eventObject(t, { name, uid: node.metadata?.uid }, now, eventSuffix(now)));
    if (this.dryRunOut) return this.printDryRun(name, patch, events);
    let patched = false;
    if (patch !== undefined) {
      const updated = await this.api.patchNode(name, patch);
      patched = true;
      this.pending.push(...events.map((event) => ({ event, maybeCreated: false, renames: 0 })));
      this.patched(updated);
    }
    return { patched, events: await this.flushEvents() };
  }

  private async flushEvents(): Promise<number> {
    let sent = 0;
    while (this.pending.length > 0) {
      const entry = this.pending[0] as PendingEvent;
      try {
        await this.api.createEvent(entry.event);
      } catch (err) {
        if (!(err instanceof KubeError && err.conflict)) {
          entry.maybeCreated ||= mayHaveBeenWritten(err);
          throw err;
        }
        if (!entry.maybeCreated) {
          if (renameTaken(entry)) continue;
          this.pending.shift();
          throw new Error(`Event name ${entry.event.metadata.name} and ${MAX_RENAMES} fresh ones were taken by someone else; that Event is dropped`);
        }
      }
      this.pending.shift();
      sent += 1;
    }
    return sent;
  }

  private printDryRun(name: string, patch: NodeMetadataPatch | undefined, events: EventObject[]): PublishOutcome {
    const out = this.dryRunOut as NodeJS.WritableStream;
    if (patch === undefined) {
      out.write(`dry-run: node ${name} already carries this report; nothing to send\n`);
      return { patched: false, events: 0 };
    }
    out.write(`dry-run: PATCH /api/v1/nodes/${name} (Content-Type: application/merge-patch+json)\n`);
    out.write(`${JSON.stringify({ metadata: patch }, null, 2)}\n`);
    for (const e of events) out.write(`dry-run: Event ${e.type} ${e.reason}: ${e.message}\n`);
    return { patched: false, events: 0 };
  }
}

/** Hex milliseconds (names sort by time, as kubelet's do) and 64 bits from the CSPRNG that no one can guess. */
function eventSuffix(now: Date): string {
  return `${now.getTime().toString(16)}${randomBytes(8).toString('hex')}`;
}

/** Only an answer below 500 proves that the server did not store the Event. */
function mayHaveBeenWritten(err: unknown): boolean {
  return !(err instanceof KubeError && err.status !== undefined && err.status < 500);
}

/** Someone else created an Event under this name before our first try: it is not ours. False: no rename left. */
function renameTaken(entry: PendingEvent): boolean {
  if (entry.renames >= MAX_RENAMES) return false;
  const node = entry.event.involvedObject.name;
  entry.event = { ...entry.event, metadata: { ...entry.event.metadata, name: `${node}.${eventSuffix(new Date())}` } };
  entry.renames += 1;
  return true;
}
