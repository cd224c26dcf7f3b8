// tuned facts: installed or not, the profiles on disk, what the daemon loads (active_profile in
// manual mode, its recommendation in auto mode, then /etc/tuned/post_loaded_profile), the merged
// profile's effective [cpu] settings with the file:line that set each, and whether the daemon runs.
import path from 'node:path';
import type { FactSet } from '../../facts/fact-set.ts';
import type { Collector, CollectorContext } from '../collector.ts';
import type { HostRoot } from '../../host/host-root.ts';
import { runHostCommand } from '../../host/exec.ts';
import { readProcessTable } from '../../host/processes.ts';
import { recommendProfile } from './recommend.ts';
import { listProfiles, loadProfiles, profileDirs } from './profiles.ts';
import { CPU_SETTING_FACTS, recordCpuSettings, recordCpuSettingsNone, recordCpuSettingsUnknown } from './cpu-settings.ts';

const INSTALL_MARKERS = ['/usr/sbin/tuned', '/usr/bin/tuned', '/usr/lib/tuned', '/etc/tuned/tuned-main.conf'];
const ACTIVE = '/etc/tuned/active_profile';
const POST_LOADED = '/etc/tuned/post_loaded_profile';

const isTunedDaemon = (argv: string[]): boolean => argv.slice(0, 3).some((arg) => path.posix.basename(arg) === 'tuned');

async function daemonRunning(host: HostRoot): Promise<{ running: boolean; source: string; detail: string } | { unknown: string }> {
  const pidFile = await host.readValue('/run/tuned/tuned.pid');
  if (pidFile.ok && /^\d+$/.test(pidFile.text)) {
    const cmdline = await host.readText(`/proc/${pidFile.text}/cmdline`, { maxBytes: 4096 });
    const running = cmdline.ok && isTunedDaemon(cmdline.text.split('\0'));
    return { running, source: '/run/tuned/tuned.pid', detail: running ? `pid ${pidFile.text}` : `pid ${pidFile.text} from /run/tuned/tuned.pid is not a tuned process` };
  }
  const table = await readProcessTable(host);
  const process = table.processes.find((p) => isTunedDaemon(p.argv));
  if (process) return { running: true, source: `/proc/${process.pid}/cmdline`, detail: `pid ${process.pid} (no /run/tuned/tuned.pid)` };
  if (!table.readable) return { unknown: 'no /run/tuned/tuned.pid and /proc is not readable, so a running tuned cannot be ruled out' };
  return { running: false, source: '/run/tuned/tuned.pid', detail: 'no /run/tuned/tuned.pid and no tuned process' };
}

async function readNames(host: HostRoot, file: string): Promise<{ names: string[] } | { unknown: string }> {
  const read = await host.readText(file, { maxBytes: 64 * 1024 });
  if (read.ok) return { names: read.text.split(/\s+/).filter(Boolean) };
  return read.code === 'ENOENT' ? { names: [] } : { unknown: read.reason };
}

async function recordMode(ctx: CollectorContext, active: string[]): Promise<'auto' | 'manual' | undefined> {
  const { host, facts } = ctx;
  const mode = await host.readValue('/etc/tuned/profile_mode');
  // tuned reads an empty or missing profile_mode as "not recorded" and derives it from active_profile.
  const recorded = mode.ok ? mode.text : '';
  if (recorded === 'auto' || recorded === 'manual') {
    facts.set('tuned.mode', recorded, mode.path);
    return recorded;
  }
  if (recorded !== '') {
    facts.unknown('tuned.mode', `/etc/tuned/profile_mode holds "${recorded.slice(0, 40)}", not auto or manual; TuneD refuses it`, mode.path);
    return undefined;
  }
  const derived = active.length > 0 ? 'manual' : 'auto';
  facts.set('tuned.mode', derived, 'inferred', `${mode.ok ? 'empty' : 'no'} /etc/tuned/profile_mode: tuned derives it from active_profile`);
  return derived;
}

