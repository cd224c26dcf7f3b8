// The running kubelet against its files: /configz (both shapes, test/fixtures/kubelet-configz) decides
// the kubelet facts where the agent read it; drift and a replaced binary are a restart pending,
// decided from what each mode can read (configz; else mtimes and ctimes against the start time from
// /proc/<pid>/stat; else the Node's version against the package), never "no" on missing data.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, utimes } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestContext } from 'node:test';
import kubelet from '../../src/collectors/kubelet/collector.ts';
import { collectFacts } from '../../src/collectors/run.ts';
import { HostRoot } from '../../src/host/host-root.ts';
import { WorkloadState } from '../../src/workload/state.ts';
import { parseConfigz } from '../../src/workload/kubelet-configz.ts';
import type { KubeletConfigView } from '../../src/workload/kubelet-view.ts';
import { runScan } from '../../src/scan.ts';
import { tempHost } from '../helpers/fixtures.ts';

const CONFIGZ = fileURLToPath(new URL('../fixtures/kubelet-configz/', import.meta.url));
const URL_ = 'https://10.0.0.7:10250/configz';
const BOOT = 1_700_000_000; // btime, s since the epoch (2023: files written now are newer than the start)
const START_TICKS = 100 * 3600; // the kubelet started an hour after boot
const STARTED_MS = (BOOT + 3600) * 1000;
const status = `Name:\tkubelet\nUid:\t0\t0\t0\t0\n`;
const stat = `600 (kubelet) S 1 600 600 0 -1 4194560 1 0 0 0 1 1 0 0 20 0 12 0 ${START_TICKS} 1 1 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0`;
const CONFIG = 'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\ncgroupDriver: systemd\nkubeAPIQPS: 50\nkubeAPIBurst: 100\n';

/** A node whose kubelet (PID 600, binary not readable as in the DaemonSet) reads /var/lib/kubelet/config.yaml. */
async function node(t: TestContext, extra: Record<string, string> = {}): Promise<string> {
  return tempHost(t, {
    '/proc/600/cmdline': '/usr/bin/kubelet\0--config=/var/lib/kubelet/config.yaml\0', '/proc/600/comm': 'kubelet\n', '/proc/600/status': status,
    '/proc/600/stat': stat, '/proc/stat': `cpu  1 2 3 4\nbtime ${BOOT}\nprocesses 9\n`, '/usr/bin/kubelet': 'stand-in',
    '/var/lib/kubelet/config.yaml': CONFIG, ...extra,
  });
}

/** Files modified (and changed) `secondsAfterStart` after the kubelet started; negative: before. */
async function age(root: string, file: string, secondsAfterStart: number): Promise<void> {
  const at = (STARTED_MS + secondsAfterStart * 1000) / 1000;
  await utimes(path.join(root, file), at, at);
}

async function configView(name: string): Promise<KubeletConfigView> {
  const parsed = parseConfigz(await readFile(`${CONFIGZ}${name}`, 'utf8'));
  assert.ok(parsed.ok, name);
  return { result: 'ok', source: URL_, config: parsed.config, ...(parsed.apiVersion ? { apiVersion: parsed.apiVersion } : {}) };
}

async function collect(root: string, kubeletConfig?: KubeletConfigView, kubeletVersion?: string) {
  const state = new WorkloadState({ nodeName: 'n1' });
  if (kubeletVersion) state.nodeSeen({ status: { nodeInfo: { kubeletVersion } } });
  const cluster = kubeletConfig || kubeletVersion ? { ...state.snapshot(), ...(kubeletConfig ? { kubeletConfig } : {}) } : undefined;
  const facts = await collectFacts(new HostRoot(root), { collectors: [kubelet], ...(cluster ? { cluster } : {}) });
  return (key: string) => facts.get(key) ?? assert.fail(`${key} not collected`);
}

test('/configz in both shapes: 1.36 names apiVersion and kind, older kubelets neither', async () => {
  const now = await configView('v1.36.2-real-node.json');
  assert.equal(now.apiVersion, 'kubelet.config.k8s.io/v1beta1');
  assert.equal(now.config?.kubeAPIQPS, 5);
  assert.equal(now.config?.failCgroupV1, false);
  const before = await configView('kind-before-1.36.json');
  assert.equal(before.apiVersion, undefined);
  assert.equal(before.config?.kubeAPIBurst, 10);
  assert.deepEqual(parseConfigz('{"componentconfig":{}}'), { ok: false, reason: 'the kubelet\'s /configz answer holds no "kubeletconfig" object (a kubelet before 1.10 names it otherwise)' });
  assert.equal(parseConfigz('not json').ok, false);
});

