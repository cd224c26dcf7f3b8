import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { runScan } from '../../src/scan.ts';
import { loadRuleSet } from '../../src/rules/rule-set.ts';
import { evaluateRules } from '../../src/rules/engine.ts';
import { FactSet } from '../../src/facts/fact-set.ts';
import { etcdLatencyFromMetrics } from '../../src/collectors/etcd/metrics.ts';
import type { FindingStatus } from '../../src/report/types.ts';
import { fixtureHost } from '../helpers/fixtures.ts';

const ETCD_RULES = ['etcd-disk-rotational', 'etcd-fsync-latency', 'etcd-wal-fsync', 'etcd-backend-commit', 'etcd-io-priority', 'etcd-events-split'];

async function statuses(host: string): Promise<Record<string, FindingStatus>> {
  const report = await runScan({ hostRoot: fixtureHost(host), sleep: async () => {}, only: ETCD_RULES });
  return Object.fromEntries(report.findings.map((finding) => [finding.ruleId, finding.status]));
}

test('seed 001 "before" (kubespray, HDD): the disk rule fails; nothing measured is called a pass', async () => {
  assert.deepEqual(await statuses('etcd-kubespray-hdd'), {
    'etcd-disk-rotational': 'fail',
    'etcd-fsync-latency': 'not-applicable', // no --probe
    'etcd-wal-fsync': 'unknown', // metrics only on the TLS client port
    'etcd-backend-commit': 'unknown',
    'etcd-io-priority': 'unknown', // no running process in a fixture
    'etcd-events-split': 'unknown', // no kube-apiserver on this node
  });
});

test('seed 001 "after" (SSD on /data) passes the disk rule; virtio is unknown until measured', async () => {
  assert.equal((await statuses('etcd-kubespray-ssd'))['etcd-disk-rotational'], 'pass');
  assert.equal((await statuses('etcd-kubeadm-nvme'))['etcd-disk-rotational'], 'pass');
  assert.equal((await statuses('etcd-k3s-embedded'))['etcd-disk-rotational'], 'unknown');
  assert.equal((await statuses('etcd-lvm-chain'))['etcd-disk-rotational'], 'fail');
});

test('nodes without etcd: every etcd rule not applicable', async () => {
  const all = await statuses('vm-no-cpufreq');
  assert.deepEqual(new Set(Object.values(all)), new Set(['not-applicable']));
  assert.equal(Object.keys(all).length, ETCD_RULES.length);
});

test('thresholds: slow histograms, a slow probe on virtio, ionice levels, events split', async () => {
  const rules = await loadRuleSet({ only: ETCD_RULES });
  const latency = etcdLatencyFromMetrics(await readFile(new URL('../fixtures/etcd-metrics/etcd-3.4-slow-hdd.txt', import.meta.url), 'utf8'));
  const facts = new FactSet();
  const set = (key: string, value: string | number | boolean | string[]): void => facts.set(key, value, 'test');
  set('etcd.present', true);
  set('etcd.walFsync.p99Ms', (latency.walFsyncP99?.value ?? 0) * 1000);
  set('etcd.backendCommit.p99Ms', (latency.backendCommitP99?.value ?? 0) * 1000);
  set('etcd.device.rotational', true);
  set('etcd.device.transport', 'virtio');
  set('etcd.device.rotationalIsMedium', false);
  set('etcd.fsync.probed', true);
  set('etcd.fsync.p99Ms', 12.5);
  set('etcd.ioPriority.class', 'best-effort');
  set('etcd.ioPriority.level', 4);
  set('etcd.eventsSplit', true);
  const byRule = Object.fromEntries(evaluateRules(rules, facts).map((finding) => [finding.ruleId, finding.status]));
  assert.deepEqual(byRule, {
    'etcd-disk-rotational': 'fail',
    'etcd-fsync-latency': 'fail',
    'etcd-wal-fsync': 'fail',
    'etcd-backend-commit': 'fail',
    'etcd-io-priority': 'fail',
    'etcd-events-split': 'pass',
  });
  set('etcd.fsync.p99Ms', 2.1);
  set('etcd.walFsync.p99Ms', 3);
  set('etcd.backendCommit.p99Ms', 24.9);
  set('etcd.ioPriority.level', 0);
  const fast = Object.fromEntries(evaluateRules(rules, facts).map((finding) => [finding.ruleId, finding.status]));
  assert.deepEqual([fast['etcd-disk-rotational'], fast['etcd-fsync-latency'], fast['etcd-wal-fsync'], fast['etcd-backend-commit'], fast['etcd-io-priority']], ['pass', 'pass', 'pass', 'pass', 'pass']);
});