/** What the daemon loads at start (tuned/daemon/daemon.py _get_startup_profile, _load_profiles). */
function namesToLoad(facts: CollectorContext['facts'], mode: 'auto' | 'manual', active: string[], postLoaded: string[]): { names: string[]; source: string; detail: string } {
  const post = postLoaded.length > 0 ? `, then the post-loaded ${postLoaded.join(' ')} (${POST_LOADED})` : '';
  if (mode === 'manual') return { names: [...active, ...postLoaded], source: ACTIVE, detail: `manual mode: ${ACTIVE}${post}` };
  const recommended = facts.value('tuned.recommendedProfile');
  if (typeof recommended === 'string') {
    return { names: [recommended, ...postLoaded], source: facts.get('tuned.recommendedProfile')?.source ?? 'inferred', detail: `auto mode: the daemon loads its recommendation at start${post}` };
  }
  return { names: [...active, ...postLoaded], source: 'inferred', detail: `auto mode, but the recommendation is unknown: ${ACTIVE} shows the last one applied${post}` };
}

function loadUnknown(facts: CollectorContext['facts'], reason: string, includingLoaded = true): void {
  for (const key of includingLoaded ? ['tuned.loadedProfiles', 'tuned.profileChain'] : ['tuned.profileChain']) facts.unknown(key, reason);
  recordCpuSettingsUnknown(facts, reason);
}

async function collectProfiles(ctx: CollectorContext): Promise<void> {
  const { host, facts } = ctx;
  const { dirs, source: dirSource } = await profileDirs(host);
  const known = await listProfiles(host, dirs);
  facts.set('tuned.profiles', known, dirSource);

  const active = await readNames(host, ACTIVE);
  const post = await readNames(host, POST_LOADED);
  if ('unknown' in active) facts.unknown('tuned.activeProfiles', active.unknown);
  else facts.set('tuned.activeProfiles', active.names, ACTIVE);
  if ('unknown' in post) facts.unknown('tuned.postLoadedProfile', post.unknown);
  else facts.set('tuned.postLoadedProfile', post.names[0] ?? null, POST_LOADED, post.names.length > 1 ? `${post.names.length} names: TuneD allows one and refuses the file` : undefined);
  const mode = await recordMode(ctx, 'unknown' in active ? [] : active.names);
  if ('unknown' in active || 'unknown' in post || mode === undefined || post.names.length > 1) {
    const reason = 'unknown' in active ? active.unknown
      : 'unknown' in post ? post.unknown
        : mode === undefined ? 'the profile mode is unknown'
          : `${POST_LOADED} names several profiles; TuneD allows only one and loads nothing`;
    return loadUnknown(facts, reason);
  }
  const load = namesToLoad(facts, mode, active.names, post.names);
  facts.set('tuned.loadedProfiles', load.names, load.source, load.detail);
  if (load.names.length === 0) {
    facts.set('tuned.profileChain', [], ACTIVE, 'no profile selected: the daemon runs without one');
    return recordCpuSettingsNone(facts, ACTIVE, 'no profile selected, so TuneD sets no CPU policy');
  }
  const missing = load.names.filter((name) => !known.includes(name));
  if (missing.length > 0) {
    return loadUnknown(facts, `Requested profile '${missing[0]}' doesn't exist in ${[...dirs].reverse().join(', ')}: TuneD refuses to load ${load.names.join(' ')}`, false);
  }
  const virtualized = facts.value('cpu.virtualized');
  const loaded = await loadProfiles({ host, dirs, virtualized: typeof virtualized === 'boolean' ? virtualized : undefined }, load.names);
  if (!loaded.ok) return loadUnknown(facts, loaded.reason, false);
  const files = loaded.profiles.map((p) => p.file);
  const skipped = loaded.skipped.length > 0 ? `; conditional include of ${loaded.skipped.join(', ')} skipped (no such profile)` : '';
  facts.set('tuned.profileChain', loaded.profiles.map((p) => p.name), load.source, `merged left to right, later wins: ${files.join(', ')}${skipped}`);
  await recordCpuSettings(facts, host, loaded.merged, files.at(-1) ?? ACTIVE);
}

