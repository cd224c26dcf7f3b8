// Finds how the kubelet runs: a live `kubelet` process (its cmdline and cwd), the k3s/rke2 process that
// embeds or launches it, or — for a snapshot without processes — the command systemd would start.
import type { HostRoot } from '../../host/host-root.ts';
import { argsFrom, listProcesses, processCwd, type SourcedArg } from '../../host/processes.ts';
import { pickComponentProcess, type JudgedProcess } from '../../host/component-process.ts';
import { attributeOrigins, reconstructUnitCommand } from '../../host/systemd-unit.ts';
import { oncePerScan } from '../../host/per-scan.ts';
import { componentArgs, detectRancher, rancherSource, type RancherInstall } from '../rancher.ts';
import { detectMicrok8s, microk8sComponentArgs, type Microk8sInstall } from '../microk8s.ts';

export interface KubeletCommand {
  via: 'process' | 'systemd' | 'k3s' | 'rke2' | 'microk8s';
  /** Where the command line was read: "/proc/1234/cmdline", the unit file, or the k3s config. */
  source: string;
  args: SourcedArg[];
  /** Host path relative --config paths resolve against. */
  cwd: string;
  pid?: number;
  /** The binary, when the command names it (argv[0] or ExecStart's first word). */
  binary?: string;
  /** The files that made up the command (unit, drop-ins, environment files, config.yaml). */
  files: string[];
  rancher?: RancherInstall;
  /** MicroK8s: the kubelet is a thread of kubelite, its flags in an args file. */
  microk8s?: Microk8sInstall;
  /** k3s/rke2 always start the kubelet with this drop-in directory when it exists. */
  implicitConfigDir?: string;
  problems: string[];
  /** How the live process was trusted (verified, or inferred from its name with the reasoning), and whether its binary was replaced since. */
  trust?: Pick<JudgedProcess, 'level' | 'why' | 'replaced'>;
  /** Processes named kubelet that were not used, with why. */
  refused: string[];
}

/** Once per scan: the kubelet and volumes collectors both need it. */
export const findKubeletCommand: (host: HostRoot) => Promise<KubeletCommand | undefined> = oncePerScan(findKubeletCommandIn);

async function findKubeletCommandIn(host: HostRoot): Promise<KubeletCommand | undefined> {
  const processes = await listProcesses(host);
  const unit = await reconstructUnitCommand(host, 'kubelet.service');
  const picked = await pickComponentProcess(host, processes, ['kubelet'], { accept: (p) => !p.argv.slice(1).includes('--version') });
  const { refused } = picked;
  const live = picked.chosen?.process;
  if (live && picked.chosen) {
    const { level, why, replaced } = picked.chosen;
    const trust = { level, why, ...(replaced ? { replaced } : {}) };
    const cmdline = `/proc/${live.pid}/cmdline`;
    const args = attributeOrigins(argsFrom(live.argv.slice(1), cmdline), unit?.args ?? []);
    const rancher = await detectRancher(host);
    return {
      via: 'process', source: cmdline, args, cwd: (await processCwd(host, live.pid)) ?? '/', pid: live.pid,
      binary: live.argv[0], files: unit?.files ?? [], problems: [], ...(rancher ? { rancher } : {}), trust, refused,
    };
  }
  const microk8s = await detectMicrok8s(host);
  if (microk8s && !unit) return { ...(await microk8sKubelet(host, microk8s)), refused };
  const rancher = await detectRancher(host);
  if (rancher && !unit) {
    const dropIns = `${rancher.dataDir}/agent/etc/kubelet.conf.d`;
    return {
      via: rancher.distro, source: rancherSource(rancher),
      args: componentArgs(rancher, 'kubelet'), cwd: '/', files: [...rancher.configFiles, ...(rancher.unit?.command.files ?? [])], rancher,
      ...(rancher.process ? { pid: rancher.process.pid, binary: rancher.process.argv[0] } : {}),
      ...((await host.exists(dropIns)) ? { implicitConfigDir: dropIns } : {}),
      problems: rancher.problems, refused,
    };
  }
  if (unit) {
    return {
      via: 'systemd', source: unit.files[0] as string, args: unit.args.slice(1), cwd: unit.workingDirectory,
      files: unit.files, problems: [], refused, ...(unit.args[0] ? { binary: unit.args[0].text } : {}),
    };
  }
  return undefined;
}

async function microk8sKubelet(host: HostRoot, microk8s: Microk8sInstall): Promise<Omit<KubeletCommand, 'refused'>> {
  const read = await microk8sComponentArgs(host, microk8s, 'kubelet');
  return {
    via: 'microk8s', source: read.file, args: 'args' in read ? read.args : [], cwd: '/', files: [read.file], microk8s,
    ...(microk8s.process ? { pid: microk8s.process.pid, binary: microk8s.process.argv[0] } : {}),
    problems: 'problem' in read ? [read.problem] : [],
  };
}
