// Issue 24: no hostPath of any kustomization an operator may apply can keep the pod from starting.
// kubelet refuses to start a pod whose hostPath of type Directory/File/Socket/CharDevice/BlockDevice
// is missing (FailedMount, ContainerCreating for ever); an untyped one is created as a directory by
// the runtime, even where the host expects a file. DirectoryOrCreate never blocks; FileOrCreate only
// when the parent is missing, so it is allowed directly in /var/lib/kubelet (the kubelet's root
// dir: it exists wherever that kubelet starts pods). And the agent still reads through the mounts:
// a host tree holding only what the kubeadm overlay mounts gives the same facts from those files.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFile, cp as copy, mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { collectFacts } from '../../src/collectors/run.ts';
import { HostRoot } from '../../src/host/host-root.ts';
import { fixtureHost } from '../helpers/fixtures.ts';
import { requireLayerTool } from '../helpers/real-tools.ts';
import { runCli } from '../helpers/cli.ts';
import { REPO } from '../helpers/manifests.ts';
import { KUSTOMIZATIONS, byKind, hostMounts, kustomize, type K8sObject, type Mount } from '../helpers/manifests.ts';

const KUBELET_ROOT = '/var/lib/kubelet';
/** Where a FileOrCreate mount cannot block: its parent exists wherever the overlay applies. */
const FILE_PARENTS: Record<string, string> = {
  [KUBELET_ROOT]: "the kubelet's root dir: it exists wherever that kubelet starts pods",
  '/etc': 'every Linux host',
  '/etc/kubernetes': 'kubespray (kubeadm) writes it before the kubelet starts',
};

function hostPathVolumes(ds: K8sObject): { name: string; path: string; type?: string }[] {
  return (ds.spec.template.spec.volumes ?? []).filter((v: { hostPath?: unknown }) => v.hostPath)
    .map((v: { name: string; hostPath: { path: string; type?: string } }) => ({ name: v.name, ...v.hostPath }));
}

test('every hostPath of every kustomization is DirectoryOrCreate, or FileOrCreate directly in the kubelet\'s root dir', async (t) => {
  const kubectl = await requireLayerTool(t, 'kubectl');
  if (!kubectl) return;
  const seen = new Set<string>();
  for (const [name, dir] of Object.entries(KUSTOMIZATIONS)) {
    for (const ds of byKind(kustomize(kubectl, dir), 'DaemonSet') as K8sObject[]) {
      const volumes: { name: string; path: string; type?: string }[] = hostPathVolumes(ds);
      assert.ok(volumes.length >= 10, `${name}: ${ds.metadata.name} mounts the host`);
      for (const v of volumes) {
        const at: string = `${name}: ${ds.metadata.name} volume ${v.name} (${v.path}, type ${v.type ?? 'unset'})`;
        seen.add(v.type ?? 'unset');
        if (v.type === 'FileOrCreate') {
          const parent = path.posix.dirname(v.path);
          assert.ok(FILE_PARENTS[parent], `${at}: FileOrCreate blocks where the parent is missing`);
          if (parent === '/etc/kubernetes') assert.equal(name, 'overlays/kubespray', `${at}: /etc/kubernetes is certain only on kubespray (kubeadm) nodes`);
        }
        else assert.equal(v.type, 'DirectoryOrCreate', `${at}: can keep the pod from starting on a node without it`);
      }
    }
  }
  assert.deepEqual([...seen].sort(), ['DirectoryOrCreate', 'FileOrCreate'], 'the check saw both kinds');
});

/** Copies from `fixture` only what `mounts` bring into the container, to the same place under a new root. */
async function mountedOnly(fixture: string, mounts: Mount[]): Promise<string> {
  const root = await mkdtemp(path.join(tmpdir(), 'nta-mounted-'));
  for (const { hostPath, type } of mounts) {
    const from = path.join(fixture, hostPath);
    const info = await stat(from).catch(() => undefined);
    const to = path.join(root, hostPath);
    if (!info) {
      // DirectoryOrCreate: an empty directory where the host had none; FileOrCreate: an empty file.
      await mkdir(type === 'FileOrCreate' ? path.dirname(to) : to, { recursive: true });
      if (type === 'FileOrCreate') await writeFile(to, '');
      continue;
    }
    await mkdir(path.dirname(to), { recursive: true });
    await copy(from, to, { recursive: true, verbatimSymlinks: true });
  }
  return root;
}

