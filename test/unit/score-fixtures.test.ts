// The score says what fails, over every fixture host with the bundled rules: nothing failing grades A
// (however much could not be read), and no host with a failing warning or critical outranks one where
// nothing fails. The seeds' fixed hosts grade A or B.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import { runScan } from '../../src/scan.ts';
import type { Report } from '../../src/report/types.ts';
import { FIXTURE_HOSTS, fixtureHost } from '../helpers/fixtures.ts';

async function scanAll(): Promise<Map<string, Report>> {
  const names = (await readdir(FIXTURE_HOSTS, { withFileTypes: true })).filter((e) => e.isDirectory()).map((e) => e.name).sort();
  const reports = new Map<string, Report>();
  for (const name of names) reports.set(name, await runScan({ hostRoot: fixtureHost(name), sleep: async () => {} }));
  return reports;
}

const failingAbove = (report: Report, severities: string[]) =>
  report.findings.some((f) => f.status === 'fail' && severities.includes(f.severity));

test('over every fixture host: nothing failing grades A; a failing warning or critical never scores above a host where nothing fails', async () => {
  const reports = await scanAll();
  assert.ok(reports.size >= 40, `fixture hosts scanned: ${reports.size}`);
  const clean = [...reports].filter(([, r]) => r.counts.fail === 0);
  const broken = [...reports].filter(([, r]) => failingAbove(r, ['warning', 'critical']));
  assert.ok(clean.length > 0 && broken.length > 0, 'the fixtures hold both kinds');
  for (const [name, r] of clean) assert.deepEqual([name, r.score, r.grade], [name, 100, 'A'], `${name}: ${r.counts.unknown} unknown must not lower it`);
  const lowestClean = Math.min(...clean.map(([, r]) => r.score));
  for (const [name, r] of broken) {
    assert.ok(r.score < lowestClean, `${name} (${r.score}) must score below every host where nothing fails (${lowestClean})`);
    assert.notEqual(r.grade, 'A', `${name}: a failing warning or critical is never an A`);
  }
  for (const [name, r] of reports) {
    assert.equal(r.coverage.decided + r.coverage.unknown, r.coverage.applicable, name);
    assert.equal(r.coverage.unknown, r.counts.unknown, name);
  }
});

test("the seeds' fixed hosts grade A or B; their broken hosts do not", async () => {
  const grade = async (name: string) => (await runScan({ hostRoot: fixtureHost(name), sleep: async () => {} })).grade;
  // Seed 000: kubelet 5/10 and scheduler 50/100 with throttling → 150/200 on all three components.
  assert.ok(['A', 'B'].includes(await grade('seed-000-after')));
  assert.ok(!['A', 'B'].includes(await grade('seed-000-before')));
  // Seed 001: etcd's data dir moved by ETCD_DATA_DIR in /etc/etcd.env from the HDD under /var/lib to an SSD at /data.
  assert.ok(['A', 'B'].includes(await grade('etcd-kubespray-ssd')));
  // …and a build host on powersave / on tuned's throughput-performance profile.
  assert.ok(!['A'].includes(await grade('intel-pstate-epp-power')));
  assert.ok(['A', 'B'].includes(await grade('rhel-hz1000-tuned-merged')));
});
