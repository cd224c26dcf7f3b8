// TuneD's profile loader, locator and merger (tuned/profiles/{loader,locator,merger,unit}.py) over a
// host root: names are looked up in the profile directories (the later directory wins), each
// profile's include= is loaded before the profile itself ("-name" only if it exists; a file already
// loaded is skipped), ${f:virt_check:A:B} is resolved from whether this host is a VM, and the loaded
// profiles are merged left to right, unit by unit. Every option keeps the file and line that set it.
import path from 'node:path';
import type { HostRoot } from '../../host/host-root.ts';
import { parseIniStrict } from './ini.ts';

/** Highest priority first: /etc before /usr/lib, TuneD 2.24+'s profiles/ subdirectories before the older flat layout. */
export const DEFAULT_PROFILE_DIRS = ['/etc/tuned/profiles', '/etc/tuned', '/usr/lib/tuned/profiles', '/usr/lib/tuned'];
const MAX_PROFILES = 64;

export interface SetBy {
  value: string;
  file: string;
  line: number;
}

export interface ProfileUnit {
  name: string;
  type: string;
  enabled: boolean;
  replace: boolean;
  devices: string;
  cpuinfoRegex: string | null;
  unameRegex: string | null;
  drop: string[] | null;
  options: Map<string, SetBy>;
}

export interface Profile {
  name: string;
  file: string;
  options: Map<string, SetBy>;
  units: Map<string, ProfileUnit>;
}

export interface LoadContext {
  host: HostRoot;
  /** Highest priority first. */
  dirs: string[];
  /** What virt-what would say (true: a VM); undefined when unknown. */
  virtualized: boolean | undefined;
}

export type LoadResult =
  | { ok: true; profiles: Profile[]; merged: Profile; skipped: string[] }
  | { ok: false; reason: string };

const TRUE_VALUES = ['True', 'true', '1'];

function takeOption(options: Map<string, SetBy>, key: string): string | null {
  const found = options.get(key);
  options.delete(key);
  return found ? found.value : null;
}

/** tuned/profiles/unit.py: the unit's own keys are taken out of its options. */
function unitFrom(name: string, options: Map<string, SetBy>): ProfileUnit {
  const enabled = takeOption(options, 'enabled');
  const replace = takeOption(options, 'replace');
  const drop = takeOption(options, 'drop');
  return {
    name,
    type: takeOption(options, 'type') ?? name,
    enabled: enabled === null || TRUE_VALUES.includes(enabled),
    replace: replace !== null && TRUE_VALUES.includes(replace),
    drop: drop === null ? null : drop.split(/\b\s*[,;]\s*/),
    devices: takeOption(options, 'devices') ?? '*',
    cpuinfoRegex: takeOption(options, 'cpuinfo_regex'),
    unameRegex: takeOption(options, 'uname_regex'),
    options,
  };
}

/** Expands ${f:virt_check:VM:BARE} the way TuneD's function does; any other ${…} cannot be evaluated here. */
export function expandInclude(value: string, virtualized: boolean | undefined): { value: string } | { unknown: string } {
  let problem: string | undefined;
  const expanded = value.replace(/\$\{f:virt_check:([^:}]*):([^}]*)\}/g, (all, vm: string, bare: string) => {
    if (virtualized === undefined) problem = `${all} depends on whether this host is a VM, which is unknown`;
    return virtualized ? vm : bare;
  });
  if (problem) return { unknown: problem };
  const other = /\$\{[^}]*\}/.exec(expanded);
  if (other) return { unknown: `include=${value} uses ${other[0]}, which the advisor cannot evaluate` };
  return { value: expanded };
}

/** tuned/profiles/locator.py get_config: "" means skip (a "-name" that does not exist, or a file already loaded). */
async function locate(ctx: LoadContext, name: string, processed: Set<string>): Promise<string | '' | null> {
  const conditional = name.startsWith('-');
  const base = path.posix.basename(conditional ? name.slice(1) : name);
  let found: '' | null = null;
  for (const dir of ctx.dirs) {
    const file = path.posix.normalize(`${dir}/${base}/tuned.conf`);
    if (processed.has(file)) {
      found = '';
      continue;
    }
    if (base !== '' && (await ctx.host.exists(file))) return file;
  }
  return conditional && found === null ? '' : found;
}

async function readProfile(ctx: LoadContext, name: string, file: string): Promise<Profile | string> {
  const read = await ctx.host.readText(file);
  if (!read.ok) return read.reason;
  const parsed = parseIniStrict(read.text);
  if (!parsed.ok) return `${file}: ${parsed.reason}; TuneD refuses the profile ("Cannot parse")`;
  const profile: Profile = { name, file, options: new Map(), units: new Map() };
  for (const section of parsed.sections) {
    const options = new Map(section.options.map((o) => [o.key, { value: o.value, file, line: o.line }]));
    if (section.name === 'main') profile.options = options;
    else profile.units.set(section.name, unitFrom(section.name, options));
  }
  return profile;
}

