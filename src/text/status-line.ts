// The one in-place status line of the CLI (fsync probe, report's paging, measure): only on a
// terminal, each draw replaces the line, clipped to the terminal's width by display columns (an
// ellipsis where cut); lines written above it keep it below them; clear erases it.
import { fitColumns } from './width.ts';

export type TerminalStream = NodeJS.WritableStream & { isTTY?: boolean; columns?: number };

const ERASE = '\r\u001b[K';

export class StatusLine {
  private readonly out: TerminalStream;
  private readonly minColumns: number;
  private shown = '';

  /** Undefined when `out` is not a terminal: nothing is drawn into logs or pipes. */
  static on(out: TerminalStream, minColumns = 10): StatusLine | undefined {
    return out.isTTY === true ? new StatusLine(out, minColumns) : undefined;
  }

  private constructor(out: TerminalStream, minColumns: number) {
    this.out = out;
    this.minColumns = minColumns;
  }

  get columns(): number {
    return this.out.columns ?? 80;
  }

  /** `line` cut to the terminal's width less one column (a full last column wraps on some terminals). */
  fit(line: string): string {
    return fitColumns(line, Math.max(this.minColumns, this.columns - 1));
  }

  draw(line: string): void {
    const fitted = this.fit(line);
    // Written over the old line, then the rest of it erased: the line never blinks empty.
    if (fitted !== this.shown) this.out.write(`\r${fitted}\u001b[K`);
    this.shown = fitted;
  }

  /** Lines (already laid out) above the status line, which is drawn again below them. */
  above(lines: readonly string[]): void {
    const text = lines.join('\n');
    this.out.write(this.shown ? `${ERASE}${text}\n${this.shown}` : `${text}\n`);
  }

  clear(): void {
    if (this.shown) this.out.write(ERASE);
    this.shown = '';
  }
}
