// kubelet facts: its effective API client limits (kubeAPIQPS/Burst), event and registry limits and
// image-pull parallelism — resolved from the running kubelet's own --config, --config-dir drop-ins and
// flags over its version's defaults — and the file an operator edits to change them on this layout.
import path from 'node:path';
import type { Collector } from '../collector.ts';
import type { FactSet } from '../../facts/fact-set.ts';
import type { HostRoot } from '../../host/host-root.ts';
import { listProcesses, parseFlags, type FlagMap } from '../../host/processes.ts';
import { pickComponentProcess } from '../../host/component-process.ts';
import { configLayerFrom, failCgroupV1From135, KUBELET_BOOLEAN_FLAGS, KUBELET_FIELDS, mergeKubeletSettings, suggestedLimits, type ConfigLayer, type MergeResult, type Setting } from './config.ts';
import { findKubeletCommand, type KubeletCommand } from './command.ts';
import { detectKubeletVersion } from './version.ts';
import { detectLayout, qpsLocation, restartOf, type KubeletLayout } from './remediation.ts';
import { fileOf, lineIn, withLine } from '../file-lines.ts';
import { driftOf, HOST_ONLY, NOT_READ, runningEffective, runningUnknown, runningValues } from './running.ts';
import { binaryPart, configPart, processStartedAt, recordRestartPending } from './restart-pending.ts';
import type { CollectorContext } from '../collector.ts';
import type { Effective, KubeletField } from './config.ts';

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
  for (const key of [...FIELD_FACTS, 'kubelet.failCgroupV1From135', 'kubelet.qpsSetIn', 'kubelet.qpsFix']) facts.unknown(key, reason);
}

/** kubelet.failCgroupV1From135: what an upgraded kubelet reads from these files (the cgroup v1 warning). */
function recordFailCgroupV1From135(facts: FactSet, merged: MergeResult): void {
  const from135 = failCgroupV1From135(merged);
  if ('unknown' in from135) facts.unknown('kubelet.failCgroupV1From135', from135.unknown);
  else facts.set('kubelet.failCgroupV1From135', from135.value, from135.source, from135.detail);
}

const RESTART_FACTS = ['kubelet.configDrift', 'kubelet.restartPending', 'kubelet.restartPendingWhy'];

/** kubelet.configz.read: whether the agent read the running configuration, and why not. */
function recordConfigzRead(facts: FactSet, cluster: CollectorContext['cluster']): void {
  const view = cluster?.kubeletConfig;
  if (!view) return facts.set('kubelet.configz.read', null, 'default', NOT_READ);
  facts.set('kubelet.configz.read', view.result, view.source, view.result === 'ok' ? `the running kubelet's configuration${view.apiVersion ? ` (${view.apiVersion})` : ''}` : view.reason);
}

/** The kubelet facts: the running values where /configz was read (files as evidence), else the files with why. */
function recordFields(facts: FactSet, effective: Map<KubeletField, Effective>, undecided: Map<KubeletField, string>, cluster: CollectorContext['cluster']): void {
  const view = cluster?.kubeletConfig;
  const running = view?.result === 'ok' && view.config ? runningValues(view.config) : undefined;
  for (const field of KUBELET_FIELDS) {
    const fromFiles = effective.get(field);
    if (running?.has(field) && view) {
      const value = runningEffective(field, running.get(field) as Setting, view, fromFiles);
      facts.set(`kubelet.${field}`, value.value, value.source, value.detail);
    } else if (fromFiles) facts.set(`kubelet.${field}`, fromFiles.value, fromFiles.source, view ? `${fromFiles.detail}; ${runningUnknown(view)}` : fromFiles.detail);
    else facts.unknown(`kubelet.${field}`, undecided.get(field) ?? `${field} could not be decided`);
  }
}

async function restartPending(ctx: CollectorContext, command: KubeletCommand, layout: KubeletLayout, files: string[], effective: Map<KubeletField, Effective> | undefined): Promise<void> {
  const { host, facts, cluster } = ctx;
  const view = cluster?.kubeletConfig;
  const running = view?.result === 'ok' && view.config ? runningValues(view.config) : undefined;
  const notRead = view ? view.reason ?? view.result : HOST_ONLY;
  const drift = running && effective ? await driftOf(host, running, effective) : { unknown: effective ? notRead : 'the kubelet\'s files could not be read' };
  const startedAt = command.via === 'process' && command.pid !== undefined ? await processStartedAt(host, command.pid) : undefined;
  const config = await configPart(host, drift, files, startedAt, command.pid !== undefined ? `/proc/${command.pid}/stat` : command.source);
  recordRestartPending(facts, config, await binaryPart(host, command, startedAt, cluster), restartOf(layout));
}

const kubeletCollector: Collector = {
  name: 'kubelet',
  provides: [
    'kubelet.present', 'kubelet.binaryReplaced', 'kubelet.configz.read', 'kubelet.restartCommand', ...RESTART_FACTS, 'kubelet.commandSource', 'kubelet.configLayout', 'kubelet.configFile', 'kubelet.configDropIns',
    'kubelet.version', ...FIELD_FACTS, 'kubelet.failCgroupV1From135', 'kubelet.suggestedQPS', 'kubelet.suggestedBurst', 'kubelet.qpsSetIn', 'kubelet.qpsFix',
  ],
  async collect(ctx) {
    const { host, facts, cluster } = ctx;
    recordConfigzRead(facts, cluster);
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
    facts.set('kubelet.commandSource', command.source, command.source, command.files.length > 0 ? `files: ${command.files.join(', ')}` : undefined);
    const layout = detectLayout(command);
    facts.set('kubelet.configLayout', layout, command.source);
    const flags = parseFlags(command.args, KUBELET_BOOLEAN_FLAGS);

    const version = await detectKubeletVersion(host, command, flags, cluster);
    if (version.version) facts.set('kubelet.version', version.version, version.source, version.hint.why);
    else facts.unknown('kubelet.version', version.hint.why, version.source);

    if (command.problems.length > 0) {
      await restartPending(ctx, command, layout, command.files, undefined);
      return setUnknownFields(facts, command.problems.join('; '));
    }
    const layers = await readLayers(host, command, flags);
    facts.set('kubelet.configFile', layers.configFile ?? null, flags.get('config')?.origin ?? command.source);
    facts.set('kubelet.configDropIns', layers.dropIns, flags.get('config-dir')?.origin ?? command.implicitConfigDir ?? command.source);
    const read = [...(layers.configFile ? [layers.configFile] : []), ...layers.dropIns, ...command.files];
    if (layers.blocker) {
      await restartPending(ctx, command, layout, read, undefined);
      return setUnknownFields(facts, layers.blocker);
    }

    const merged = mergeKubeletSettings(layers.layers, flags, version.hint);
    const { effective, undecided } = merged;
    recordFields(facts, effective, undecided, cluster);
    recordFailCgroupV1From135(facts, merged);
    await restartPending(ctx, command, layout, read, effective);
    const maxPods = facts.value('kubelet.maxPods');
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
