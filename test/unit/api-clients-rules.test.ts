// The api-client rules (rules/api-clients.yaml) on the fixture hosts: the acceptance cases.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { runScan } from '../../src/scan.ts';
import type { Finding, FindingStatus } from '../../src/report/types.ts';
import { fixtureHost } from '../helpers/fixtures.ts';

const API_CLIENT_RULES = fileURLToPath(new URL('../../rules/api-clients.yaml', import.meta.url));

async function scan(host: string): Promise<{ byRule: Record<string, FindingStatus>; finding: (id: string) => Finding }> {
  const report = await runScan({ hostRoot: fixtureHost(host), sleep: async () => {}, bundledRules: false, ruleLocations: [API_CLIENT_RULES] });
  const byRule = Object.fromEntries(report.findings.map((f) => [f.ruleId, f.status])) as Record<string, FindingStatus>;
  const finding = (id: string) => {
    const found = report.findings.find((f) => f.ruleId === id);
    assert.ok(found, `no finding for ${id}`);
    return found;
  };
  return { byRule, finding };
}

test('seed 000 before (1.20, defaults, scheduler throttled): kubelet-api-qps, scheduler-api-qps and client-throttling fail', async () => {
  const { byRule, finding } = await scan('seed-000-before');
  assert.deepEqual(byRule, {
    'kubelet-api-qps': 'fail',
    'scheduler-api-qps': 'fail',
    'client-throttling': 'fail',
    'image-pull-serialized': 'fail',
    'controller-manager-api-qps': 'pass',
    'client-throttling-long-waits': 'pass',
  });
  const kubelet = finding('kubelet-api-qps');
  assert.equal(kubelet.observed, 'kubeAPIQPS 5, kubeAPIBurst 10 (kubelet 1.20.2)');
  assert.equal(kubelet.remediation.summary, 'raise kubeAPIQPS/kubeAPIBurst to 170/220');
  assert.ok(kubelet.evidence.some((e) => e.fact === 'kubelet.qpsSetIn' && e.value === 'kubeAPIQPS in /var/lib/kubelet/config.yaml (not set yet)'));
  assert.match(kubelet.remediation.text, /^In \/var\/lib\/kubelet\/config\.yaml add kubeAPIQPS: 170 and kubeAPIBurst: 220/);
  assert.match(kubelet.remediation.text, /API Priority and Fairness/);
  const throttling = finding('client-throttling');
  assert.equal(throttling.observed, '9 throttled in 60 min, longest 347 ms');
  assert.ok(throttling.evidence.some((e) => e.fact === 'throttling.scheduler.count' && /longest: 2021-01-20T10:15:06\.830Z waited 347 ms before POST \/api\/v1\/namespaces\/default\/pods\/app-63\/binding$/.test(e.detail ?? '')));
  assert.match(finding('scheduler-api-qps').remediation.text, /In \/etc\/kubernetes\/manifests\/kube-scheduler\.yaml after line 13 set --kube-api-qps=150 and --kube-api-burst=200/);
});

test('seed 000 after (150/200 everywhere, no throttling): no api-client rule fails but image pulls', async () => {
  const { byRule } = await scan('seed-000-after');
  assert.deepEqual(byRule, {
    'kubelet-api-qps': 'pass',
    'scheduler-api-qps': 'pass',
    'controller-manager-api-qps': 'pass',
    'client-throttling': 'pass',
    'client-throttling-long-waits': 'pass',
    'image-pull-serialized': 'fail',
  });
});

test('kubeadm 1.26 fails kubelet-api-qps on the 5/10 default; kubeadm 1.30 passes on 50/100', async () => {
  assert.equal((await scan('kubeadm-1.26')).byRule['kubelet-api-qps'], 'fail');
  assert.equal((await scan('kubeadm-1.30')).byRule['kubelet-api-qps'], 'pass');
});

test('--kube-api-qps=0 fails: it is client-go 5/10, and the fix names /etc/default/kubelet', async () => {
  const { byRule, finding } = await scan('kubelet-qps-zero');
  assert.equal(byRule['kubelet-api-qps'], 'fail');
  assert.match(finding('kubelet-api-qps').remediation.text, /^In \/etc\/default\/kubelet line 1, variable KUBELET_EXTRA_ARGS change the flags to --kube-api-qps=170/);
});

test('k3s: the fix is a kubelet.conf.d drop-in and the restart is k3s', async () => {
  const { byRule, finding } = await scan('k3s-config-dir');
  assert.equal(byRule['kubelet-api-qps'], 'pass');
  assert.equal(byRule['image-pull-serialized'], 'pass');
  assert.match(finding('kubelet-api-qps').remediation.text, /50-kube-api-qps\.conf.*systemctl restart k3s/);
});

test('unknown, never a pass: no version and no QPS key, or a control plane without logs', async () => {
  const { byRule, finding } = await scan('kubelet-config-space');
  assert.equal(byRule['kubelet-api-qps'], 'pass', 'explicit 100/200 needs no version');
  assert.equal(byRule['client-throttling'], 'unknown');
  assert.match(finding('client-throttling').message, /no logs to read/);
  assert.equal((await scan('kubeadm-1.30')).byRule['scheduler-api-qps'], 'unknown', 'default QPS and no scheduler log to judge it by');
});
