// The one in-place status line of the CLI (fsync probe, report's paging, measure): only on a
// terminal, each draw replaces the line, clipped to the terminal's width by display columns (an
// ellipsis where cut); lines written above it keep it below them; clear erases it.
import { fitColumns } from './columns.ts';

export type TerminalStream = NodeJS.WritableStream & { isTTY?: boolean; columns?: number };

export interface StatusLine {
  /** The terminal's width. */
  columns(): number;
  /** `line` cut to the terminal's width less one column (a full last column wraps on some terminals). */
  fit(line: string): string;
  draw(line: string): void;
  /** Lines (already laid out) above the status line, which is drawn again below them. */
  above(lines: readonly string[]): void;
  clear(): void;
}

/** Undefined when `out` is not a terminal: nothing is drawn into logs or pipes. */
export function statusLine(out: TerminalStream, minColumns = 10): StatusLine | undefined {
  if (out.isTTY !== true) return undefined;
  let shown = '';
  const columns = () => out.columns ?? 80;
  const fit = (line: string) => fitColumns(line, Math.max(minColumns, columns() - 1));
  return {
    columns,
    fit,
    draw: (line) => {
      const fitted = fit(line);
      if (fitted !== shown) out.write(`\r\u001b[K${fitted}`);
      shown = fitted;
    },
    above: (lines) => { out.write(shown ? `\r\u001b[K${lines.join('\n')}\n${shown}` : `${lines.join('\n')}\n`); },
    clear: () => {
      if (shown) out.write('\r\u001b[K');
      shown = '';
    },
  };
}
