// The security posture of the DaemonSets (issue 7): not privileged, no host namespaces, read-only
// root filesystem, no escalation, no capabilities, seccomp RuntimeDefault, only read-only hostPaths
// (except the probe overlay's one), none of the forbidden paths, RBAC exactly as listed; and the
// hostPath mounts cover the host paths the collectors read, each omission with its reason.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { requireLayerTool } from '../helpers/real-tools.ts';
import { BASE, KUSTOMIZATIONS, PROBE_OVERLAY, REPO, byKind, hostMounts, kustomize, type K8sObject, type Mount } from '../helpers/manifests.ts';

const FORBIDDEN = ['/', '/etc', '/var', '/var/lib', '/etc/kubernetes', '/etc/kubernetes/pki', '/var/lib/kubelet',
  '/var/lib/kubelet/pods', '/var/lib/etcd', '/run', '/var/run', '/run/containerd', '/var/run/docker.sock',
  '/run/containerd/containerd.sock', '/var/run/crio', '/run/crio/crio.sock'];
const PROBE_HOST_PATH = '/var/lib/etcd/node-tuning-advisor-probe';

/** Host paths the collectors read that are deliberately not mounted, and why. */
const NOT_MOUNTED: Record<string, string> = {
  '/etc/kubernetes/kubelet.conf': "kubelet's kubeconfig: credentials",
  '/etc/hostname': 'a single file outside the kubelet\'s dir (a missing one cannot be created harmlessly); the agent names the node by NODE_NAME, and unit %H specifiers stay unexpanded',
  '/etc/rancher': 'k3s/rke2 only (config.yaml holds the join token); see docs/deploy.md',
  '/var/lib/rancher': 'k3s/rke2 data: tokens, keys and the datastore',
  '/var/snap/microk8s': 'MicroK8s only, and its credentials/ and certs/ hold tokens and keys: only current/args/ is mounted, by the microk8s overlay',
  '/var/lib/etcd': "etcd's data: every Secret of the cluster (only the probe overlay's subdirectory)",
  '/etc/system-release-cpe': 'Red Hat family single file (a missing one cannot be mounted harmlessly); TuneD matches system= against it only, so where a recommend rule needs it the recommendation is unknown, naming the file',
  '/etc/os-release': 'usually a symlink to /usr/lib/os-release, which is mounted with /usr',
  '/var/lib/dpkg': 'Debian-only package database; kubelet reports its version on the Node',
  '/dev': 'device numbers come from /sys/dev/block; no device node is opened',
  '/var/lib/kubelet/plugins_registry': "CSI registration sockets, connectable even on a read-only mount; the agent reads the node's CSINode instead",
  '/run/containerd': "containerd's socket: whoever connects runs containers (a read-only mount does not stop a connect); containerd is found by its binary, unit or process instead",
};


// nodes: list (not get) because the agent reads its Node through a list-watch; events: create only
// (nothing patches Events), and only in "default" (a Role: kube-apiserver accepts Node Events there
// and nowhere else); nodes/metrics and nodes/configz: get only (the kubelet's /metrics and /configz,
// authorized by the kubelet with a SubjectAccessReview; never nodes/proxy, which allows exec too).
// test/manifests/rbac-usage.test.ts derives the used part from a real run.
const expected = { nodes: ['list', 'patch', 'watch'], 'nodes/metrics': ['get'], 'nodes/configz': ['get'], pods: ['list', 'watch'],
  csidrivers: ['get', 'list', 'watch'], csinodes: ['get', 'list', 'watch'] };

function grantsOf(role: K8sObject): Record<string, string[]> {
  const granted: Record<string, string[]> = {};
  for (const rule of role.rules ?? []) {
    assert.equal(rule.resourceNames, undefined);
    assert.equal(rule.nonResourceURLs, undefined);
    for (const r of rule.resources) granted[r] = [...(granted[r] ?? []), ...rule.verbs].sort();
    const groups = rule.resources.some((r: string) => r.startsWith('csi')) ? ['storage.k8s.io'] : rule.resources.includes('leases') ? ['coordination.k8s.io'] : [''];
    assert.deepEqual(rule.apiGroups, groups);
  }
  return granted;
}

