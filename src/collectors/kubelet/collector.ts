// kubelet facts: its effective API client limits (kubeAPIQPS/Burst), event and registry limits and
// image-pull parallelism — resolved from the running kubelet's own --config, --config-dir drop-ins and
// flags over its version's defaults — and the file an operator edits to change them on this layout.
import path from 'node:path';
import type { Collector } from '../collector.ts';
import type { FactSet } from '../../facts/fact-set.ts';
import type { HostRoot } from '../../host/host-root.ts';
import { listProcesses, parseFlags, type FlagMap } from '../../host/processes.ts';
import { pickComponentProcess } from '../../host/component-process.ts';
import { processExe } from '../../host/trust.ts';
import { configLayerFrom, KUBELET_BOOLEAN_FLAGS, KUBELET_FIELDS, mergeKubeletSettings, suggestedLimits, type ConfigLayer } from './config.ts';
import { findKubeletCommand, type KubeletCommand } from './command.ts';
import { detectKubeletVersion } from './version.ts';
import { detectLayout, qpsLocation } from './remediation.ts';
import { fileOf, lineIn, withLine } from '../file-lines.ts';

const FIELD_FACTS = KUBELET_FIELDS.map((field) => `kubelet.${field}`);

interface Layers {
  layers: ConfigLayer[];
  configFile?: string;
  dropIns: string[];
  /** Set when a file the kubelet reads could not be read or parsed: nothing can be decided. */
  blocker?: string;
}

function resolveAgainst(cwd: string, p: string): string {
  return path.posix.isAbsolute(p) ? path.posix.normalize(p) : path.posix.resolve(cwd, p);
}

async function readLayer(host: HostRoot, file: string, kind: ConfigLayer['kind'], named: string): Promise<ConfigLayer | string> {
  const text = await host.readText(file);
  if (!text.ok) {
    if (text.code === 'ENOENT') return `${named} names ${file}, which does not exist on this host; the kubelet cannot start with it — fix the path or create the file`;
    return `${text.reason}; run the advisor with read access to it (as root, or with the host's /var/lib/kubelet and /etc/kubernetes mounted)`;
  }
  try {
    return configLayerFrom(file, kind, text.text);
  } catch (error) {
    return `${file} is not valid YAML (${(error as Error).message.split('\n')[0]}); the kubelet would refuse it — fix the file`;
  }
}

async function readLayers(host: HostRoot, command: KubeletCommand, flags: FlagMap): Promise<Layers> {
  const result: Layers = { layers: [], dropIns: [] };
  const config = flags.get('config');
  if (config && config.value !== '') {
    result.configFile = resolveAgainst(command.cwd, config.value);
    const layer = await readLayer(host, result.configFile, 'config', `--config (${config.origin})`);
    if (typeof layer === 'string') return { ...result, blocker: layer };
    result.layers.push(layer);
  }
  const dirFlag = flags.get('config-dir');
  const dir = dirFlag && dirFlag.value !== '' ? resolveAgainst(command.cwd, dirFlag.value) : command.implicitConfigDir;
  if (dir) {
    const listing = await host.listDir(dir);
    if (!listing.ok && listing.code !== 'ENOENT') return { ...result, blocker: `${listing.reason}; the kubelet's --config-dir drop-ins cannot be read` };
    const names = (listing.ok ? listing.entries : []).filter((name) => name.endsWith('.conf')).sort();
    for (const name of names) {
      const layer = await readLayer(host, `${dir}/${name}`, 'drop-in', `--config-dir ${dir}`);
      if (typeof layer === 'string') return { ...result, blocker: layer };
      result.layers.push(layer);
      result.dropIns.push(`${dir}/${name}`);
    }
  }
  return result;
}

function setUnknownFields(facts: FactSet, reason: string): void {
  for (const key of [...FIELD_FACTS, 'kubelet.qpsSetIn', 'kubelet.qpsFix']) facts.unknown(key, reason);
}

/** Whether the running kubelet's binary was replaced on disk since it started (restart pending): from its /proc/<pid>/exe. */
async function setBinaryReplaced(host: HostRoot, facts: FactSet, command: KubeletCommand): Promise<void> {
  if (command.via !== 'process' || command.pid === undefined) {
    return facts.unknown('kubelet.binaryReplaced', 'no running kubelet process was found to compare with its binary on disk');
  }
  const exe = await processExe(host, command.pid);
  const source = `/proc/${command.pid}/exe`;
  if ('unreadable' in exe) return facts.unknown('kubelet.binaryReplaced', `${exe.unreadable} (reading another process's binary needs CAP_SYS_PTRACE)`, source);
  facts.set('kubelet.binaryReplaced', exe.deleted, source, exe.deleted
    ? `the running kubelet's binary ${exe.path} was replaced or removed since it started: it runs the old one until restarted (restart pending)`
    : `the running kubelet runs ${exe.path} as it is on disk`);
}

