// `report --output json|yaml` as a stream: the head, then every node as its page is read, then the
// summary, fleet, cluster checks and API use. JSON is exactly what JSON.stringify(report, null, 2)
// prints for the whole document, YAML what `yaml` prints for it, but no more than one node is held
// to write them; a slow reader holds the report back (write waits for 'drain') instead of letting
// output pile up in memory.
import { stringify } from 'yaml';
import type { NodeRow } from '../cluster/nodes.ts';

type Out = NodeJS.WritableStream;
type Clean = (text: string) => string;
export type StreamFormat = 'json' | 'yaml';

interface Encoding {
  open(head: Record<string, unknown>): string;
  node(row: NodeRow, first: boolean): string;
  closeNodes(count: number): string;
  tail(tail: Record<string, unknown>): string;
}

function jsonEncoding(clean: Clean): Encoding {
  /** `value` as JSON.stringify(value, null, 2) prints it nested `depth` levels deep (first line not indented). */
  const nested = (value: unknown, depth: number) => JSON.stringify(value, (_key, v: unknown) => (typeof v === 'string' ? clean(v) : v), 2)
    .replace(/\n/g, `\n${'  '.repeat(depth)}`);
  return {
    open: (head) => `{\n${Object.entries(head).map(([key, value]) => `  ${JSON.stringify(key)}: ${nested(value, 1)},\n`).join('')}  "nodes": [`,
    node: (row, first) => `${first ? '\n' : ',\n'}    ${nested(row, 2)}`,
    closeNodes: (count) => (count === 0 ? ']' : '\n  ]'),
    tail: (tail) => `${Object.entries(tail).map(([key, value]) => `,\n  ${JSON.stringify(key)}: ${nested(value, 1)}`).join('')}\n}\n`,
  };
}

function yamlEncoding(clean: Clean): Encoding {
  // -0 as JSON has it (0): both formats carry the same document.
  const plain = (v: unknown) => (typeof v === 'string' ? clean(v) : Object.is(v, -0) ? 0 : v);
  const yaml = (value: unknown) => stringify(value, (_key: unknown, v: unknown) => plain(v), { lineWidth: 0, aliasDuplicateObjects: false });
  return {
    open: (head) => `${yaml(head)}nodes:`,
    node: (row) => `\n${yaml([row]).trimEnd().replace(/^/gm, '  ')}`,
    closeNodes: (count) => (count === 0 ? ' []\n' : '\n'),
    tail: (tail) => yaml(tail),
  };
}

export class ClusterReportStream {
  private readonly out: Out;
  private readonly head: Record<string, unknown>;
  private readonly encoding: Encoding;
  private opened = false;
  private nodes = 0;
  private closed = false;

  /**
   * `head`: the keys before `nodes` (schemaVersion, kind, generatedAt, selector). `clean` is applied
   * to every string value (keys are the report's own), e.g. to strip control characters.
   */
  constructor(out: Out, format: StreamFormat, head: Record<string, unknown>, clean: Clean = (text) => text) {
    this.out = out;
    this.head = head;
    this.encoding = format === 'json' ? jsonEncoding(clean) : yamlEncoding(clean);
  }

  private async write(text: string): Promise<void> {
    if (this.out.write(text)) return;
    await new Promise<void>((resolve) => this.out.once('drain', () => resolve()));
  }

  private async open(): Promise<void> {
    if (this.opened) return;
    this.opened = true;
    await this.write(this.encoding.open(this.head));
  }

  async node(row: NodeRow): Promise<void> {
    await this.open();
    await this.write(this.encoding.node(row, this.nodes === 0));
    this.nodes += 1;
  }

  /** The keys after `nodes`, and the end of the document. */
  async finish(tail: Record<string, unknown>): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.open();
    await this.write(this.encoding.closeNodes(this.nodes) + this.encoding.tail(tail));
  }

  /** Ends a document whose node list broke off: still valid, with the reason under "error". */
  async abort(error: string): Promise<void> {
    if (this.closed || !this.opened) return;
    await this.finish({ error });
  }
}
