// Node identity: its host name and whether it runs the control plane, judged from the static pod
// manifests kubeadm and rke2 write (k3s embeds the control plane in its server process instead).
import type { Collector } from './collector.ts';

const MANIFEST_DIRS = ['/etc/kubernetes/manifests', '/var/lib/rancher/rke2/agent/pod-manifests'];
const CONTROL_PLANE = ['kube-apiserver', 'etcd', 'kube-scheduler', 'kube-controller-manager'];
const K3S_SERVER = '/var/lib/rancher/k3s/server/manifests';
const NODE_SIGNS = [
  '/var/lib/kubelet/config.yaml',
  '/etc/kubernetes/kubelet.conf',
  '/var/lib/rancher/k3s/agent',
  '/var/lib/rancher/rke2/agent',
  '/etc/kubernetes/kubelet.env',
];

/** "kube-apiserver.yaml" → "kube-apiserver"; other static pods are not control plane. */
export function controlPlaneComponent(fileName: string): string | undefined {
  const base = fileName.replace(/\.(ya?ml|json)$/, '');
  return CONTROL_PLANE.find((component) => base === component);
}

const nodeRoleCollector: Collector = {
  name: 'node',
  provides: ['node.hostname', 'node.role', 'node.controlPlaneComponents'],
  async collect({ host, facts }) {
    const hostname = await host.readValue('/etc/hostname');
    if (hostname.ok && hostname.text !== '') facts.set('node.hostname', hostname.text, hostname.path);
    else facts.unknown('node.hostname', hostname.ok ? '/etc/hostname is empty' : hostname.reason);

    const components: string[] = [];
    let source: string | undefined;
    for (const dir of MANIFEST_DIRS) {
      const listing = await host.listDir(dir);
      for (const entry of listing.ok ? listing.entries : []) {
        const component = controlPlaneComponent(entry);
        if (component && !components.includes(component)) {
          components.push(component);
          source ??= dir;
        }
      }
    }
    if (components.length > 0) {
      facts.set('node.role', 'control-plane', source as string, `static pods: ${components.join(', ')}`);
      facts.set('node.controlPlaneComponents', components, source as string);
      return;
    }
    if (await host.exists(K3S_SERVER)) {
      facts.set('node.role', 'control-plane', K3S_SERVER, 'k3s server (embedded control plane)');
      facts.set('node.controlPlaneComponents', ['k3s-server'], K3S_SERVER);
      return;
    }
    facts.set('node.controlPlaneComponents', [], MANIFEST_DIRS.join(', '));
    for (const sign of NODE_SIGNS) {
      if (await host.exists(sign)) {
        facts.set('node.role', 'worker', sign, 'kubelet files but no control-plane static pods');
        return;
      }
    }
    facts.set('node.role', 'none', 'inferred', `no kubelet or control-plane files (looked for ${[...MANIFEST_DIRS, ...NODE_SIGNS].join(', ')})`);
  },
};

export default nodeRoleCollector;