test('kubeadm overlay: a host tree of only its mounts yields the kubelet\'s settings from /var/lib/kubelet/config.yaml, as the whole host does', async (t) => {
  const kubectl = await requireLayerTool(t, 'kubectl');
  if (!kubectl) return;
  const [ds] = byKind(kustomize(kubectl, KUSTOMIZATIONS['overlays/kubeadm'] as string), 'DaemonSet');
  const mounts = hostMounts(ds as K8sObject);
  for (const m of mounts) assert.equal(m.mountPath, `/host${m.hostPath}`);
  // kubeadm's own config.yaml (fixture kubeadm-1.30) with the limits an operator raised in it.
  const fixture = await mkdtemp(path.join(tmpdir(), 'nta-kubeadm-'));
  await copy(fixtureHost('kubeadm-1.30'), fixture, { recursive: true });
  await appendFile(path.join(fixture, 'var/lib/kubelet/config.yaml'), 'kubeAPIQPS: 20\nkubeAPIBurst: 40\n');
  const root = await mountedOnly(fixture, mounts);
  const [generic] = byKind(kustomize(kubectl, KUSTOMIZATIONS.manifests as string), 'DaemonSet');
  const genericRoot = await mountedOnly(fixture, hostMounts(generic as K8sObject));
  t.after(() => Promise.all([fixture, root, genericRoot].map((d) => rm(d, { recursive: true, force: true }))));
  const whole = await collectFacts(new HostRoot(fixture));
  const mounted = await collectFacts(new HostRoot(root));
  for (const key of ['kubelet.kubeAPIQPS', 'kubelet.kubeAPIBurst']) {
    assert.equal(mounted.get(key)?.source, '/var/lib/kubelet/config.yaml', `${key}: ${JSON.stringify(mounted.get(key))}`);
    assert.deepEqual(mounted.get(key), whole.get(key));
  }
  assert.equal(mounted.value('kubelet.kubeAPIQPS'), 20);
  // The generic base mounts no kubelet file: there the --config the kubelet names cannot be read, and
  // the setting is unknown (never the default, which would pass a rule the file may fail).
  assert.equal((await collectFacts(new HostRoot(genericRoot))).get('kubelet.kubeAPIQPS')?.source, 'unknown');
  assert.equal(mounted.value('node.role'), 'control-plane', 'the static pods are read from /etc/kubernetes/manifests');
  // Every fact the whole host read from a mounted path comes out the same through the mounts.
  const under = (source: string) => mounts.some((m) => source === m.hostPath || source.startsWith(`${m.hostPath}/`));
  const fromMounts = whole.keys().filter((k) => under(whole.get(k)?.source ?? ''));
  assert.ok(fromMounts.length >= 5, `facts read from mounted paths: ${fromMounts}`);
  for (const key of fromMounts) assert.deepEqual(mounted.get(key), whole.get(key), key);
});

test('kubespray overlay: through its mounts the agent reads what the whole host gives from /etc/etcd.env, kubelet.env and kubelet-config.yaml; the empty etcd.env FileOrCreate leaves on a worker is no etcd', async (t) => {
  const kubectl = await requireLayerTool(t, 'kubectl');
  if (!kubectl) return;
  const [ds] = byKind(kustomize(kubectl, KUSTOMIZATIONS['overlays/kubespray'] as string), 'DaemonSet');
  const mounts = hostMounts(ds as K8sObject);
  for (const file of ['/etc/etcd.env', '/etc/kubernetes/kubelet.env', '/etc/kubernetes/kubelet-config.yaml']) {
    assert.ok(mounts.some((m) => m.hostPath === file && m.mountPath === `/host${file}` && m.type === 'FileOrCreate'), file);
  }
  const checked: Record<string, string[]> = {
    'etcd-kubespray-ssd': ['etcd.present', 'etcd.dataDir', 'etcd.setup'],
    kubespray: ['kubelet.kubeAPIQPS', 'kubelet.kubeAPIBurst'],
  };
  const roots: Record<string, string> = {};
  for (const [name, keys] of Object.entries(checked)) {
    const root = roots[name] = await mountedOnly(fixtureHost(name), mounts);
    t.after(() => rm(root, { recursive: true, force: true }));
    const whole = await collectFacts(new HostRoot(fixtureHost(name)));
    const mounted = await collectFacts(new HostRoot(root));
    for (const key of keys) {
      assert.notEqual(whole.get(key), undefined, `${name}: ${key} is collected`);
      assert.deepEqual(mounted.get(key), whole.get(key), `${name}: ${key}`);
    }
  }
  // A worker (fixture kubespray has no /etc/etcd.env): the mount leaves an empty file, which reads
  // as no file at all, not as a kubespray etcd without a data dir.
  const worker = roots.kubespray as string;
  assert.equal((await stat(path.join(worker, 'etc/etcd.env'))).size, 0);
  const withEmpty = await collectFacts(new HostRoot(worker));
  await rm(path.join(worker, 'etc/etcd.env'));
  const without = await collectFacts(new HostRoot(worker));
  assert.notEqual(withEmpty.value('etcd.present'), true, JSON.stringify(withEmpty.get('etcd.present')));
  for (const key of ['etcd.present', 'etcd.setup', 'etcd.dataDir']) assert.deepEqual(withEmpty.get(key), without.get(key), key);
});

