// Issue 12 item 6 / issue 17 item 1: in the DaemonSet the kubelet's version comes from its Node
// (status.nodeInfo.kubeletVersion), not from executing a binary and not only from dpkg, which the
// DaemonSet does not mount. A kubeadm 1.26 worker without a package database: the 1.26 defaults (5/10)
// are judged, through the real agent wiring against the API stand-in.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { FakeApiServer } from '../helpers/fake-apiserver.ts';
import { runAgent } from '../helpers/agent-harness.ts';
import { fixtureHost } from '../helpers/fixtures.ts';
import { runScan } from '../../src/scan.ts';
import kubelet from '../../src/collectors/kubelet/collector.ts';
import type { Report } from '../../src/report/types.ts';
import { WorkloadState } from '../../src/workload/state.ts';

async function workerWithoutDpkg(t: { after(fn: () => Promise<void>): void }): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'nta-nodpkg-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  await cp(fixtureHost('kubeadm-1.26'), dir, { recursive: true });
  await rm(path.join(dir, 'var', 'lib', 'dpkg'), { recursive: true, force: true });
  return dir;
}

test('agent: the kubelet version is the one its Node reports, so kubelet-api-qps is decided without dpkg', async (t) => {
  const root = await workerWithoutDpkg(t);
  const server = new FakeApiServer();
  await server.start();
  t.after(() => server.stop());
  server.addNode('worker-1');
  server.editNode('worker-1', (n) => { n.status.nodeInfo.kubeletVersion = 'v1.26.15'; });
  const reports: Report[] = [];
  const running = runAgent(server.writeKubeconfig(), async (_, cluster) => {
    const report = await runScan({ hostRoot: root, nodeName: 'worker-1', cluster, collectors: [kubelet], only: ['kubelet-api-qps'] });
    reports.push(report);
    return report;
  }, { stopAfterScans: 1 });
  assert.equal(await running.result, 0, running.logs.join('\n'));
  const report = reports[0] as Report;
  assert.deepEqual(report.facts['kubelet.version'], {
    value: '1.26.15', source: 'api:Node.status.nodeInfo.kubeletVersion', detail: 'the kubelet reports v1.26.15 on its Node',
  });
  assert.equal(report.facts['kubelet.kubeAPIQPS']?.value, 5);
  assert.equal(report.findings.find((f) => f.ruleId === 'kubelet-api-qps')?.status, 'fail');
});

test('scan (no Node) on the same worker: the version is unknown with the reason, never a guess and never a run binary', async (t) => {
  const root = await workerWithoutDpkg(t);
  const report = await runScan({ hostRoot: root, nodeName: 'worker-1', collectors: [kubelet], only: ['kubelet-api-qps'] });
  const version = report.facts['kubelet.version'];
  assert.equal(version?.value, null);
  assert.match(version?.unknown ?? '', /no Node to read .*no kubelet package in \/var\/lib\/dpkg\/status.*never run/);
  assert.equal(report.findings[0]?.status, 'unknown');
});

test('a malformed kubeletVersion on the Node is dropped, not used', () => {
  const state = new WorkloadState({ nodeName: 'n' });
  for (const bad of ['1.30', 'v1.30.2\u001b[31m', 'x'.repeat(200), 42, null]) {
    state.nodeSeen({ status: { nodeInfo: { kubeletVersion: bad } } });
    assert.equal(state.snapshot().kubeletVersion, null, String(bad));
  }
  state.nodeSeen({ status: { nodeInfo: { kubeletVersion: 'v1.30.2+k3s1' } } });
  assert.equal(state.snapshot().kubeletVersion, 'v1.30.2+k3s1');
});