test('where /configz was read the running values decide; drift names both values, the file:line and the restart', async (t) => {
  const root = await node(t);
  await age(root, '/var/lib/kubelet/config.yaml', 60);
  for (const shape of ['v1.36.2-real-node.json', 'kind-before-1.36.json']) {
    const fact = await collect(root, await configView(shape));
    assert.equal(fact('kubelet.kubeAPIQPS').value, 5, shape);
    assert.equal(fact('kubelet.kubeAPIQPS').source, 'running kubelet /configz');
    assert.match(fact('kubelet.kubeAPIQPS').detail ?? '', /the running kubelet's value \(https:\/\/10\.0\.0\.7:10250\/configz\); its files say 50 \(\/var\/lib\/kubelet\/config\.yaml\)/);
    assert.deepEqual(fact('kubelet.configDrift').value, [
      'kubeAPIQPS: running 5, /var/lib/kubelet/config.yaml line 4 says 50',
      'kubeAPIBurst: running 10, /var/lib/kubelet/config.yaml line 5 says 100',
      'cgroupDriver: running cgroupfs, /var/lib/kubelet/config.yaml line 3 says systemd',
    ]);
    assert.equal(fact('kubelet.restartPending').value, true);
    assert.equal(fact('kubelet.restartCommand').value, 'systemctl restart kubelet');
  }
});

test('without /configz the files decide and say why the running value is unknown; restart pending from the file\'s mtime', async (t) => {
  // /proc/600/exe readable (root with ptrace, as `scan` runs): the binary is what is on disk.
  const root = await node(t, { '/proc/600/exe': '->/usr/bin/kubelet' });
  const forbidden: KubeletConfigView = { result: 'forbidden', source: URL_, reason: 'HTTP 403: the agent\'s ClusterRole lacks get nodes/configz (…)' };
  await age(root, '/var/lib/kubelet/config.yaml', -600);
  let fact = await collect(root, forbidden);
  assert.equal(fact('kubelet.kubeAPIQPS').value, 50);
  assert.equal(fact('kubelet.kubeAPIQPS').source, '/var/lib/kubelet/config.yaml');
  assert.match(fact('kubelet.kubeAPIQPS').detail ?? '', /the running kubelet's value is unknown: HTTP 403: the agent's ClusterRole lacks get nodes\/configz/);
  assert.equal(fact('kubelet.configz.read').value, 'forbidden');
  assert.equal(fact('kubelet.restartPending').value, false, 'the file and binary are older than the kubelet: it runs them');
  await age(root, '/var/lib/kubelet/config.yaml', 120);
  fact = await collect(root, forbidden);
  assert.equal(fact('kubelet.restartPending').value, true);
  assert.equal(fact('kubelet.restartPending').source, 'inferred');
  assert.match(String(fact('kubelet.restartPendingWhy').value), /\/var\/lib\/kubelet\/config\.yaml \(modified .*\) after the kubelet started .*: its running values may differ \(not read: HTTP 403: .*nodes\/configz/);
  const scan = await collect(root);
  assert.equal(scan('kubelet.configz.read').value, null);
  assert.match(scan('kubelet.configz.read').detail ?? '', /`scan` reads only the host/);
  assert.equal(scan('kubelet.restartPending').value, true, '`scan` decides it from the mtime too');
  assert.match(String(scan('kubelet.restartPendingWhy').value), /may differ \(not read: `scan` reads only the host/, 'said once, not "not read: not read:"');
});

test('a binary replaced after the start, without ptrace: its ctime; else the Node\'s version against the package', async (t) => {
  const root = await node(t);
  await age(root, '/var/lib/kubelet/config.yaml', -600);
  // The stand-in binary was just written: its ctime (now) is after the start an hour after BOOT.
  let fact = await collect(root);
  assert.equal(fact('kubelet.binaryReplaced').value, true);
  assert.match(fact('kubelet.binaryReplaced').detail ?? '', /\/usr\/bin\/kubelet changed \(ctime .*\) after the kubelet started/);
  assert.match(String(fact('kubelet.restartPendingWhy').value), /binary \/usr\/bin\/kubelet replaced after the kubelet started/);
  const dpkg = 'Package: kubelet\nStatus: install ok installed\nPriority: optional\nSection: misc\nArchitecture: amd64\nVersion: 1.31.4-1.1\n\n';
  const packaged = await node(t, { '/var/lib/dpkg/status': dpkg });
  fact = await collect(packaged, undefined, 'v1.31.2');
  assert.equal(fact('kubelet.binaryReplaced').value, true);
  assert.match(fact('kubelet.binaryReplaced').detail ?? '', /the kubelet reports v1\.31\.2 on its Node; package kubelet 1\.31\.4-1\.1 is installed/);
});

test('no start time and no /configz: unknown, never "no restart pending"', async (t) => {
  const root = await tempHost(t, {
    '/proc/600/cmdline': '/usr/bin/kubelet\0--config=/var/lib/kubelet/config.yaml\0', '/proc/600/comm': 'kubelet\n', '/proc/600/status': status,
    '/var/lib/kubelet/config.yaml': CONFIG,
  });
  const fact = await collect(root);
  assert.equal(fact('kubelet.restartPending').value, null);
  assert.match(fact("kubelet.restartPending").unknown ?? "", /^the kubelet.s start time cannot be read \(\/proc\/600\/stat\); \/proc\/600\/exe does not exist/);
});

test('the rule: one finding with both values and the restart command', async (t) => {
  const root = await node(t, { '/proc/600/exe': '->/usr/bin/kubelet' });
  const state = new WorkloadState({ nodeName: 'n1' });
  const report = await runScan({ hostRoot: root, cluster: { ...state.snapshot(), kubeletConfig: await configView('kind-before-1.36.json') }, collectors: [kubelet], only: ['kubelet-restart-pending'] });
  const finding = report.findings[0];
  assert.equal(finding?.status, 'fail');
  assert.match(finding?.message ?? '', /kubeAPIQPS: running 5, \/var\/lib\/kubelet\/config\.yaml line 4 says 50/);
  assert.match(finding?.remediation.summary ?? '', /restart the kubelet: systemctl restart kubelet/);
});