test('base: containerd\'s settings through the /etc/containerd mount are the whole host\'s', async (t) => {
  const kubectl = await requireLayerTool(t, 'kubectl');
  if (!kubectl) return;
  const [ds] = byKind(kustomize(kubectl, KUSTOMIZATIONS.manifests as string), 'DaemonSet');
  const root = await mountedOnly(fixtureHost('kubeadm-containerd-default'), hostMounts(ds as K8sObject));
  t.after(() => rm(root, { recursive: true, force: true }));
  const whole = await collectFacts(new HostRoot(fixtureHost('kubeadm-containerd-default')));
  const mounted = await collectFacts(new HostRoot(root));
  const keys = whole.keys().filter((k) => k.startsWith('containerd.') && whole.get(k)?.source === '/etc/containerd/config.toml');
  assert.ok(keys.length >= 3, `facts read from config.toml: ${keys}`);
  for (const key of keys) assert.deepEqual(mounted.get(key), whole.get(key), key);
});

test('components/no-containerd-config: through its mounts `scan` says containerd\'s settings are unknown, "/etc/containerd is not mounted", never absent or the defaults', async (t) => {
  const kubectl = await requireLayerTool(t, 'kubectl');
  if (!kubectl) return;
  const kustomization = await mkdtemp(path.join(tmpdir(), 'nta-no-containerd-'));
  // The fixture's node with its containerd binary (the marker the mounted /usr shows in the pod).
  const fixture = await mkdtemp(path.join(tmpdir(), 'nta-containerd-host-'));
  t.after(() => Promise.all([kustomization, fixture].map((d) => rm(d, { recursive: true, force: true }))));
  await copy(fixtureHost('kubeadm-containerd-default'), fixture, { recursive: true });
  await mkdir(path.join(fixture, 'usr/bin'), { recursive: true });
  await writeFile(path.join(fixture, 'usr/bin/containerd'), '');
  await writeFile(path.join(kustomization, 'kustomization.yaml'), `apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - ${path.relative(kustomization, path.join(REPO, 'manifests/overlays/kubeadm'))}\ncomponents:\n  - ${path.relative(kustomization, path.join(REPO, 'manifests/components/no-containerd-config'))}\n`);
  const [without] = byKind(kustomize(kubectl, kustomization), 'DaemonSet');
  const [withMount] = byKind(kustomize(kubectl, KUSTOMIZATIONS['overlays/kubeadm'] as string), 'DaemonSet');
  assert.ok(!hostMounts(without as K8sObject).some((m) => m.hostPath === '/etc/containerd'), 'the component drops the mount');
  const rules = ['containerd-concurrent-downloads', 'containerd-lazy-pulling', 'cgroup-driver-mismatch'];
  const scan = async (ds: K8sObject) => {
    const root = await mountedOnly(fixture, hostMounts(ds));
    t.after(() => rm(root, { recursive: true, force: true }));
    const run = await runCli(['scan', '--host-root', root, '--only', rules.join(','), '-o', 'json']);
    return { root, report: JSON.parse(run.stdout) as { findings: { ruleId: string; status: string; message: string }[]; facts: Record<string, { value: unknown; source: string; unknown?: string }> } };
  };
  const mounted = await scan(withMount as K8sObject);
  assert.deepEqual(mounted.report.findings.map((f) => [f.ruleId, f.status]).sort(), rules.map((r) => [r, 'fail']).sort(), 'with the mount: the fixture\'s failures');
  const { root, report } = await scan(without as K8sObject);
  assert.equal(report.facts['containerd.present']?.value, true, 'containerd is here: its binary under the mounted /usr');
  for (const key of ['containerd.configFile', 'containerd.maxConcurrentDownloads', 'containerd.snapshotter', 'containerd.cgroupDriver']) {
    assert.match(report.facts[key]?.unknown ?? '', new RegExp(`^/etc/containerd is not mounted under the host root ${root}: containerd's settings cannot be read \\(.*no-containerd-config.*containerd is here: /usr/bin/containerd\\)$`), key);
  }
  for (const finding of report.findings) {
    assert.equal(finding.status, 'unknown', finding.ruleId);
    assert.match(finding.message, /\/etc\/containerd is not mounted under the host root/, finding.ruleId);
  }
});

