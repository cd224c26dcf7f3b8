// containerd's config.toml through a TOML 1.0 parser, one upstream-built file per form
// (test/fixtures/containerd/README.md), and the download limit from where this containerd reads it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { TestContext } from 'node:test';
import containerd from '../../src/collectors/containerd/collector.ts';
import { collectFacts } from '../../src/collectors/run.ts';
import { HostRoot } from '../../src/host/host-root.ts';
import { WorkloadState } from '../../src/workload/state.ts';
import { tempHost } from '../helpers/fixtures.ts';
import { fact } from '../helpers/host-trees.ts';

const FIXTURES = fileURLToPath(new URL('../fixtures/containerd/', import.meta.url));
const CONFIG = '/etc/containerd/config.toml';
const fixture = (name: string) => readFile(`${FIXTURES}${name}`, 'utf8');
/** A dpkg status stanza as dpkg writes it for Debian's containerd package. */
const dpkg = (version: string) => `Package: containerd\nStatus: install ok installed\nPriority: optional\nSection: admin\nArchitecture: amd64\nVersion: ${version}\n\n`;

async function factsFor(t: TestContext, files: Record<string, string>, runtimeVersion?: string) {
  const root = await tempHost(t, files);
  const state = new WorkloadState({ nodeName: 'n1' });
  if (runtimeVersion) state.nodeSeen({ status: { nodeInfo: { containerRuntimeVersion: runtimeVersion } } });
  const facts = await collectFacts(new HostRoot(root), { collectors: [containerd], ...(runtimeVersion ? { cluster: state.snapshot() } : {}) });
  const value = (key: string) => fact(facts, key).value;
  return { facts, value, detail: (key: string) => fact(facts, key).detail ?? '', unknown: (key: string) => fact(facts, key).unknown ?? '' };
}

test('each TOML form reads as containerd reads it', async (t) => {
  const cases: [string, Record<string, unknown>][] = [
    ['v3-full.toml', { 'containerd.maxConcurrentDownloads': 3, 'containerd.snapshotter': 'overlayfs', 'containerd.cgroupDriver': 'cgroupfs' }],
    ['v2-full.toml', { 'containerd.maxConcurrentDownloads': 3, 'containerd.snapshotter': 'overlayfs', 'containerd.cgroupDriver': 'cgroupfs' }],
    ['bottlerocket-k8s-multiline-array.toml', { 'containerd.maxConcurrentDownloads': 1, 'containerd.cgroupDriver': 'systemd' }],
    ['inline-tables.toml', { 'containerd.cgroupDriver': 'systemd', 'containerd.snapshotter': 'overlayfs' }],
    ['multiline-string.toml', { 'containerd.maxConcurrentDownloads': 1, 'containerd.cgroupDriver': 'systemd' }],
    ['dotted-keys.toml', { 'containerd.maxConcurrentDownloads': 10, 'containerd.snapshotter': 'stargz', 'containerd.cgroupDriver': 'systemd' }],
    ['quoted-keys.toml', { 'containerd.maxConcurrentDownloads': 2, 'containerd.snapshotter': 'soci', 'containerd.cgroupDriver': 'systemd' }],
  ];
  for (const [name, expected] of cases) {
    // containerd 1.7 (Debian's package): every CRI pull reads the CRI images config.
    const got = await factsFor(t, { [CONFIG]: await fixture(name), '/var/lib/dpkg/status': dpkg('1.7.24~ds1-6+b1') });
    for (const [key, value] of Object.entries(expected)) assert.equal(got.value(key), value, `${name}: ${key} (${got.unknown(key) || got.detail(key)})`);
  }
});

