// k3s and rke2 take the embedded components' flags as `<component>-arg` lists, in
// /etc/rancher/<distro>/config.yaml, its config.yaml.d/*.yaml, and on the server/agent command line:
// the running process's, or — with no process (a snapshot, a stopped service) — the one its systemd
// unit starts (k3s's install script writes every flag into ExecStart). Command-line values come
// after the config files', so they win, as they do in k3s.
import { parse as parseYaml } from 'yaml';
import type { HostRoot } from '../host/host-root.ts';
import { argsFrom, findProcesses, listProcesses, parseFlags, type HostProcess, type SourcedArg } from '../host/processes.ts';
import { oncePerScan } from '../host/per-scan.ts';
import { attributeOrigins, reconstructUnitCommand, type UnitCommand } from '../host/systemd-unit.ts';

export type RancherDistro = 'k3s' | 'rke2';

export interface RancherInstall {
  distro: RancherDistro;
  role: 'server' | 'agent' | 'unknown';
  process?: HostProcess;
  /** The systemd unit that starts it, when one is installed. */
  unit?: { name: string; command: UnitCommand };
  configFiles: string[];
  dataDir: string;
  /** Config-file entries, in order, that could not be parsed. */
  problems: string[];
  /** Everything from config files then the command line: `--kubelet-arg=…`, `--data-dir=…`. */
  args: SourcedArg[];
}

const MARKERS: Record<RancherDistro, string[]> = {
  k3s: ['/etc/rancher/k3s/config.yaml', '/var/lib/rancher/k3s/agent', '/etc/systemd/system/k3s.service', '/etc/systemd/system/k3s-agent.service'],
  rke2: ['/etc/rancher/rke2/config.yaml', '/var/lib/rancher/rke2/agent', '/usr/local/lib/systemd/system/rke2-server.service', '/usr/lib/systemd/system/rke2-server.service'],
};
/** Units the installers write: k3s's install script names the server unit k3s, rke2's tarball rke2-server. */
const UNITS: Record<RancherDistro, { server: string; agent: string }> = {
  k3s: { server: 'k3s.service', agent: 'k3s-agent.service' },
  rke2: { server: 'rke2-server.service', agent: 'rke2-agent.service' },
};

/** The unit of the running role, else the server's, else the agent's; its ExecStart must start the distro. */
async function rancherUnit(host: HostRoot, distro: RancherDistro, runningRole: string | undefined): Promise<RancherInstall['unit']> {
  const names = runningRole === 'agent' ? [UNITS[distro].agent] : runningRole === 'server' ? [UNITS[distro].server] : [UNITS[distro].server, UNITS[distro].agent];
  for (const name of names) {
    const command = await reconstructUnitCommand(host, name);
    const binary = command?.args[0]?.text ?? '';
    if (command && binary.split('/').at(-1) === distro) return { name, command };
  }
  return undefined;
}



function rancherProcess(processes: HostProcess[], distro: RancherDistro): HostProcess | undefined {
  return findProcesses(processes, [distro, `${distro}-server`, `${distro}-agent`]).find(
    (p) => p.comm.startsWith(distro) && ['server', 'agent'].includes(p.argv[1] ?? p.comm.split('-')[1] ?? ''),
  ) ?? findProcesses(processes, [distro]).find((p) => ['server', 'agent'].includes(p.argv[1] ?? ''));
}

/** `{kubelet-arg: [a=b]}` entries as `--kubelet-arg=a=b` arguments, each with its file as origin. */
function configArgs(doc: Record<string, unknown>, file: string): SourcedArg[] {
  const args: SourcedArg[] = [];
  for (const [rawKey, value] of Object.entries(doc)) {
    const key = rawKey.replace(/\+$/, '');
    const values = Array.isArray(value) ? value : [value];
    for (const item of values) {
      if (typeof item === 'string' || typeof item === 'number' || typeof item === 'boolean') {
        args.push({ text: `--${key}=${String(item)}`, origin: `${file} (${key})` });
      }
    }
  }
  return args;
}

export const detectRancher: (host: HostRoot) => Promise<RancherInstall | undefined> = oncePerScan(async (host) => detectRancherIn(host, await listProcesses(host)));

async function detectRancherIn(host: HostRoot, processes: HostProcess[]): Promise<RancherInstall | undefined> {
  for (const distro of ['k3s', 'rke2'] as const) {
    const process = rancherProcess(processes, distro);
    let marked = process !== undefined;
    for (const marker of MARKERS[distro]) if (!marked && (await host.exists(marker))) marked = true;
    if (!marked) continue;
    const install: RancherInstall = { distro, role: 'unknown', configFiles: [], problems: [], args: [], dataDir: `/var/lib/rancher/${distro}` };
    if (process) install.process = process;
    const dropDir = `/etc/rancher/${distro}/config.yaml.d`;
    const listing = await host.listDir(dropDir);
    const candidates = [`/etc/rancher/${distro}/config.yaml`, ...(listing.ok ? listing.entries.filter((e) => /\.ya?ml$/.test(e)).map((e) => `${dropDir}/${e}`) : [])];
    for (const file of candidates) {
      const text = await host.readText(file);
      if (!text.ok) continue;
      try {
        const doc: unknown = parseYaml(text.text, { logLevel: 'error' });
        install.configFiles.push(file);
        if (doc && typeof doc === 'object' && !Array.isArray(doc)) install.args.push(...configArgs(doc as Record<string, unknown>, file));
      } catch (error) {
        install.problems.push(`${file} is not valid YAML (${(error as Error).message.split('\n')[0]}); ${distro} would refuse to start with it`);
      }
    }
    const runningRole = process?.argv[1] ?? process?.comm.split('-')[1];
    const unit = await rancherUnit(host, distro, runningRole);
    if (unit) install.unit = unit;
    if (process) install.args.push(...attributeOrigins(argsFrom(process.argv.slice(2), `/proc/${process.pid}/cmdline`), unit?.command.args ?? []));
    else if (unit) install.args.push(...unit.command.args.slice(2));
    const role = runningRole ?? unit?.command.args[1]?.text;
    if (role === 'server' || role === 'agent') install.role = role;
    else if (await host.exists(`/var/lib/rancher/${distro}/server`)) install.role = 'server';
    const dataDir = parseFlags(install.args).get('data-dir')?.value ?? parseFlags(install.args).get('d')?.value;
    if (dataDir && dataDir.startsWith('/')) install.dataDir = dataDir;
    return install;
  }
  return undefined;
}

/** The `--<component>-arg=name=value` entries turned into `--name=value` arguments for that component. */
export function componentArgs(install: RancherInstall, component: 'kubelet' | 'kube-scheduler' | 'kube-controller-manager' | 'kube-apiserver'): SourcedArg[] {
  const flag = `--${component}-arg`;
  const result: SourcedArg[] = [];
  const args = install.args;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as SourcedArg;
    let value: string | undefined;
    if (arg.text.startsWith(`${flag}=`)) value = arg.text.slice(flag.length + 1);
    else if (arg.text === flag && args[i + 1] !== undefined) value = (args[++i] as SourcedArg).text;
    if (value !== undefined) result.push({ text: `--${value.replace(/^--?/, '')}`, origin: arg.origin });
  }
  return result;
}

/** Where a k3s/rke2 command line was read: the process, its unit, its config file, or only its data dir. */
export function rancherSource(rancher: RancherInstall): string {
  if (rancher.process) return `/proc/${rancher.process.pid}/cmdline`;
  return rancher.unit?.command.files[0] ?? rancher.configFiles[0] ?? rancher.dataDir;
}
