// Issue 22 item 5: tenants' pod logs used up the scan's log budget (512 MiB, files in listing order)
// before the control plane's static pod logs were read, and the facts then said those logs did not
// exist; more than 500 tenant pod directories sorting before kube-system left it out entirely. Now
// the control plane's and the kubelet's logs are read first with their own budget and set the
// window; tenants' logs come after, with theirs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { open } from 'node:fs/promises';
import path from 'node:path';
import { runScan } from '../../src/scan.ts';
import { tempHost } from '../helpers/fixtures.ts';

const MiB = 1024 * 1024;
const SCHEDULER_LOG = 'var/log/pods/kube-system_kube-scheduler-cp1_0c6a2e1d9b8f4e7a6d5c4b3a2f1e0d9c/kube-scheduler/0.log';
const SCHEDULER_LINES = [
  '2026-11-30T13:10:00.120000000Z stderr F I1130 13:10:00.120000       1 schedule_one.go:314] "Successfully bound pod to node" pod="batch/job-a-x1" node="w1" evaluatedNodes=4 feasibleNodes=3',
  '2026-11-30T13:20:00.120000000Z stderr F I1130 13:20:00.120000       1 request.go:752] "Waited before sending request" delay="1.193538207s" reason="client-side throttling, not priority and fairness" verb="POST" URL="https://10.0.0.10:6443/api/v1/namespaces/batch/pods/job-a-x2/binding"',
].join('\n') + '\n';
// A tenant's line dated a day later: on a snapshot the window ends at the newest line it is given.
const TENANT_LINE = '2026-12-01T13:30:00.000000000Z stdout F hello\n';

/** A tenant pod's log directory (namespace a-tenant sorts before kube-system; a UUID as the API assigns). */
function tenantLog(n: number): string {
  const uuid = `1b2c3d4e-5f60-4a7b-8c9d-${n.toString(16).padStart(12, '0')}`;
  return `var/log/pods/a-tenant_noisy-${n}_${uuid}/app/0.log`;
}

/** `size` bytes of a log nobody reads by hand: a hole (no disk used), then a real last line. */
async function bigLog(root: string, hostPath: string, size: number): Promise<void> {
  const handle = await open(path.join(root, hostPath), 'r+');
  try {
    await handle.truncate(size - TENANT_LINE.length);
    await handle.write(TENANT_LINE, size - TENANT_LINE.length);
  } finally {
    await handle.close();
  }
}

function schedulerFacts(report: Awaited<ReturnType<typeof runScan>>): unknown {
  return { count: report.facts['throttling.scheduler.count'], maxWaitMs: report.facts['throttling.scheduler.maxWaitMs'] };
}

test('16 tenant pods with 32 MiB logs each: the scheduler\'s static pod log is still read and its wait counted', { timeout: 120_000 }, async (t) => {
  const files: Record<string, string> = { [SCHEDULER_LOG]: SCHEDULER_LINES };
  for (let n = 0; n < 16; n++) files[tenantLog(n)] = '';
  const root = await tempHost(t, files);
  for (let n = 0; n < 16; n++) await bigLog(root, tenantLog(n), 32 * MiB);
  const report = await runScan({ hostRoot: root, nodeName: 'cp1', only: ['client-throttling'] });
  assert.equal(report.facts['throttling.scheduler.count']?.value, 1, JSON.stringify(schedulerFacts(report)));
  assert.equal(report.facts['throttling.scheduler.maxWaitMs']?.value, 1194);
  assert.equal(report.facts['throttling.total.count']?.value, 1);
  const other = report.facts['throttling.otherPods.count'];
  assert.match(String(other?.detail ?? other?.unknown), /budget/, 'the tenants\' logs are cut by their own budget, and the fact says so');
});

test('600 tenant pod directories sorting before kube-system: the scheduler\'s static pod is not left out', { timeout: 120_000 }, async (t) => {
  const files: Record<string, string> = { [SCHEDULER_LOG]: SCHEDULER_LINES };
  for (let n = 0; n < 600; n++) files[tenantLog(n)] = TENANT_LINE;
  const root = await tempHost(t, files);
  const report = await runScan({ hostRoot: root, nodeName: 'cp1', only: ['client-throttling'] });
  assert.equal(report.facts['throttling.scheduler.count']?.value, 1, JSON.stringify(schedulerFacts(report)));
  assert.match(String(report.facts['throttling.windowMinutes']?.detail), /2026-11-30T13:20/, 'the window ends at the control plane\'s newest line, not a tenant\'s');
  assert.match(String(report.facts['throttling.otherPods.count']?.detail), /100 more pod directories not read/);
});
