// `measure show SAVED.json [--compare OTHER.json]`: saved runs rendered again without a cluster, as
// the terminal view, markdown, JSON or (--html FILE) the page with one row per pod. With two files
// the earlier run (by when it started) is "before", whichever order they are given in.
import { access, constants, writeFile } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { compareMeasurements } from '../../measure/compare.ts';
import { MeasureError } from '../../measure/preflight.ts';
import type { Measurement } from '../../measure/result.ts';
import { readMeasurement } from '../../measure/saved.ts';
import { renderMeasurementPage, type PageRun } from '../../publish/measure-page.ts';
import {
  renderComparisonMarkdown, renderComparisonText, renderMeasurementMarkdown, renderMeasurementText,
} from '../../publish/measure-view.ts';
import { terminalJson, terminalSafe } from '../../text/terminal.ts';
import { EXIT_OK, UsageError, oneOf, parseFlags, terminalWidth, type Io } from '../io.ts';

export const MEASURE_SHOW_USAGE = `Usage: node-tuning-advisor measure show SAVED.json [--compare OTHER.json] [flags]

Renders runs saved by "measure pod-startup --save" again, without a cluster: the same verdict,
phase table and comparison as when they ran. With --compare the earlier run (by its start time) is
"before", whichever order the files are given in.

Flags:
  --compare FILE             a second saved run: before → after per phase, what changed between them
  --html FILE                also write the page: the verdict, the distribution of total start-up
                             against the SLO, and a waterfall with one row per pod (each phase its
                             own colour, the kubelet's status write its own segment); with --compare
                             both runs on one scale. One self-contained file (no script, no network).
                             Up to 1 000 pods per run are drawn one by one (what a run creates at
                             most); a file with more is drawn as 1 000 pods spread over its totals
  --output FORMAT            table (default), json, markdown
  -h, --help                 this help

Exit codes: 0 rendered; 2 a file that is not a saved run (the file and the field are named), or
--html that cannot be written.
`;

/** --html must be writable before minutes are spent measuring (and before anything is rendered). */
export async function checkWritable(flag: string, file: string): Promise<void> {
  try {
    await access(file, constants.W_OK).catch(async (err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') throw err;
      await access(dirname(file), constants.W_OK);
    });
  } catch (err) {
    throw new UsageError(`${flag} ${file}: cannot write there (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
}

/** The page written to `file` (0644: nothing secret in it). */
export async function writePage(file: string, text: string): Promise<void> {
  try {
    await writeFile(file, text, { mode: 0o644 });
  } catch (err) {
    throw new MeasureError(`--html ${file}: cannot write it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
}

/** Before, then after: by start time (ISO strings sort as times), the given order when equal. */
function chronological(runs: PageRun[]): PageRun[] {
  const [a, b] = runs as [PageRun, PageRun];
  return b.measurement.startedAt < a.measurement.startedAt ? [b, a] : [a, b];
}

function render(io: Io, output: 'table' | 'json' | 'markdown', runs: PageRun[]): void {
  const after = (runs.at(-1) as PageRun).measurement;
  const before = runs.length > 1 ? (runs[0] as PageRun) : undefined;
  const comparison = before ? compareMeasurements(before.measurement, after) : undefined;
  if (output === 'json') io.stdout.write(`${terminalJson(comparison ? { ...after, comparison } : after)}\n`);
  else if (output === 'markdown') io.stdout.write(renderMeasurementMarkdown(after) + (comparison && before ? renderComparisonMarkdown(comparison, before.label) : ''));
  else io.stdout.write(renderMeasurementText(after, terminalWidth(io)) + (comparison && before ? renderComparisonText(comparison, before.label, terminalWidth(io)) : ''));
}

export async function measureShowCommand(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parseFlags(args, { compare: { type: 'string' }, html: { type: 'string' }, output: { type: 'string', short: 'o' } }, 'measure show');
  if (values.help) {
    io.stdout.write(MEASURE_SHOW_USAGE);
    return EXIT_OK;
  }
  if (positionals.length !== 1) {
    throw new UsageError(positionals.length === 0 ? 'measure show needs the file a run saved (measure pod-startup --save FILE)' : `one saved file, then --compare for a second (got ${positionals.length} files)`);
  }
  const output = oneOf('--output', values.output, ['table', 'json', 'markdown'] as const, 'table');
  if (values.html !== undefined) await checkWritable('--html', values.html);
  const files = [positionals[0] as string, ...(values.compare !== undefined ? [values.compare] : [])];
  const runs: PageRun[] = [];
  for (const [i, file] of files.entries()) {
    const measurement: Measurement = await readMeasurement(file, i === 0 ? 'measure show' : '--compare');
    runs.push({ label: basename(file), measurement });
  }
  const ordered = runs.length > 1 ? chronological(runs) : runs;
  render(io, output, terminalSafe(ordered));
  if (values.html !== undefined) {
    const after = ordered.at(-1) as PageRun;
    const comparison = ordered.length > 1 ? compareMeasurements((ordered[0] as PageRun).measurement, after.measurement) : undefined;
    await writePage(values.html, renderMeasurementPage(ordered, comparison));
  }
  return EXIT_OK;
}
