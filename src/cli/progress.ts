// A progress line on stderr while something writes, as fio prints its status line: only on a
// terminal, redrawn in place, never wider than the terminal, erased when done.
import type { Io } from './io.ts';
import { statusLine, type StatusLine, type TerminalStream } from '../text/status-line.ts';

type ProgressIo = Pick<Io, 'stderr'>;

export interface Progress {
  onProgress: (done: number, total: number) => void;
  /** Erase the line. */
  finish: () => void;
}

function seconds(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  return s >= 60 ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s` : `${s}s`;
}

/** "fsync probe [=====>     ] 45 % 4300/9591 writes, 870/s, eta 6s", the parts that fit in `columns`. */
export function progressLine(label: string, done: number, total: number, elapsedMs: number, columns: number): string {
  const fraction = total > 0 ? Math.min(1, done / total) : 0;
  const rate = elapsedMs > 0 ? done / (elapsedMs / 1000) : 0;
  const eta = rate > 0 ? seconds(((total - done) / rate) * 1000) : '?';
  const percent = `${Math.floor(fraction * 100)} %`;
  const tail = ` ${percent} ${done}/${total} writes, ${Math.round(rate)}/s, eta ${eta}`;
  const room = columns - 1 - label.length - tail.length - 3;
  if (room >= 10) {
    const bar = Math.min(room, 30);
    const filled = Math.round(fraction * bar);
    return `${label} [${'='.repeat(Math.max(0, filled - 1))}${filled > 0 ? '>' : ''}${' '.repeat(bar - filled)}]${tail}`;
  }
  const short = `${label}${tail}`;
  return short.length < columns ? short : `${label} ${percent}`.slice(0, Math.max(0, columns - 1));
}

/** Undefined when stderr is not a terminal: nothing is drawn into logs or pipes. */
export function progressOnTerminal(io: ProgressIo, label: string, now: () => number = Date.now): Progress | undefined {
  const line = statusLine(io.stderr as TerminalStream);
  if (!line) return undefined;
  const started = now();
  return {
    onProgress: (done, total) => line.draw(progressLine(label, done, total, now() - started, line.columns())),
    finish: () => line.clear(),
  };
}
