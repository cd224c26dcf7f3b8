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
