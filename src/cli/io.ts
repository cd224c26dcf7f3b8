// What a command needs from the process, passed in so tests can capture it.
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { InputError } from '../input-error.ts';
import { didYouMean } from '../text/suggest.ts';

export interface Io {
  stdout: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  stderr: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  env: NodeJS.ProcessEnv;
  /** For questions on a terminal (measure's leftover prompt); absent in tests and pipes. */
  stdin?: NodeJS.ReadableStream & { isTTY?: boolean };
}

export type Command = (args: string[], io: Io) => Promise<number>;

export const EXIT_OK = 0;
export const EXIT_FINDINGS = 1;
export const EXIT_INPUT = 2;
/** An internal error: a bug, not the user's input. */
export const EXIT_BUG = 3;

/** Wrong flags and bad input files: exit 2 with a sentence, never a stack trace. */
export class UsageError extends InputError {
  override name = 'UsageError';
}

type Options = NonNullable<ParseArgsConfig['options']>;

export function parseFlags<T extends Options>(args: string[], options: T, command: string) {
  try {
    return parseArgs({ args, options: { ...options, help: { type: 'boolean', short: 'h' } }, allowPositionals: true, strict: true });
  } catch (error) {
    const message = (error as Error).message.replace(/\. To specify a positional argument.*$/s, '');
    const unknown = /^Unknown option '(--?[^']+)'/.exec(message)?.[1];
    const known = [...Object.keys(options), 'help'].map((name) => `--${name}`);
    const hint = unknown?.startsWith('--') ? didYouMean(unknown, known) : '';
    throw new UsageError(`${message}${hint}\nRun "node-tuning-advisor ${command} --help" for the flags it takes.`);
  }
}

export function oneOf<T extends string>(flag: string, value: string | undefined, allowed: readonly T[], fallback: T): T {
  if (value === undefined) return fallback;
  if ((allowed as readonly string[]).includes(value)) return value as T;
  throw new UsageError(`${flag} must be one of ${allowed.join(', ')} (got "${value}")`);
}

export { PIPED_COLUMNS as PIPE_COLUMNS, terminalWidth } from '../text/width.ts';

export function useColor(io: Io): boolean {
  return io.stdout.isTTY === true && !io.env.NO_COLOR && io.env.TERM !== 'dumb';
}

/** "--only a,b --only c" → ["a", "b", "c"]. */
export function listFlag(values: string[] | undefined): string[] {
  return (values ?? []).flatMap((value) => value.split(',')).map((value) => value.trim()).filter(Boolean);
}

const UNITS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as Record<string, number> & { h: number };

/**
 * The longest duration a flag takes: 24 days. A Node timer waits at most 2^31 - 1 ms (~24.8 days);
 * a longer one fires after 1 ms, so `--interval 1000h` ran the agent's loop flat out (6 901 cycles
 * in 10 s). The chart's values.schema.json keeps `agent.interval` below it too.
 */
export const MAX_DURATION_MS = 576 * UNITS.h;
const MAX_DURATION_TEXT = '576h (24 days)';

/** "90s", "5m", "1h30m" → milliseconds; names the flag on bad input. Zero ("0", "0s") only where it means "none". */
export function parseDuration(flag: string, value: string, options: { allowZero?: boolean } = {}): number {
  if (options.allowZero && value === '0') return 0;
  const parts = [...value.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)];
  const total = parts.reduce((sum, [, n, unit]) => sum + Number(n) * (UNITS[unit as string] as number), 0);
  if (parts.length === 0 || parts.map((p) => p[0]).join('') !== value || total < 0 || (total === 0 && !options.allowZero)) {
    throw new UsageError(`${flag} "${value}" is not a duration; use e.g. ${options.allowZero ? '0s, ' : ''}30s, 5m, 1h or 1h30m`);
  }
  if (total > MAX_DURATION_MS) {
    throw new UsageError(`${flag} "${value}" is longer than ${MAX_DURATION_TEXT}, the longest a timer waits (a longer one would fire at once, over and over); use at most ${MAX_DURATION_TEXT.split(' ')[0]}, e.g. 24h`);
  }
  return total;
}

/** A whole number in [min, max] from a flag, or a UsageError naming the flag. */
export function numberFlag(flag: string, value: string | undefined, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!/^\d+(\.\d+)?$/.test(value.trim()) || !Number.isFinite(n) || n < min || n > max) {
    throw new UsageError(`${flag} must be a number from ${min} to ${max} (got "${value.slice(0, 40)}")`);
  }
  return n;
}