const tunedCollector: Collector = {
  name: 'tuned',
  provides: [
    'tuned.installed', 'tuned.profiles', 'tuned.activeProfiles', 'tuned.postLoadedProfile', 'tuned.loadedProfiles',
    'tuned.profileChain', 'tuned.mode', 'tuned.running', 'tuned.recommendedProfile', 'tuned.fixKind', 'tuned.cpu.setsPolicy', ...Object.values(CPU_SETTING_FACTS),
  ],
  reads: ['cpu.cpufreq', 'cpu.policies', 'cpu.virtualized', 'cpu.hypervisor'],
  async collect(ctx) {
    const { host, facts } = ctx;
    let marker: string | undefined;
    for (const candidate of INSTALL_MARKERS) {
      if (await host.exists(candidate)) {
        marker = candidate;
        break;
      }
    }
    facts.set('tuned.installed', marker !== undefined, marker ?? INSTALL_MARKERS.join(', '));
    await collectRecommendation(ctx, marker !== undefined);
    if (!marker) {
      for (const key of ['tuned.activeProfiles', 'tuned.loadedProfiles', 'tuned.profileChain', 'tuned.profiles']) facts.set(key, [], 'default', 'tuned is not installed');
      for (const key of ['tuned.mode', 'tuned.postLoadedProfile']) facts.set(key, null, 'default', 'tuned is not installed');
      facts.set('tuned.running', false, 'default', 'tuned is not installed');
      return recordCpuSettingsNone(facts, 'default', 'tuned is not installed');
    }
    await collectProfiles(ctx);
    const daemon = await daemonRunning(host);
    if ('unknown' in daemon) facts.unknown('tuned.running', daemon.unknown);
    else facts.set('tuned.running', daemon.running, daemon.source, daemon.detail);
    recordFixKind(facts);
  },
};

/**
 * tuned.fixKind — which fix fits: `start` (the daemon is stopped but the profiles it would load already
 * include what tuned recommends here, e.g. virtual-guest on a VM), `profileAndStart`, or `profile`.
 */
function recordFixKind(facts: FactSet): void {
  const running = facts.value('tuned.running');
  const loaded = facts.value('tuned.loadedProfiles');
  const recommended = facts.value('tuned.recommendedProfile');
  if (running === true) return facts.set('tuned.fixKind', 'profile', 'inferred', 'the daemon runs: only the profile can be wrong');
  if (running !== false) return facts.unknown('tuned.fixKind', 'whether the tuned daemon runs is unknown');
  if (!Array.isArray(loaded) || typeof recommended !== 'string') return facts.unknown('tuned.fixKind', 'the loaded or the recommended profile is unknown');
  const chain = facts.value('tuned.profileChain');
  const has = Array.isArray(chain) && (chain as unknown[]).includes(recommended);
  facts.set('tuned.fixKind', has ? 'start' : 'profileAndStart', 'inferred', has
    ? `the daemon is stopped; its profiles (${(chain as string[]).join(', ')}) already include ${recommended}, which tuned recommends here`
    : `the daemon is stopped and its profiles do not include ${recommended}, which tuned recommends here`);
}

async function collectRecommendation(ctx: CollectorContext, installed: boolean): Promise<void> {
  const { host, facts } = ctx;
  if (installed && host.isRealRoot && process.getuid?.() === 0) {
    const adm = await runHostCommand(host, 'tuned-adm', ['recommend'], { timeoutMs: 10_000 });
    const profile = adm.ok ? adm.stdout.trim().split('\n').at(-1)?.trim() : undefined;
    if (profile) {
      facts.set('tuned.recommendedProfile', profile, adm.source);
      return;
    }
  }
  const virtualized = facts.value('cpu.virtualized');
  const hypervisor = facts.value('cpu.hypervisor');
  const virt = virtualized === undefined ? undefined : virtualized === true ? String(hypervisor ?? 'unidentified') : '';
  const result = await recommendProfile({ host, virt }, installed);
  if ('unknown' in result) facts.unknown('tuned.recommendedProfile', result.unknown);
  else if (installed) facts.set('tuned.recommendedProfile', result.profile, result.file);
  else facts.set('tuned.recommendedProfile', result.profile, 'inferred', "tuned is not installed; tuned's shipped recommend rules applied to this host");
}

export default tunedCollector;