async function loadInto(ctx: LoadContext, names: string[], profiles: Profile[], processed: Set<string>, skipped: string[]): Promise<string | undefined> {
  for (const name of names) {
    if (processed.size > MAX_PROFILES) return `more than ${MAX_PROFILES} profiles included`;
    const file = await locate(ctx, name, processed);
    if (file === '') {
      if (name.startsWith('-')) skipped.push(name.slice(1));
      continue;
    }
    if (file === null) return `Cannot find profile '${name}' in ${[...ctx.dirs].reverse().join(', ')} (TuneD refuses to load)`;
    processed.add(file);
    // TuneD keeps the "-" in the profile's name; the chain shows the profile that was found.
    const profile = await readProfile(ctx, name.replace(/^-/, ''), file);
    if (typeof profile === 'string') return profile;
    const include = profile.options.get('include');
    if (include) {
      profile.options.delete('include');
      const expanded = expandInclude(include.value, ctx.virtualized);
      if ('unknown' in expanded) return `${include.file}:${include.line}: ${expanded.unknown}`;
      const problem = await loadInto(ctx, expanded.value.split(/\s*[,;]\s*/), profiles, processed, skipped);
      if (problem) return problem;
    }
    profiles.push(profile);
  }
  return undefined;
}

/** tuned/profiles/merger.py _merge_two: units of the later profile update (or replace) the earlier ones. */
function mergeTwo(a: Profile, b: Profile): Profile {
  for (const [key, value] of b.options) a.options.set(key, value);
  for (const [name, unit] of b.units) {
    const existing = a.units.get(name);
    if (unit.replace || !existing) {
      a.units.set(name, { ...unit, options: new Map(unit.options) });
      continue;
    }
    existing.type = unit.type;
    existing.enabled = unit.enabled;
    existing.devices = unit.devices;
    if (unit.cpuinfoRegex !== null) existing.cpuinfoRegex = unit.cpuinfoRegex;
    if (unit.unameRegex !== null) existing.unameRegex = unit.unameRegex;
    for (const dropped of unit.drop ?? []) existing.options.delete(dropped);
    for (const [key, value] of unit.options) existing.options.set(key, value);
  }
  return a;
}

function copy(profile: Profile): Profile {
  const units = new Map([...profile.units].map(([name, unit]) => [name, { ...unit, options: new Map(unit.options) }]));
  return { ...profile, options: new Map(profile.options), units };
}

/** Loads the names the daemon would load (active profiles, then the post-loaded one) and merges them. */
export async function loadProfiles(ctx: LoadContext, names: string[]): Promise<LoadResult> {
  const safe = names.filter((name) => /^[a-zA-Z0-9_.-]+$/.test(name));
  if (safe.length === 0) return { ok: false, reason: 'No profile or invalid profiles were specified.' };
  const profiles: Profile[] = [];
  const skipped: string[] = [];
  const problem = await loadInto(ctx, safe, profiles, new Set(), skipped);
  if (problem) return { ok: false, reason: problem };
  const merged = profiles.map(copy).reduce(mergeTwo);
  return { ok: true, profiles, merged: { ...merged, name: safe.join(' ') }, skipped };
}

/** Profile names found in the directories (locator.list_profiles): the daemon refuses any other name. */
export async function listProfiles(host: HostRoot, dirs: string[]): Promise<string[]> {
  const names = new Set<string>();
  for (const dir of dirs) {
    const listing = await host.listDir(dir);
    for (const entry of listing.ok ? listing.entries : []) {
      if (await host.exists(`${dir}/${entry}/tuned.conf`)) names.add(entry);
    }
  }
  return [...names].sort();
}

/** profile_dirs in tuned-main.conf (lowest priority first there), else both layouts TuneD has used. */
export async function profileDirs(host: HostRoot): Promise<{ dirs: string[]; source: string }> {
  const main = await host.readText('/etc/tuned/tuned-main.conf');
  const line = main.ok ? /^\s*profile_dirs\s*=\s*(.+?)\s*$/m.exec(main.text)?.[1] : undefined;
  const dirs = line?.split(',').map((dir) => dir.trim()).filter((dir) => dir.startsWith('/'));
  if (dirs && dirs.length > 0) return { dirs: dirs.reverse(), source: '/etc/tuned/tuned-main.conf (profile_dirs)' };
  return { dirs: DEFAULT_PROFILE_DIRS, source: DEFAULT_PROFILE_DIRS.join(', ') };
}
