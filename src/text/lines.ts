// text/: shared by every layer; imports nothing from src/ (test/unit/layers.test.ts).
// Lines of text that came from elsewhere (an HTTP body, a log), one at a time. `text.split('\n')`
// builds every line and an array of them before any cap can be looked at: 8 MiB of '\n' is 8 million
// entries, more than the agent's 64 MiB heap holds. Here a line is cut out only when it is handed over,
// at most `maxLines` of them, and a line longer than `maxLineChars` is skipped without being copied.
// Text that arrives in pieces (a response body) goes through a LineSplitter: only the unfinished
// line is held, so a body is never whole in memory.

export interface LineBounds {
  maxLines: number;
  /** Longer lines are skipped (counted, not handed over); default: no limit. */
  maxLineChars?: number;
}

/** Where a bounded walk stopped: lines seen, lines skipped as too long, whether text was left unread. */
export interface LineWalk {
  lines: number;
  skippedLong: number;
  truncated: boolean;
}

/** Receives a line (without its '\n'); false stops the walk. */
export type LineHandler = (line: string) => boolean | void;

export class LineSplitter {
  readonly walk: LineWalk = { lines: 0, skippedLong: 0, truncated: false };
  private readonly maxLines: number;
  private readonly maxLineChars: number;
  private readonly each: LineHandler;
  private partial = '';
  private overlong = false;
  private stopped = false;

  constructor(bounds: LineBounds, each: LineHandler) {
    this.maxLines = bounds.maxLines;
    this.maxLineChars = bounds.maxLineChars ?? Infinity;
    this.each = each;
  }

  /** True once no more lines are wanted: the reader may stop reading. */
  get done(): boolean {
    return this.stopped || this.walk.lines >= this.maxLines;
  }

  /** The next piece of text; lines it completes are handed over. */
  push(text: string): void {
    let start = 0;
    while (!this.done) {
      const newline = text.indexOf('\n', start);
      if (newline < 0) return this.hold(text, start);
      this.finish(text, start, newline);
      start = newline + 1;
    }
    if (start < text.length) this.walk.truncated = true;
  }

  /** The text has ended: its last line (after the last '\n', as split gives it) is handed over. */
  end(): LineWalk {
    if (!this.done) this.finish('', 0, 0);
    else if (this.partial !== '' || this.overlong) this.walk.truncated = true;
    this.partial = '';
    return this.walk;
  }

  private hold(text: string, start: number): void {
    if (this.overlong) return;
    if (this.partial.length + text.length - start > this.maxLineChars) {
      this.overlong = true;
      this.partial = '';
    } else {
      this.partial += text.slice(start);
    }
  }

  private finish(text: string, start: number, end: number): void {
    this.walk.lines++;
    if (this.overlong || this.partial.length + end - start > this.maxLineChars) this.walk.skippedLong++;
    else if (this.each(this.partial + text.slice(start, end)) === false) this.stopped = true;
    this.partial = '';
    this.overlong = false;
  }
}

/** Calls `each` for each line of `text`, within the bounds, until it returns false. */
export function eachLine(text: string, bounds: LineBounds, each: LineHandler): LineWalk {
  const splitter = new LineSplitter(bounds, each);
  splitter.push(text);
  return splitter.end();
}

/** The first `maxLines` lines as an array (for callers that need to look back). */
export function firstLines(text: string, maxLines: number): string[] {
  const out: string[] = [];
  eachLine(text, { maxLines }, (line) => { out.push(line); });
  return out;
}
