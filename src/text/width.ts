// The one width rule of every terminal view (scan, report, rules list, explain, describe, probe,
// measure): the terminal's columns on a TTY; else $COLUMNS; else PIPED_COLUMNS. Never below
// MIN_COLUMNS: narrower, lines just wrap more.

/** Piped output is laid out for this many columns unless $COLUMNS says otherwise. */
export const PIPED_COLUMNS = 100;
export const MIN_COLUMNS = 40;

export interface WidthSource {
  stdout: { isTTY?: boolean; columns?: number };
  env: NodeJS.ProcessEnv;
}

export function terminalWidth(io: WidthSource): number {
  const fromTerminal = io.stdout.isTTY === true ? io.stdout.columns : undefined;
  const fromEnv = /^\d+$/.test(io.env.COLUMNS ?? '') ? Number(io.env.COLUMNS) : undefined;
  return Math.max(MIN_COLUMNS, fromTerminal || fromEnv || PIPED_COLUMNS);
}

// East Asian wide and fullwidth characters and emoji take two columns; combining marks none.
const WIDE = /[\u1100-\u115F\u2E80-\u303E\u3041-\u33FF\u3400-\u4DBF\u4E00-\u9FFF\uA000-\uA4CF\uAC00-\uD7A3\uF900-\uFAFF\uFE30-\uFE4F\uFF00-\uFF60\uFFE0-\uFFE6\u{1F300}-\u{1F64F}\u{1F900}-\u{1F9FF}\u{20000}-\u{3FFFD}]/u;
const ZERO_WIDTH = /[\p{Mn}\p{Me}\u200B-\u200F]/u;

export function displayWidth(text: string): number {
  let columns = 0;
  for (const char of text) columns += ZERO_WIDTH.test(char) ? 0 : WIDE.test(char) ? 2 : 1;
  return columns;
}

/** The first characters of `text` that fit in `columns`. */
export function takeColumns(text: string, columns: number): string {
  let out = '';
  let used = 0;
  for (const char of text) {
    const w = displayWidth(char);
    if (used + w > columns) break;
    out += char;
    used += w;
  }
  return out;
}

/** `text` if it fits in `columns`, else its first columns and "…" in the last one. */
export function fitColumns(text: string, columns: number): string {
  return displayWidth(text) <= columns ? text : `${takeColumns(text, Math.max(0, columns - 1))}…`;
}
