// Issue 24: no hostPath of any kustomization an operator may apply can keep the pod from starting.
// kubelet refuses to start a pod whose hostPath of type Directory/File/Socket/CharDevice/BlockDevice
// is missing (FailedMount, ContainerCreating for ever); an untyped one is created as a directory by
// the runtime, even where the host expects a file. DirectoryOrCreate never blocks; FileOrCreate only
// when the parent is missing, so it is allowed directly in /var/lib/kubelet (the kubelet's root
// dir: it exists wherever that kubelet starts pods). And the agent still reads through the mounts:
// a host tree holding only what the kubeadm overlay mounts gives the same facts from those files.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFile, cp as copy, mkdir, mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { collectFacts } from '../../src/collectors/run.ts';
import { HostRoot } from '../../src/host/host-root.ts';
import { fixtureHost } from '../helpers/fixtures.ts';
import { requireTool } from '../helpers/tools.ts';
import { KUSTOMIZATIONS, byKind, hostMounts, kustomize, type K8sObject } from '../helpers/manifests.ts';

const KUBELET_ROOT = '/var/lib/kubelet';

function hostPathVolumes(ds: K8sObject): { name: string; path: string; type?: string }[] {
  return (ds.spec.template.spec.volumes ?? []).filter((v: { hostPath?: unknown }) => v.hostPath)
    .map((v: { name: string; hostPath: { path: string; type?: string } }) => ({ name: v.name, ...v.hostPath }));
}

test('every hostPath of every kustomization is DirectoryOrCreate, or FileOrCreate directly in the kubelet\'s root dir', (t) => {
  const kubectl = requireTool(t, 'kubectl', 'kubectl');
  if (!kubectl) return;
  const seen = new Set<string>();
  for (const [name, dir] of Object.entries(KUSTOMIZATIONS)) {
    for (const ds of byKind(kustomize(kubectl, dir), 'DaemonSet') as K8sObject[]) {
      const volumes: { name: string; path: string; type?: string }[] = hostPathVolumes(ds);
      assert.ok(volumes.length >= 10, `${name}: ${ds.metadata.name} mounts the host`);
      for (const v of volumes) {
        const at: string = `${name}: ${ds.metadata.name} volume ${v.name} (${v.path}, type ${v.type ?? 'unset'})`;
        seen.add(v.type ?? 'unset');
        if (v.type === 'FileOrCreate') assert.equal(path.posix.dirname(v.path), KUBELET_ROOT, `${at}: FileOrCreate blocks where the parent is missing`);
        else assert.equal(v.type, 'DirectoryOrCreate', `${at}: can keep the pod from starting on a node without it`);
      }
    }
  }
  assert.deepEqual([...seen].sort(), ['DirectoryOrCreate', 'FileOrCreate'], 'the check saw both kinds');
});

/** Copies from `fixture` only what `mounts` bring into the container, to the same place under a new root. */
async function mountedOnly(fixture: string, hostPaths: string[]): Promise<string> {
  const root = await mkdtemp(path.join(tmpdir(), 'nta-mounted-'));
  for (const hostPath of hostPaths) {
    const from = path.join(fixture, hostPath);
    const info = await stat(from).catch(() => undefined);
    const to = path.join(root, hostPath);
    if (!info) {
      // DirectoryOrCreate: an empty directory where the host had none; FileOrCreate: an empty file.
      await mkdir(hostPath.startsWith(`${KUBELET_ROOT}/`) ? path.dirname(to) : to, { recursive: true });
      continue;
    }
    await mkdir(path.dirname(to), { recursive: true });
    await copy(from, to, { recursive: true, verbatimSymlinks: true });
  }
  return root;
}

test('kubeadm overlay: a host tree of only its mounts yields the kubelet\'s settings from /var/lib/kubelet/config.yaml, as the whole host does', async (t) => {
  const kubectl = requireTool(t, 'kubectl', 'kubectl');
  if (!kubectl) return;
  const [ds] = byKind(kustomize(kubectl, KUSTOMIZATIONS['overlays/kubeadm'] as string), 'DaemonSet');
  const mounts = hostMounts(ds as K8sObject);
  for (const m of mounts) assert.equal(m.mountPath, `/host${m.hostPath}`);
  // kubeadm's own config.yaml (fixture kubeadm-1.30) with the limits an operator raised in it.
  const fixture = await mkdtemp(path.join(tmpdir(), 'nta-kubeadm-'));
  await copy(fixtureHost('kubeadm-1.30'), fixture, { recursive: true });
  await appendFile(path.join(fixture, 'var/lib/kubelet/config.yaml'), 'kubeAPIQPS: 20\nkubeAPIBurst: 40\n');
  const root = await mountedOnly(fixture, mounts.map((m) => m.hostPath));
  const [generic] = byKind(kustomize(kubectl, KUSTOMIZATIONS.manifests as string), 'DaemonSet');
  const genericRoot = await mountedOnly(fixture, hostMounts(generic as K8sObject).map((m) => m.hostPath));
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
