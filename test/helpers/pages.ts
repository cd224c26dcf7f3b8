// For the page tests: a name as hostile as the API server may send (markup, quotes, a bidi override),
// and the saved runs of real hollow-kubelet runs (test/fixtures/measurements), checked as `measure show` reads them.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Measurement } from '../../src/measure/result.ts';
import { checkMeasurement } from '../../src/measure/saved-check.ts';
import { REPO } from './manifests.ts';

export const HOSTILE = '<img src=x onerror="console.error(\'ran\')">\u202e"\'&';
export const MEASUREMENTS = path.join(REPO, 'test/fixtures/measurements');

export async function saved(name: string): Promise<Measurement> {
  return checkMeasurement(JSON.parse(await readFile(path.join(MEASUREMENTS, name), 'utf8')));
}
