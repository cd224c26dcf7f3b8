// Where an operator changes the kubelet's API QPS/burst on this node's layout, and the exact edit:
// the place that sets it now (a flag beats every file), or the file the layout expects it in.
import type { Effective } from './config.ts';
import type { KubeletCommand } from './command.ts';

export type KubeletLayout = 'kubeadm' | 'kubespray' | 'k3s' | 'rke2' | 'microk8s' | 'systemd' | 'process';

export function detectLayout(command: KubeletCommand): KubeletLayout {
  if (command.via === 'microk8s') return 'microk8s';
  const rancher = command.rancher?.distro;
  if (rancher && (command.via !== 'process' || (command.binary ?? '').includes(`/rancher/${rancher}/`) || command.args.some((a) => a.text.includes(`/rancher/${rancher}/`)))) return rancher;
  if (command.files.includes('/etc/kubernetes/kubelet.env')) return 'kubespray';
  if (command.files.some((f) => f.endsWith('/kubeadm-flags.env') || f.endsWith('/10-kubeadm.conf'))) return 'kubeadm';
  return command.via === 'systemd' || command.files.length > 0 ? 'systemd' : 'process';
}

/** A systemd unit file or one of its drop-ins. */
export function isUnitFile(file: string): boolean {
  return /\.service$/.test(file) || /\.service\.d\/[^/]+\.conf$/.test(file);
}

export interface QpsLocation {
  /** One line naming the file (and variable or key) that holds, or should hold, kubeAPIQPS. */
  setIn: string;
  /** The edit, with values, and how to apply it. */
  fix: string;
}

export function restartOf(layout: KubeletLayout): string {
  if (layout === 'k3s') return 'systemctl restart k3s (k3s-agent on agents)';
  if (layout === 'rke2') return 'systemctl restart rke2-server (rke2-agent on agents)';
  if (layout === 'microk8s') return 'snap restart microk8s.daemon-kubelite';
  return 'systemctl restart kubelet';
}

function flagFix(origin: string, qps: number, burst: number, layout: KubeletLayout): QpsLocation {
  const inFile = /^(\/\S+?)(?: \((\S+)\))?$/.exec(origin);
  if (!inFile || inFile[1]?.startsWith('/proc/')) {
    return {
      setIn: `--kube-api-qps on the kubelet command line (${origin})`,
      fix: `The running kubelet gets --kube-api-qps from its command line (${origin}), not from a file found on this host: change it to --kube-api-qps=${qps} --kube-api-burst=${burst} wherever the kubelet is started, then restart it.`,
    };
  }
  const [, file, variable] = inFile as unknown as [string, string, string | undefined];
  const where = variable ? `${file}, variable ${variable}` : `${file}`;
  if ((layout === 'k3s' || layout === 'rke2') && isUnitFile(file) && !variable) {
    return {
      setIn: `--kubelet-arg=kube-api-qps on ExecStart in ${file}`,
      fix: `In ${file} change ExecStart's --kubelet-arg=kube-api-qps and --kubelet-arg=kube-api-burst to kube-api-qps=${qps} and kube-api-burst=${burst} (or move them to /etc/rancher/${layout}/config.yaml as kubelet-arg entries), then systemctl daemon-reload and ${restartOf(layout)}.`,
    };
  }
  if ((layout === 'k3s' || layout === 'rke2') && variable && /^[A-Z_][A-Z0-9_]*$/.test(variable)) {
    return {
      setIn: `--kubelet-arg=kube-api-qps in ${where}`,
      fix: `In ${where} change --kubelet-arg=kube-api-qps and --kubelet-arg=kube-api-burst to kube-api-qps=${qps} and kube-api-burst=${burst}, then ${restartOf(layout)}.`,
    };
  }
  if (layout === 'k3s' || layout === 'rke2') {
    return {
      setIn: `kubelet-arg in ${file}`,
      fix: `In ${file} set kubelet-arg entries "kube-api-qps=${qps}" and "kube-api-burst=${burst}", then ${restartOf(layout)}.`,
    };
  }
  return {
    setIn: `--kube-api-qps in ${where}`,
    fix: `In ${where} change the flags to --kube-api-qps=${qps} --kube-api-burst=${burst} (flags override the config file), then ${restartOf(layout)}.`,
  };
}

function fileFix(file: string, qps: number, burst: number, layout: KubeletLayout, adding: boolean): QpsLocation {
  const verb = adding ? 'add' : 'set';
  const keys = `kubeAPIQPS: ${qps} and kubeAPIBurst: ${burst}`;
  if (layout === 'kubeadm') {
    return {
      setIn: `kubeAPIQPS in ${file}`,
      fix: `In ${file} ${verb} ${keys}, then ${restartOf(layout)}. kubeadm rewrites this file on upgrade from the kube-system/kubelet-config ConfigMap: put the same keys there (kubectl -n kube-system edit configmap kubelet-config) so the change survives.`,
    };
  }
  if (layout === 'kubespray') {
    return {
      setIn: `kubeAPIQPS in ${file} (kubespray: kubelet_config_extra_args)`,
      fix: `kubespray renders ${file}: set kubelet_config_extra_args: {kubeAPIQPS: ${qps}, kubeAPIBurst: ${burst}} in the inventory's group_vars and re-run the playbook; to try it first, ${verb} ${keys} in ${file} and ${restartOf(layout)}.`,
    };
  }
  return { setIn: `kubeAPIQPS in ${file}`, fix: `In ${file} ${verb} ${keys}, then ${restartOf(layout)}.` };
}

/** The location for the current source of kubeAPIQPS (`qps`), with the values to write. */
export function qpsLocation(
  layout: KubeletLayout,
  command: KubeletCommand,
  current: Effective,
  configFile: string | undefined,
  suggested: { qps: number; burst: number },
): QpsLocation {
  const { qps, burst } = suggested;
  if (current.source.startsWith('flag:')) return flagFix(current.origin ?? command.source, qps, burst, layout);
  if (current.source !== 'default') return fileFix(current.source, qps, burst, layout, false);
  if ((layout === 'k3s' || layout === 'rke2') && command.implicitConfigDir) {
    const dropIn = `${command.implicitConfigDir}/50-kube-api-qps.conf`;
    return {
      setIn: `a new drop-in ${dropIn} (not set yet)`,
      fix: `Create ${dropIn} holding "apiVersion: kubelet.config.k8s.io/v1beta1", "kind: KubeletConfiguration", "kubeAPIQPS: ${qps}", "kubeAPIBurst: ${burst}" (or add kubelet-arg: ["kube-api-qps=${qps}", "kube-api-burst=${burst}"] to /etc/rancher/${layout}/config.yaml), then ${restartOf(layout)}.`,
    };
  }
  if (layout === 'k3s' || layout === 'rke2') return flagFix(`/etc/rancher/${layout}/config.yaml (kubelet-arg)`, qps, burst, layout);
  if (layout === 'microk8s' && !configFile) {
    return {
      setIn: `--kube-api-qps in ${command.source} (not set yet)`,
      fix: `Add the lines --kube-api-qps=${qps} and --kube-api-burst=${burst} to ${command.source} (kubelite reads the kubelet's flags from it), then ${restartOf(layout)}.`,
    };
  }
  if (configFile) {
    const fix = fileFix(configFile, qps, burst, layout, true);
    return { ...fix, setIn: `${fix.setIn} (not set yet)` };
  }
  return flagFix(command.source, qps, burst, layout);
}
