// A progress line on stderr while a measurement runs: rewritten in place on a terminal
// ("37/100 ready, 12 s"), a line per stage and every 10 s in a log (CI). Notes go above it.
import type { Progress } from '../measure/run.ts';
import { hang } from '../publish/terminal/layout.ts';
import { statusLine, type StatusLine, type TerminalStream } from '../text/status-line.ts';

const LOG_EVERY_MS = 10_000;

export function progressText(p: Progress): string {
  const seconds = `${Math.round(p.elapsedMs / 1000)} s`;
  const c = p.counts;
  switch (p.stage) {
    case 'preparing': return 'preparing the namespace';
    case 'creating': return `creating: ${c.created}/${p.total} pods created, ${seconds}`;
    case 'starting': {
      const detail = [`${c.scheduled} scheduled`, `${c.started} started`, ...(c.ended > 0 ? [`${c.ended} ended`] : [])].join(', ');
      return `${c.ready}/${p.total} ready, ${seconds} (${detail})`;
    }
    case 'cleaning up': return `cleaning up: ${c.present} pod${c.present === 1 ? '' : 's'} left`;
  }
}

export class ProgressLine {
  private readonly out: TerminalStream;
  /** The line on a terminal; undefined in a log. */
  private readonly line: StatusLine | undefined;
  private lastLogAt = 0;
  private lastStage: Progress['stage'] | undefined;

  constructor(out: TerminalStream) {
    this.out = out;
    this.line = statusLine(out, 20);
  }

  update(p: Progress): void {
    const text = progressText(p);
    if (this.line) {
      this.line.draw(text);
      return;
    }
    const now = Date.now();
    if (p.stage !== this.lastStage || now - this.lastLogAt >= LOG_EVERY_MS) {
      if (p.stage !== 'preparing') this.out.write(`${text}\n`);
      this.lastStage = p.stage;
      this.lastLogAt = now;
    }
  }

  /** A line above the progress; on a terminal wrapped to its width. */
  note(line: string): void {
    if (this.line) this.line.above(hang('', line, this.line.columns(), 2));
    else this.out.write(`${line}\n`);
  }

  clear(): void {
    this.line?.clear();
  }
}
