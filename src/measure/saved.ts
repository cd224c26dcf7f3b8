// `--save` writes a Measurement as JSON; `--compare` and `measure show` read one back. The file may
// be anything (an old run, a hand edit, another tool's output): it is size-capped, every field a
// view or the comparison uses is checked (saved-check.ts), and a problem names the file and the field.
import { writeFile } from 'node:fs/promises';
import { MeasureError } from './preflight.ts';
import { openRegularFile } from '../host/open-checked.ts';
import type { Measurement } from './result.ts';
import { checkMeasurement, Invalid } from './saved-check.ts';

const MAX_FILE_BYTES = 8 * 1024 * 1024;

export async function readMeasurement(file: string, flag = '--compare'): Promise<Measurement> {
  let text: string;
  try {
    const checked = await openRegularFile(file);
    if (!checked.ok) throw new MeasureError(`${flag} ${file}: not a regular file`);
    try {
      if (checked.info.size > MAX_FILE_BYTES) throw new MeasureError(`${flag} ${file}: ${checked.info.size} bytes, more than a measurement is (${MAX_FILE_BYTES} at most)`);
      text = await checked.handle.readFile('utf8');
    } finally {
      await checked.handle.close();
    }
  } catch (err) {
    if (err instanceof MeasureError) throw err;
    throw new MeasureError(`${flag} ${file}: cannot read it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new MeasureError(`${flag} ${file}: not JSON; give a file written by measure pod-startup --save`);
  }
  try {
    return checkMeasurement(parsed);
  } catch (err) {
    if (err instanceof Invalid) throw new MeasureError(`${flag} ${file}: ${err.message}`);
    throw err;
  }
}

/** Writes the measurement (0644: nothing secret in it). */
export async function saveMeasurement(file: string, measurement: Measurement): Promise<void> {
  try {
    await writeFile(file, `${JSON.stringify(measurement, null, 2)}\n`, { mode: 0o644 });
  } catch (err) {
    throw new MeasureError(`--save ${file}: cannot write it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
}
