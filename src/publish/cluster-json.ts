// `report --output json` as a stream: the head, then every node as its page is read, then the
// summary, fleet, cluster checks and API use. The text is exactly what JSON.stringify(report, null, 2)
// would print for the whole document, but no more than one node is held to write it; a slow reader
// holds the report back (write waits for 'drain') instead of letting output pile up in memory.
import type { NodeRow } from '../cluster/nodes.ts';

type Out = NodeJS.WritableStream;

type Clean = (text: string) => string;

/** `value` as JSON.stringify(value, null, 2) prints it nested `depth` levels deep (first line not indented), strings cleaned. */
function nested(value: unknown, depth: number, clean: Clean): string {
  return JSON.stringify(value, (_key, v: unknown) => (typeof v === 'string' ? clean(v) : v), 2).replace(/\n/g, `\n${'  '.repeat(depth)}`);
}

export class ClusterJsonStream {
  private readonly out: Out;
  private readonly head: Record<string, unknown>;
  private opened = false;
  private nodes = 0;
  private closed = false;
  private readonly clean: Clean;

  /**
   * `head`: the keys before `nodes` (schemaVersion, kind, generatedAt, selector). `clean` is applied
   * to every string value (keys are the report's own), e.g. to strip control characters.
   */
  constructor(out: Out, head: Record<string, unknown>, clean: Clean = (text) => text) {
    this.out = out;
    this.head = head;
    this.clean = clean;
  }

  private async write(text: string): Promise<void> {
    if (this.out.write(text)) return;
    await new Promise<void>((resolve) => this.out.once('drain', () => resolve()));
  }

  private async open(): Promise<void> {
    if (this.opened) return;
    this.opened = true;
    const keys = Object.entries(this.head).map(([key, value]) => `  ${JSON.stringify(key)}: ${nested(value, 1, this.clean)},\n`).join('');
    await this.write(`{\n${keys}  "nodes": [`);
  }

  async node(row: NodeRow): Promise<void> {
    await this.open();
    await this.write(`${this.nodes === 0 ? '\n' : ',\n'}    ${nested(row, 2, this.clean)}`);
    this.nodes += 1;
  }

  private async closeNodes(): Promise<void> {
    await this.open();
    await this.write(this.nodes === 0 ? ']' : '\n  ]');
  }

  /** The keys after `nodes`, and the end of the document. */
  async finish(tail: Record<string, unknown>): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.closeNodes();
    const keys = Object.entries(tail).map(([key, value]) => `,\n  ${JSON.stringify(key)}: ${nested(value, 1, this.clean)}`).join('');
    await this.write(`${keys}\n}\n`);
  }

  /** Ends a document whose node list broke off: still valid JSON, with the reason under "error". */
  async abort(error: string): Promise<void> {
    if (this.closed || !this.opened) return;
    await this.finish({ error });
  }
}