test('imports: the imported file sets the default runtime, whose options say cgroupfs', async (t) => {
  const got = await factsFor(t, {
    [CONFIG]: await fixture('imports/config.toml'), '/etc/containerd/conf.d/99-nvidia.toml': await fixture('imports/conf.d/99-nvidia.toml'),
  });
  assert.equal(got.value('containerd.cgroupDriver'), 'cgroupfs', got.unknown('containerd.cgroupDriver'));
  assert.match(got.detail('containerd.cgroupDriver'), /default runtime nvidia .*\/etc\/containerd\/conf\.d\/99-nvidia\.toml/);
  const higher = await factsFor(t, { [CONFIG]: 'version = 2\nimports = ["extra.toml"]\n', '/etc/containerd/extra.toml': 'version = 3\n' });
  assert.match(higher.unknown('containerd.snapshotter'), /extra\.toml \(version 3\) is imported by .* \(version 2\)/);
  const missing = await factsFor(t, { [CONFIG]: 'version = 2\nimports = ["/etc/containerd/runtime.toml"]\n' });
  assert.match(missing.unknown('containerd.snapshotter'), /runtime\.toml.*refuses to start without it/);
});

test('an invalid file is unknown with the parser\'s line and column', async (t) => {
  const got = await factsFor(t, { [CONFIG]: await fixture('invalid.toml') });
  assert.equal(got.value('containerd.configFile'), CONFIG);
  assert.match(got.unknown('containerd.maxConcurrentDownloads'), /^\/etc\/containerd\/config\.toml is not valid TOML \(line 2, column \d+: .+\); containerd would refuse it — fix the file$/);
});

test('containerd 2.1+ pulls through the Transfer Service: its own max_concurrent_downloads decides', async (t) => {
  const transfer = await fixture('v3-transfer.toml');
  const viaNode = await factsFor(t, { [CONFIG]: transfer }, 'containerd://2.1.4');
  assert.equal(viaNode.value('containerd.maxConcurrentDownloads'), 1);
  assert.equal(viaNode.value('containerd.pullPath'), 'transfer');
  assert.match(viaNode.detail('containerd.maxConcurrentDownloads'), /containerd 2\.1\.4 \(api:Node\.status\.nodeInfo\.containerRuntimeVersion\) pulls through its Transfer Service: plugins\."io\.containerd\.transfer\.v1\.local"\.max_concurrent_downloads/);
  const viaPackage = await factsFor(t, { [CONFIG]: transfer, '/var/lib/dpkg/status': dpkg('2.1.4~ds1-1') });
  assert.equal(viaPackage.value('containerd.maxConcurrentDownloads'), 1);
  const old = await factsFor(t, { [CONFIG]: transfer }, 'containerd://2.0.5');
  assert.equal(old.value('containerd.maxConcurrentDownloads'), 3, 'containerd 2.0 pulls with the CRI images config');
  assert.equal(old.value('containerd.pullPath'), 'local');
  const unknownVersion = await factsFor(t, { [CONFIG]: transfer });
  assert.match(unknownVersion.unknown('containerd.maxConcurrentDownloads'), /Transfer Service .* = 1\), older ones with the CRI images config \(3\), and containerd's version is unknown/);
});

test('mirrors in the CRI images config make containerd 2.1+ fall back to the local pull, which reads the CRI images config', async (t) => {
  const got = await factsFor(t, { [CONFIG]: await fixture('v3-transfer-mirrors.toml') }, 'containerd://2.1.4');
  assert.equal(got.value('containerd.pullPath'), 'local');
  assert.equal(got.value('containerd.maxConcurrentDownloads'), 3, 'the Transfer Service\'s 1 is not used');
  assert.match(got.detail('containerd.maxConcurrentDownloads'), /registry mirrors in the CRI images config: containerd 2\.1\+ falls back from the Transfer Service to the local pull/);
  const nonDefault = await factsFor(t, { [CONFIG]: 'version = 3\n[plugins.\'io.containerd.cri.v1.images\']\n  max_concurrent_downloads = 8\n[plugins.\'io.containerd.transfer.v1.local\']\n  max_concurrent_downloads = 1\n' }, 'containerd://2.2.0');
  assert.equal(nonDefault.value('containerd.maxConcurrentDownloads'), 8);
  assert.match(nonDefault.detail('containerd.maxConcurrentDownloads'), /max_concurrent_downloads = 8 in the CRI images config: containerd 2\.1\+ falls back/);
});
