// cgroup v1 and the kubelet from 1.35 (KEP-5573): the host's cgroup version as the kubelet decides it
// (the filesystem at /sys/fs/cgroup, test/fixtures/mountinfo), failCgroupV1 as the kubelet's files
// leave it for a 1.35+ kubelet, and the kubelet-cgroup-v1 warning on kubeadm's node.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cp, readFile, statfs, writeFile, appendFile, mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestContext } from 'node:test';
import cgroup, { cgroupLayout } from '../../src/collectors/cgroup.ts';
import { parseMountinfo } from '../../src/host/mountinfo.ts';
import kubelet from '../../src/collectors/kubelet/collector.ts';
import { collectFacts } from '../../src/collectors/run.ts';
import { HostRoot } from '../../src/host/host-root.ts';
import { parseConfigz } from '../../src/workload/kubelet-configz.ts';
import { WorkloadState } from '../../src/workload/state.ts';
import { runScan } from '../../src/scan.ts';
import { fixtureHost, tempHost } from '../helpers/fixtures.ts';
import { fact, factsAt } from '../helpers/host-trees.ts';

const MOUNTINFO = fileURLToPath(new URL('../fixtures/mountinfo/', import.meta.url));
const CONFIGZ = fileURLToPath(new URL('../fixtures/kubelet-configz/', import.meta.url));

async function hostWith(t: TestContext, table: string) {
  return tempHost(t, { '/proc/1/mountinfo': await readFile(`${MOUNTINFO}${table}`) });
}

test('the cgroup version is what is mounted at /sys/fs/cgroup: cgroup2 is v2, tmpfs is v1 with or without a cgroup2 below it', async (t) => {
  const cases: [string, number, string][] = [
    ['truenas-scale-unified', 2, 'unified'],
    ['unified-with-v1-freezer', 2, 'unified'],
    ['fedora-legacy-v1', 1, 'legacy'],
    ['fedora-hybrid-unified', 1, 'hybrid'],
    ['fedora-hybrid-systemd-cgroup2', 1, 'hybrid'],
  ];
  for (const [table, version, mode] of cases) {
    const facts = await factsAt(await hostWith(t, table), cgroup);
    assert.deepEqual([fact(facts, 'cgroup.version').value, fact(facts, 'cgroup.mode').value], [version, mode], table);
    assert.equal(fact(facts, 'cgroup.version').source, '/proc/1/mountinfo');
  }
  const hybrid = await factsAt(await hostWith(t, 'fedora-hybrid-unified'), cgroup);
  assert.match(fact(hybrid, 'cgroup.version').detail ?? '', /cgroup2 at \/sys\/fs\/cgroup\/unified \(hybrid\): the kubelet checks \/sys\/fs\/cgroup itself/);
  assert.match(fact(hybrid, 'cgroup.version').detail ?? '', /11 cgroup v1 hierarchies \(name=systemd; memory; pids; /);
});

test('no mount table, or nothing at /sys/fs/cgroup: unknown with the reason, never a version', async (t) => {
  const none = await factsAt(await tempHost(t, {}), cgroup);
  assert.match(fact(none, 'cgroup.version').unknown ?? '', /\/proc\/1\/mountinfo does not exist/);
  const bare = await factsAt(await tempHost(t, { '/proc/1/mountinfo': '21 26 0:19 / /sys rw,nosuid - sysfs sysfs rw\n' }), cgroup);
  assert.match(fact(bare, 'cgroup.version').unknown ?? '', /nothing is mounted at \/sys\/fs\/cgroup/);
});

test('this machine: the version read from its mount table is the one statfs gives, as the kubelet asks it', async () => {
  // opencontainers/cgroups IsCgroup2UnifiedMode: statfs("/sys/fs/cgroup").Type == CGROUP2_SUPER_MAGIC.
  const CGROUP2_SUPER_MAGIC = 0x63677270;
  const { type } = await statfs('/sys/fs/cgroup');
  const layout = cgroupLayout(parseMountinfo(await readFile('/proc/self/mountinfo', 'utf8')));
  assert.ok(typeof layout !== 'string', String(layout));
  assert.equal(layout.version, type === CGROUP2_SUPER_MAGIC ? 2 : 1, `statfs type 0x${type.toString(16)}`);
});

/** kubeadm's 1.30 node (test/fixtures/hosts/kubeadm-1.30) with a mount table and changes to its files. */
async function kubeadmNode(t: TestContext, table: string, edit?: (root: string) => Promise<void>): Promise<string> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'nta-cgroup-'));
  t.after(() => rm(root, { recursive: true, force: true }));
  await cp(fixtureHost('kubeadm-1.30'), root, { recursive: true });
  await mkdir(path.join(root, 'proc/1'), { recursive: true });
  await writeFile(path.join(root, 'proc/1/mountinfo'), await readFile(`${MOUNTINFO}${table}`));
  await edit?.(root);
  return root;
}

