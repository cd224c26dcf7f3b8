// Builds the kustomizations with the real kubectl and hands back the objects.
import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TestContext } from 'node:test';
import { parseAllDocuments } from 'yaml';

export const REPO = path.resolve(import.meta.dirname, '../..');
export const BASE = path.join(REPO, 'manifests');
export const PROBE_OVERLAY = path.join(REPO, 'manifests/overlays/control-plane-probe');
export const PROMETHEUS_OVERLAY = path.join(REPO, 'manifests/overlays/prometheus-operator');
/** The kinds of the Prometheus Operator (manifests/components/prometheus-operator): need its CRDs. */
export const OPERATOR_KINDS = ['ServiceMonitor', 'PrometheusRule'];

/** Every kustomization an operator may apply: `manifests/` and each directory of manifests/overlays/. */
export const KUSTOMIZATIONS: Record<string, string> = Object.fromEntries([
  ['manifests', BASE],
  ...readdirSync(path.join(REPO, 'manifests/overlays')).sort().map((name) => [`overlays/${name}`, path.join(REPO, 'manifests/overlays', name)]),
]);
/** The distribution families, each with its overlay (docs/deploy.md "Distributions"). */
export const DISTRIBUTIONS = ['kubeadm', 'kubespray', 'k3s-rke2', 'eks', 'microk8s'];

// Loose shape: tests index into it freely and assert what they need.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type K8sObject = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string; labels?: Record<string, string> }; [k: string]: any };

export function kustomize(kubectl: string, dir: string): K8sObject[] {
  const out = execFileSync(kubectl, ['kustomize', dir], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  return parseAllDocuments(out).map((d) => d.toJS() as K8sObject).filter(Boolean);
}

/**
 * A ConfigMap's data laid out as the kubelet mounts a configMap volume, in a temp dir removed after
 * the test: <dir>/..<timestamp>/<key> files, <dir>/..data → ..<timestamp>, <dir>/<key> → ..data/<key>.
 */
export async function configMapVolume(t: TestContext, data: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'nta-cm-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const version = '..2026_12_01_00_00_00.1';
  await mkdir(path.join(dir, version));
  for (const [key, value] of Object.entries(data)) await writeFile(path.join(dir, version, key), value);
  await symlink(version, path.join(dir, '..data'));
  for (const key of Object.keys(data)) await symlink(path.join('..data', key), path.join(dir, key));
  return dir;
}

export function byKind(objects: K8sObject[], kind: string): K8sObject[] {
  return objects.filter((o) => o.kind === kind);
}

export interface Mount { daemonSet: string; hostPath: string; type: string | undefined; mountPath: string; readOnly: boolean }

export function hostMounts(ds: K8sObject): Mount[] {
  const spec = ds.spec.template.spec;
  const volumes = new Map<string, { path: string; type?: string }>(
    (spec.volumes ?? []).filter((v: { hostPath?: unknown }) => v.hostPath).map((v: { name: string; hostPath: { path: string; type?: string } }) => [v.name, v.hostPath]),
  );
  return spec.containers.flatMap((c: { volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[] }) =>
    (c.volumeMounts ?? []).filter((m) => volumes.has(m.name)).map((m) => {
      const hp = volumes.get(m.name) as { path: string; type?: string };
      return { daemonSet: ds.metadata.name, hostPath: hp.path, type: hp.type, mountPath: m.mountPath, readOnly: m.readOnly === true };
    }));
}