async function build(t: import('node:test').TestContext, dir: string): Promise<K8sObject[] | undefined> {
  const kubectl = await requireLayerTool(t, 'kubectl');
  return kubectl ? kustomize(kubectl, dir) : undefined;
}

function checkPod(ds: K8sObject, probe: boolean): void {
  const spec = ds.spec.template.spec;
  const at = (what: string) => `${ds.metadata.name}: ${what}`;
  for (const field of ['hostNetwork', 'hostPID', 'hostIPC']) assert.notEqual(spec[field], true, at(field));
  assert.equal(spec.securityContext?.seccompProfile?.type, 'RuntimeDefault', at('pod seccomp'));
  assert.equal(spec.serviceAccountName, 'node-tuning-advisor');
  assert.ok(spec.tolerations.some((t: { operator?: string; key?: string }) => t.operator === 'Exists' && !t.key), at('tolerates every taint'));
  assert.equal(ds.spec.updateStrategy.rollingUpdate.maxUnavailable, '10%');
  for (const c of spec.containers) {
    const sc = c.securityContext;
    assert.equal(sc.privileged, false, at('privileged'));
    assert.equal(sc.readOnlyRootFilesystem, true, at('readOnlyRootFilesystem'));
    assert.equal(sc.allowPrivilegeEscalation, false, at('allowPrivilegeEscalation'));
    assert.deepEqual(sc.capabilities, { drop: ['ALL'] }, at('capabilities: drop ALL, nothing added'));
    assert.equal(sc.seccompProfile.type, 'RuntimeDefault');
    assert.deepEqual(c.env.find((e: { name: string }) => e.name === 'NODE_NAME')?.valueFrom, { fieldRef: { fieldPath: 'spec.nodeName' } });
    assert.ok(c.resources.requests.cpu && c.resources.requests.memory && c.resources.limits.memory, at('resources'));
    assert.equal(c.livenessProbe.httpGet.path, '/healthz');
    assert.equal(c.readinessProbe.httpGet.path, '/readyz');
    assert.ok(c.args.includes('--host-root=/host'));
  }
  for (const m of hostMounts(ds)) {
    assert.ok(!FORBIDDEN.includes(m.hostPath.replace(/\/$/, '') || '/'), at(`forbidden hostPath ${m.hostPath}`));
    assert.equal(m.mountPath, `/host${m.hostPath}`, at(`${m.hostPath} mounted at its place under /host`));
    if (probe && m.hostPath === PROBE_HOST_PATH) assert.equal(m.readOnly, false, at('the probe dir is writable'));
    else assert.equal(m.readOnly, true, at(`${m.hostPath} read-only`));
  }
}

test('base: posture of the DaemonSet, and RBAC exactly nodes list/watch/patch, nodes/metrics and nodes/configz get (no nodes/proxy), pods list/watch, csi get/list/watch; events create in "default"; leases get/create/patch in its namespace', async (t) => {
  const objects = await build(t, BASE);
  if (!objects) return;
  const [ds] = byKind(objects, 'DaemonSet');
  checkPod(ds as K8sObject, false);
  assert.ok(!hostMounts(ds as K8sObject).some((m) => m.hostPath.startsWith('/var/lib/etcd')), 'base mounts nothing of etcd');
  const clusterRoles = byKind(objects, 'ClusterRole');
  assert.equal(clusterRoles.length, 1);
  assert.deepEqual(grantsOf(clusterRoles[0] as K8sObject), expected);
  assert.ok(!('nodes/proxy' in grantsOf(clusterRoles[0] as K8sObject)), 'never nodes/proxy: it allows every kubelet API, exec included');
  const roles = byKind(objects, 'Role');
  assert.deepEqual(roles.map((r) => [r.metadata.namespace, grantsOf(r)]),
    [['default', { events: ['create'] }], ['node-tuning-advisor', { leases: ['create', 'get', 'patch'] }]]);
  const bindings = byKind(objects, 'RoleBinding');
  const agent = [{ kind: 'ServiceAccount', name: 'node-tuning-advisor', namespace: 'node-tuning-advisor' }];
  assert.deepEqual(bindings.map((b) => [b.metadata.namespace, b.roleRef.name, b.subjects]),
    roles.map((r) => [r.metadata.namespace, r.metadata.name, agent]));
});