async function finding(root: string) {
  const report = await runScan({ hostRoot: root, only: ['kubelet-cgroup-v1'] });
  return report.findings[0] ?? assert.fail('no finding');
}

test('a cgroup v1 node whose 1.30 kubelet sets no failCgroupV1: the warning, with the version defaults named', async (t) => {
  const root = await kubeadmNode(t, 'fedora-legacy-v1');
  const f = await finding(root);
  assert.equal(f.status, 'fail');
  assert.equal(f.observed, 'cgroup v1 (legacy), failCgroupV1 unset or true');
  const facts = await factsAt(root, kubelet);
  assert.equal(fact(facts, 'kubelet.failCgroupV1').value, false, 'a 1.30 kubelet runs on v1');
  assert.match(fact(facts, 'kubelet.failCgroupV1').detail ?? '', /before 1\.31 \(no such check\)/);
  assert.equal(fact(facts, 'kubelet.failCgroupV1From135').value, true);
  assert.match(fact(facts, 'kubelet.failCgroupV1From135').detail ?? '', /from 1\.35 the kubelet defaults to true \(KEP-5573\)/);
});

test('failCgroupV1: false in the config file or as a flag keeps a hybrid node passing; cgroup v2 passes whatever it says', async (t) => {
  const inFile = await kubeadmNode(t, 'fedora-hybrid-unified', (root) => appendFile(path.join(root, 'var/lib/kubelet/config.yaml'), 'failCgroupV1: false\n'));
  assert.equal((await finding(inFile)).status, 'pass');
  const asFlag = await kubeadmNode(t, 'fedora-hybrid-unified', (root) => writeFile(path.join(root, 'var/lib/kubelet/kubeadm-flags.env'),
    'KUBELET_KUBEADM_ARGS="--container-runtime-endpoint=unix:///var/run/containerd/containerd.sock --fail-cgroupv1=false"\n'));
  assert.equal((await finding(asFlag)).status, 'pass');
  assert.match(fact(await factsAt(asFlag, kubelet), 'kubelet.failCgroupV1From135').source, /^flag:--fail-cgroupv1/);
  const explicitTrue = await kubeadmNode(t, 'fedora-hybrid-unified', (root) => appendFile(path.join(root, 'var/lib/kubelet/config.yaml'), 'failCgroupV1: true\n'));
  assert.equal((await finding(explicitTrue)).status, 'fail');
  assert.equal((await finding(await kubeadmNode(t, 'truenas-scale-unified'))).status, 'pass');
  assert.equal((await finding(await kubeadmNode(t, 'unified-with-v1-freezer'))).status, 'pass');
});

test('a running 1.36 kubelet with failCgroupV1 false whose files no longer say so: it will not start again', async (t) => {
  const root = await kubeadmNode(t, 'fedora-hybrid-unified');
  const parsed = parseConfigz(await readFile(`${CONFIGZ}v1.36.2-real-node.json`, 'utf8'));
  assert.ok(parsed.ok);
  const state = new WorkloadState({ nodeName: 'n1' });
  state.nodeSeen({ status: { nodeInfo: { kubeletVersion: 'v1.36.2' } } });
  const cluster = { ...state.snapshot(), kubeletConfig: { result: 'ok' as const, source: 'https://10.0.0.7:10250/configz', config: parsed.config } };
  const facts = await collectFacts(new HostRoot(root), { collectors: [kubelet], cluster });
  assert.equal(fact(facts, 'kubelet.failCgroupV1').value, false, 'the running kubelet runs with false');
  assert.equal(fact(facts, 'kubelet.failCgroupV1').source, 'running kubelet /configz');
  assert.equal(fact(facts, 'kubelet.failCgroupV1From135').value, true, 'its files leave the 1.35 default');
});