const kubeletCollector: Collector = {
  name: 'kubelet',
  provides: [
    'kubelet.present', 'kubelet.binaryReplaced', 'kubelet.commandSource', 'kubelet.configLayout', 'kubelet.configFile', 'kubelet.configDropIns',
    'kubelet.version', ...FIELD_FACTS, 'kubelet.suggestedQPS', 'kubelet.suggestedBurst', 'kubelet.qpsSetIn', 'kubelet.qpsFix',
  ],
  async collect({ host, facts, cluster }) {
    const command = await findKubeletCommand(host);
    if (!command) {
      const refused = (await pickComponentProcess(host, await listProcesses(host), ['kubelet'])).refused;
      const ignored = refused.length > 0 ? `; not used: ${refused.join('; ')}` : '';
      facts.set('kubelet.present', false, '/proc, kubelet.service, /etc/rancher', `no kubelet process, systemd unit, k3s, rke2 or MicroK8s install found${ignored}`);
      return;
    }
    const ignored = command.refused.length > 0 ? `; not used: ${command.refused.join('; ')}` : '';
    const trusted = command.trust ? ` (${command.trust.why})` : '';
    facts.set('kubelet.present', true, command.trust?.level === 'inferred' ? 'inferred' : command.source, `found via ${command.via}${trusted}${ignored}`);
    await setBinaryReplaced(host, facts, command);
    facts.set('kubelet.commandSource', command.source, command.source, command.files.length > 0 ? `files: ${command.files.join(', ')}` : undefined);
    const layout = detectLayout(command);
    facts.set('kubelet.configLayout', layout, command.source);
    const flags = parseFlags(command.args, KUBELET_BOOLEAN_FLAGS);

    const version = await detectKubeletVersion(host, command, flags, cluster);
    if (version.version) facts.set('kubelet.version', version.version, version.source, version.hint.why);
    else facts.unknown('kubelet.version', version.hint.why, version.source);

    if (command.problems.length > 0) return setUnknownFields(facts, command.problems.join('; '));
    const layers = await readLayers(host, command, flags);
    facts.set('kubelet.configFile', layers.configFile ?? null, flags.get('config')?.origin ?? command.source);
    facts.set('kubelet.configDropIns', layers.dropIns, flags.get('config-dir')?.origin ?? command.implicitConfigDir ?? command.source);
    if (layers.blocker) return setUnknownFields(facts, layers.blocker);

    const { effective, undecided } = mergeKubeletSettings(layers.layers, flags, version.hint);
    for (const field of KUBELET_FIELDS) {
      const value = effective.get(field);
      if (value) facts.set(`kubelet.${field}`, value.value, value.source, value.detail);
      else facts.unknown(`kubelet.${field}`, undecided.get(field) ?? `${field} could not be decided`);
    }
    const maxPods = effective.get('maxPods')?.value;
    const suggested = suggestedLimits(typeof maxPods === 'number' ? maxPods : 110);
    const basis = `scaled to maxPods ${typeof maxPods === 'number' ? maxPods : 110} (1.5×/2× pods, at least 50/100; seed 000 used 150/200 for 100 pods)`;
    facts.set('kubelet.suggestedQPS', suggested.qps, 'inferred', basis);
    facts.set('kubelet.suggestedBurst', suggested.burst, 'inferred', basis);
    const qps = effective.get('kubeAPIQPS');
    if (!qps) {
      facts.unknown('kubelet.qpsSetIn', undecided.get('kubeAPIQPS') ?? 'kubeAPIQPS undecided');
      facts.unknown('kubelet.qpsFix', undecided.get('kubeAPIQPS') ?? 'kubeAPIQPS undecided');
      return;
    }
    const location = qpsLocation(layout, command, qps, layers.configFile, suggested);
    const file = qps.source.startsWith('flag:') ? fileOf(qps.origin ?? '') : qps.source === 'default' ? undefined : qps.source;
    const line = file ? await lineIn(host, file, qps.source.startsWith('flag:') ? /kube-api-qps/ : /^\s*"?kubeAPIQPS"?\s*:/) : undefined;
    facts.set('kubelet.qpsSetIn', file ? withLine(location.setIn, file, line) : location.setIn, qps.source, `layout: ${layout}`);
    facts.set('kubelet.qpsFix', file ? withLine(location.fix, file, line) : location.fix, 'inferred', `layout: ${layout}`);
  },
};

export default kubeletCollector;