test('probe overlay: two DaemonSets, the probe one on control-plane nodes only with one writable hostPath', async (t) => {
  const objects = await build(t, PROBE_OVERLAY);
  if (!objects) return;
  const sets = byKind(objects, 'DaemonSet');
  assert.equal(sets.length, 2);
  for (const ds of sets) checkPod(ds, true);
  const probe = sets.find((d) => d.metadata.name.endsWith('-etcd-probe')) as K8sObject;
  const agent = sets.find((d) => d !== probe) as K8sObject;
  assert.deepEqual(hostMounts(probe).filter((m) => !m.readOnly).map((m) => m.hostPath), [PROBE_HOST_PATH]);
  assert.deepEqual(hostMounts(agent).filter((m) => !m.readOnly), []);
  assert.equal(probe.spec.template.spec.nodeSelector['node-role.kubernetes.io/control-plane'], '');
  const affinity = agent.spec.template.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution;
  assert.deepEqual(affinity.nodeSelectorTerms[0].matchExpressions[0], { key: 'node-role.kubernetes.io/control-plane', operator: 'DoesNotExist' });
  assert.equal(probe.spec.template.spec.affinity, undefined, 'the probe DaemonSet is not kept off control-plane nodes');
  assert.notDeepEqual(probe.spec.selector, agent.spec.selector, 'selectors do not overlap');
});

/** Host paths named in the collectors and the host-access layer (string literals). */
async function collectorPaths(): Promise<string[]> {
  const found = new Set<string>();
  for (const sub of ['src/collectors', 'src/host']) {
    const dir = path.join(REPO, sub);
    for (const file of (await readdir(dir, { recursive: true })).filter((f) => f.endsWith('.ts'))) {
      const text = await readFile(path.join(dir, file), 'utf8');
      for (const [, p] of text.matchAll(/['`"](\/(?:etc|var|run|usr|boot|lib|proc|sys|dev)\b[^'`"\s,$(]*)/g)) found.add((p as string).replace(/\/$/, ''));
    }
  }
  return [...found].sort();
}

test('every kustomization\'s DaemonSets keep the posture', async (t) => {
  for (const [name, dir] of Object.entries(KUSTOMIZATIONS)) {
    const objects = await build(t, dir);
    if (!objects) return;
    for (const ds of byKind(objects, 'DaemonSet')) checkPod(ds, name === 'overlays/control-plane-probe');
  }
});

test('hostPath mounts of the base and the distribution overlays together cover every host path the collectors read, or the path is listed as not mounted with a reason', async (t) => {
  const mounts: Mount[] = [];
  for (const dir of Object.values(KUSTOMIZATIONS)) {
    const objects = await build(t, dir);
    if (!objects) return;
    mounts.push(...byKind(objects, 'DaemonSet').flatMap(hostMounts));
  }
  const under = (p: string, root: string) => p === root || p.startsWith(`${root}/`);
  const paths = await collectorPaths();
  assert.ok(paths.includes('/proc/cmdline') && paths.includes('/etc/tuned/active_profile'), 'the scan of the sources finds paths');
  const uncovered = paths.filter((p) => !mounts.some((m) => under(p, m.hostPath)) && !Object.keys(NOT_MOUNTED).some((n) => under(p, n)));
  assert.deepEqual(uncovered, [], 'mount these read-only in manifests/base/daemonset/daemonset.yaml, or list them in NOT_MOUNTED with the reason');
  const read = (m: string) => paths.some((p) => under(p, m) || under(m, p));
  // MicroK8s's args files and EKS's kubelet directory are read through the running process's flags
  // (--kubelet-args-file, --config), as is kubespray's kubelet-config.yaml, not by a literal path.
  const byFlag = ['/var/snap/microk8s/current/args', '/etc/kubernetes/kubelet', '/etc/kubernetes/kubelet-config.yaml'];
  const unused = [...new Set(mounts.filter((m) => !read(m.hostPath) && !byFlag.includes(m.hostPath)).map((m) => m.hostPath))];
  assert.deepEqual(unused, [], 'no mount that no collector reads');
});
