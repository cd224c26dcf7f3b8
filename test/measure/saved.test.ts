// --save writes what --compare reads back; a file that is not one (hand-edited, another tool's,
// huge, hostile) is refused with the file and the field named, never a stack trace.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { readMeasurement, saveMeasurement } from '../../src/measure/saved.ts';
import { measurement, samples } from '../helpers/measurements.ts';

test('a saved measurement reads back as written', async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'nta-saved-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const m = measurement(samples([[100, 10, 900, 50], [120, 10, 1900, 50]]), { facts: { 'kernel.hz': { value: 250, from: 'worker-1' } } });
  await saveMeasurement(path.join(dir, 'before.json'), m);
  assert.deepEqual(await readMeasurement(path.join(dir, 'before.json')), JSON.parse(JSON.stringify(m)));
});

test('anything else is refused, naming the file and what is wrong', async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'nta-saved-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const good = measurement(samples([[100, 10, 900, 50]]));
  const cases: [string, string | object, RegExp][] = [
    ['text', 'hello', /--compare .*text: not JSON; give a file written by measure pod-startup --save/],
    ['report', { schemaVersion: 1, kind: 'ClusterReport' }, /kind is not PodStartupMeasurement/],
    ['future', { ...good, schemaVersion: 2 }, /schemaVersion 2: this version reads 1/],
    ['phase', { ...good, phases: { ...good.phases, creation: { ...good.phases.creation, p99Ms: -5 } } }, /phases.creation.p99Ms is not a number of milliseconds or null/],
    ['nophase', { ...good, phases: { scheduling: good.phases.scheduling } }, /phases.initialization is not an object/],
    ['fact', { ...good, advisor: { ...good.advisor, facts: { 'kernel.hz': { value: { nested: 1 }, from: 'x' } } } }, /advisor.facts.kernel.hz is neither/],
    ['placement', { ...good, settings: { ...good.settings, placement: 'anywhere' } }, /settings.placement is not scheduler or node-name/],
  ];
  for (const [name, content, message] of cases) {
    const file = path.join(dir, name);
    await writeFile(file, typeof content === 'string' ? content : JSON.stringify(content));
    await assert.rejects(readMeasurement(file), message, name);
  }
  await assert.rejects(readMeasurement(path.join(dir, 'missing.json')), /--compare .*missing.json: cannot read it \(ENOENT\)/);
  await assert.rejects(readMeasurement(dir), /not a regular file/);
  execFileSync('mkfifo', [path.join(dir, 'fifo')]);
  await assert.rejects(readMeasurement(path.join(dir, 'fifo')), /fifo: not a regular file/, 'refused before it is opened (an open would block)');
  await writeFile(path.join(dir, 'huge'), Buffer.alloc(9 * 1024 * 1024, 32));
  await assert.rejects(readMeasurement(path.join(dir, 'huge')), /more than a measurement is/);
  // Facts the file does not have are unknown, not an error (an older file).
  const file = path.join(dir, 'old');
  await writeFile(file, JSON.stringify({ ...good, advisor: { ...good.advisor, facts: {} } }));
  assert.deepEqual((await readMeasurement(file)).advisor.facts['kernel.hz'], { unknown: 'not recorded in this file' });
});
