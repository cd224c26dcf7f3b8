// tuned facts: installed or not, profiles on disk, the active (or preset) profiles and what they
// include, profile mode, whether the daemon runs, and the profile tuned would recommend here.
import type { Collector, CollectorContext } from './collector.ts';
import type { HostRoot } from '../host/host-root.ts';
import { runHostCommand } from '../host/exec.ts';
import { parseIni, recommendProfile } from './tuned-recommend.ts';

const PROFILE_DIRS = ['/etc/tuned/profiles', '/etc/tuned', '/usr/lib/tuned/profiles', '/usr/lib/tuned'];
const INSTALL_MARKERS = ['/usr/sbin/tuned', '/usr/bin/tuned', '/usr/lib/tuned', '/etc/tuned/tuned-main.conf'];
const MAX_INCLUDE_DEPTH = 10;

/** The directory holding a profile's tuned.conf, searched the way tuned does (/etc before /usr/lib). */
async function findProfile(host: HostRoot, name: string): Promise<string | undefined> {
  for (const dir of PROFILE_DIRS) {
    if (await host.exists(`${dir}/${name}/tuned.conf`)) return `${dir}/${name}/tuned.conf`;
  }
  return undefined;
}

async function listProfiles(host: HostRoot): Promise<string[]> {
  const names = new Set<string>();
  for (const dir of PROFILE_DIRS) {
    const listing = await host.listDir(dir);
    for (const entry of listing.ok ? listing.entries : []) {
      if (await host.exists(`${dir}/${entry}/tuned.conf`)) names.add(entry);
    }
  }
  return [...names].sort();
}

/** `include=a, b` in [main]; "${f:…}" function calls cannot be resolved from files and are skipped. */
export function includesOf(tunedConf: string): string[] {
  const main = parseIni(tunedConf).find((section) => section.name === 'main');
  const include = main?.options.find(([key]) => key === 'include')?.[1] ?? '';
  return include
    .split(/[,;]/)
    .map((name) => name.trim())
    .filter((name) => name !== '' && !name.includes('${'));
}

/** Active profiles followed by everything they include, depth first, each once. */
async function profileChain(host: HostRoot, active: string[]): Promise<string[]> {
  const chain: string[] = [];
  const visit = async (name: string, depth: number): Promise<void> => {
    if (chain.includes(name) || depth > MAX_INCLUDE_DEPTH) return;
    chain.push(name);
    const file = await findProfile(host, name);
    const conf = file ? await host.readText(file) : undefined;
    for (const included of conf?.ok ? includesOf(conf.text) : []) await visit(included, depth + 1);
  };
  for (const name of active) await visit(name, 0);
  return chain;
}

async function daemonRunning(host: HostRoot): Promise<{ running: boolean; detail: string }> {
  const pidFile = await host.readValue('/run/tuned/tuned.pid');
  if (!pidFile.ok || !/^\d+$/.test(pidFile.text)) return { running: false, detail: 'no /run/tuned/tuned.pid' };
  const cmdline = await host.readText(`/proc/${pidFile.text}/cmdline`, { maxBytes: 4096 });
  const args = cmdline.ok ? cmdline.text.split('\0') : [];
  const running = args.some((arg) => arg.split('/').at(-1) === 'tuned');
  return { running, detail: running ? `pid ${pidFile.text}` : `pid ${pidFile.text} from /run/tuned/tuned.pid is not a tuned process` };
}

const tunedCollector: Collector = {
  name: 'tuned',
  provides: [
    'tuned.installed', 'tuned.profiles', 'tuned.activeProfiles', 'tuned.profileChain', 'tuned.mode',
    'tuned.running', 'tuned.recommendedProfile',
  ],
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
      for (const key of ['tuned.activeProfiles', 'tuned.profileChain', 'tuned.profiles']) facts.set(key, [], 'default', 'tuned is not installed');
      facts.set('tuned.mode', null, 'default', 'tuned is not installed');
      facts.set('tuned.running', false, 'default', 'tuned is not installed');
      return;
    }
    facts.set('tuned.profiles', await listProfiles(host), PROFILE_DIRS.join(', '));

    const activeFile = await host.readText('/etc/tuned/active_profile');
    const active = activeFile.ok ? activeFile.text.split(/\s+/).filter(Boolean) : [];
    if (activeFile.ok || activeFile.code === 'ENOENT') facts.set('tuned.activeProfiles', active, '/etc/tuned/active_profile');
    else facts.unknown('tuned.activeProfiles', activeFile.reason);
    if (activeFile.ok || activeFile.code === 'ENOENT') {
      facts.set('tuned.profileChain', await profileChain(host, active), '/etc/tuned/active_profile', 'active profiles and their include= chain');
    } else {
      facts.unknown('tuned.profileChain', activeFile.reason);
    }

    const mode = await host.readValue('/etc/tuned/profile_mode');
    // tuned reads an empty or missing profile_mode as "not recorded" and derives it from active_profile.
    const recorded = mode.ok ? mode.text : '';
    if (recorded === 'auto' || recorded === 'manual') facts.set('tuned.mode', recorded, mode.path);
    else if (recorded !== '') facts.unknown('tuned.mode', `/etc/tuned/profile_mode holds "${recorded.slice(0, 40)}", not auto or manual`, mode.path);
    else facts.set('tuned.mode', active.length > 0 ? 'manual' : 'auto', 'inferred', `${mode.ok ? 'empty' : 'no'} /etc/tuned/profile_mode: tuned derives it from active_profile`);

    const daemon = await daemonRunning(host);
    facts.set('tuned.running', daemon.running, '/run/tuned/tuned.pid', daemon.detail);
  },
};

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
