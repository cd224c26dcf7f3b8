// The kubelet's version, which decides its QPS defaults: what the kubelet reports on its Node (agent),
// else the installed package, else the control plane's image tags, else a lower bound from its flags.
// Nothing is executed to find it: the path of a running "kubelet" is whatever its starter chose
// (`exec -a /tmp/x/kubelet …`), and running it as root would run that user's program.
import type { HostRoot } from '../../host/host-root.ts';
import type { FlagMap } from '../../host/processes.ts';
import type { WorkloadSnapshot } from '../../workload/snapshot.ts';
import { minorOf, type VersionHint } from './config.ts';
import type { KubeletCommand } from './command.ts';
import { microk8sVersion } from '../microk8s.ts';

export interface KubeletVersion {
  version?: string;
  source: string;
  hint: VersionHint;
}

/** The Version: of an installed package in a dpkg status file, or undefined. */
export function dpkgVersion(status: string, pkg: string): string | undefined {
  for (const stanza of status.split(/\n\s*\n/)) {
    if (!new RegExp(`^Package: ${pkg}$`, 'm').test(stanza)) continue;
    if (!/^Status: .* installed$/m.test(stanza)) continue;
    return /^Version: (\S+)$/m.exec(stanza)?.[1];
  }
  return undefined;
}

/** "v1.30.2" from "…/kube-apiserver:v1.30.2" in a static pod manifest. */
export function imageTagVersion(manifest: string, component: string): string | undefined {
  return new RegExp(`image:\\s*["']?\\S*/${component}:(v1\\.\\d+\\.\\d+)`).exec(manifest)?.[1];
}

function fromNode(cluster: WorkloadSnapshot | undefined): KubeletVersion | undefined {
  const reported = cluster?.kubeletVersion;
  const minor = reported ? minorOf(reported) : undefined;
  if (!reported || minor === undefined) return undefined;
  return { version: reported.replace(/^v/, ''), source: 'api:Node.status.nodeInfo.kubeletVersion', hint: { minor, why: `the kubelet reports ${reported} on its Node` } };
}

/** Bottlerocket names its variants by Kubernetes minor ("aws-k8s-1.28"): each variant ships that one kubelet. */
export function bottlerocketVariantMinor(osRelease: string): { variant: string; minor: number } | undefined {
  if (!/^ID=["']?bottlerocket["']?$/m.test(osRelease)) return undefined;
  const variant = /^VARIANT_ID=["']?([A-Za-z0-9._-]{1,64})["']?$/m.exec(osRelease)?.[1];
  const minor = variant ? /-k8s-1\.(\d{1,3})(?:-|$)/.exec(variant)?.[1] : undefined;
  return variant && minor ? { variant, minor: Number(minor) } : undefined;
}

async function fromOsRelease(host: HostRoot): Promise<KubeletVersion | undefined> {
  const osRelease = await host.readText('/etc/os-release', { maxBytes: 16 * 1024 });
  const found = osRelease.ok ? bottlerocketVariantMinor(osRelease.text) : undefined;
  if (!found) return undefined;
  const why = `Bottlerocket variant ${found.variant} (/etc/os-release) ships kubelet 1.${found.minor}`;
  return { version: `1.${found.minor}`, source: '/etc/os-release', hint: { minor: found.minor, why } };
}

async function fromMicrok8s(host: HostRoot, command: KubeletCommand): Promise<KubeletVersion | undefined> {
  const found = command.microk8s ? await microk8sVersion(host, command.microk8s) : undefined;
  const minor = found ? minorOf(found.version) : undefined;
  if (!found || minor === undefined) return undefined;
  return { version: found.version, source: found.source, hint: { minor, why: `the microk8s snap is version ${found.version} (${found.source}); kubelite embeds that kubelet` } };
}

async function fromFiles(host: HostRoot): Promise<KubeletVersion | undefined> {
  const bottlerocket = await fromOsRelease(host);
  if (bottlerocket) return bottlerocket;
  for (const statusFile of ['/var/lib/dpkg/status']) {
    const status = await host.readText(statusFile, { maxBytes: 16 * 1024 * 1024 });
    const version = status.ok ? dpkgVersion(status.text, 'kubelet') : undefined;
    if (version && minorOf(version) !== undefined) {
      return { version: version.replace(/-.*$/, ''), source: statusFile, hint: { minor: minorOf(version) as number, why: `package kubelet ${version} is installed` } };
    }
  }
  for (const dir of ['/etc/kubernetes/manifests', '/var/lib/rancher/rke2/agent/pod-manifests']) {
    const manifest = await host.readText(`${dir}/kube-apiserver.yaml`);
    const version = manifest.ok ? imageTagVersion(manifest.text, 'kube-apiserver') : undefined;
    if (version) {
      const why = `kube-apiserver image ${version} on this node; the kubelet is taken to run the control plane's version`;
      return { version: version.slice(1), source: `${dir}/kube-apiserver.yaml`, hint: { minor: minorOf(version) as number, why } };
    }
  }
  return undefined;
}

export async function detectKubeletVersion(
  host: HostRoot, command: KubeletCommand, flags: FlagMap, cluster?: WorkloadSnapshot,
): Promise<KubeletVersion> {
  const found = fromNode(cluster) ?? (await fromMicrok8s(host, command)) ?? (await fromFiles(host));
  if (found) return found;
  if (flags.has('config-dir') || command.implicitConfigDir) {
    const why = command.implicitConfigDir
      ? `${command.rancher?.distro ?? 'the distribution'} starts it with --config-dir ${command.implicitConfigDir}, which only kubelets from 1.28 accept`
      : 'it is started with --config-dir, which only kubelets from 1.28 accept';
    return { source: 'inferred', hint: { atLeastMinor: 28, why } };
  }
  const node = cluster ? (cluster.unsynced.node ? `its Node is not read yet (${cluster.unsynced.node})` : 'its Node reports no kubeletVersion') : 'no Node to read (scan: only the agent reads its Node)';
  const reason = `${node}, no kubelet package in /var/lib/dpkg/status and no kube-apiserver manifest with an image tag; the kubelet binary is never run to ask`;
  return { source: 'unknown', hint: { why: reason } };
}
