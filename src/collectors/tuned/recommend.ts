// The profile tuned's own `recommend` would choose, computed from its rule files instead of running
// tuned-adm (which needs root for virt-what and is a host binary a pod does not have).
import type { HostRoot } from '../../host/host-root.ts';
import { listProcesses } from '../../host/processes.ts';
import { parseIni } from './ini.ts';

/** tuned's shipped recommend.d/50-tuned.conf, used when tuned itself is not installed. */
export const SHIPPED_RULES = `
[atomic-host]
virt=
system=.*atomic.*
[atomic-guest]
virt=.+
system=.*atomic.*
[throughput-performance]
virt=
system=.*(computenode|server).*
[virtual-guest]
virt=.+
[balanced]
`;

const CHASSIS_TYPES = [
  '', 'Other', 'Unknown', 'Desktop', 'Low Profile Desktop', 'Pizza Box', 'Mini Tower', 'Tower', 'Portable', 'Laptop',
  'Notebook', 'Hand Held', 'Docking Station', 'All In One', 'Sub Notebook', 'Space-saving', 'Lunch Box',
  'Main Server Chassis', 'Expansion Chassis', 'Sub Chassis', 'Bus Expansion Chassis', 'Peripheral Chassis',
  'RAID Chassis', 'Rack Mount Chassis', 'Sealed-case PC', 'Multi-system', 'CompactPCI', 'AdvancedTCA', 'Blade',
  'Blade Enclosing', 'Tablet', 'Convertible', 'Detachable', 'IoT Gateway', 'Embedded PC', 'Mini PC', 'Stick PC',
];

export interface RecommendInputs {
  host: HostRoot;
  /** What virt-what would print: "" on bare metal, the hypervisor otherwise; undefined when unknown. */
  virt: string | undefined;
}

export type Recommendation = { profile: string; file: string } | { unknown: string };

/** Python's re.match: anchored at the start, dot matches newlines; an empty pattern means "empty". */
function matches(pattern: string, subject: string, flags = 's'): boolean {
  try {
    return new RegExp(`^(?:${pattern === '' ? '$' : pattern})`, flags).test(subject);
  } catch {
    return false;
  }
}

/** true, false, or why it cannot be told. */
async function optionMatches(inputs: RecommendInputs, key: string, pattern: string): Promise<boolean | string> {
  const { host } = inputs;
  if (key === 'virt') return inputs.virt === undefined ? 'needs to know whether this is a VM' : matches(pattern, inputs.virt);
  if (key === 'system') {
    const cpe = await systemCpe(host);
    return typeof cpe === 'string' ? matches(pattern, cpe) : cpe.unknown;
  }
  if (key.startsWith('/')) {
    const file = await host.readText(key);
    return file.ok && matches(pattern, file.text);
  }
  if (key === 'chassis_type') {
    const id = await host.readValue('/sys/devices/virtual/dmi/id/chassis_type');
    return id.ok && matches(pattern, CHASSIS_TYPES[Number(id.text)] ?? '', 'si');
  }
  if (key.startsWith('process')) return anyProcessMatches(host, pattern);
  // syspurpose_role needs the subscription-manager Python module; without it tuned matches "".
  if (key === 'syspurpose_role') return matches(pattern, '', 'si');
  return false;
}

/**
 * What TuneD matches `system=` against: /etc/system-release-cpe only, read as "" when absent
 * (tuned/utils/profile_recommender.py). Absent under the real root, or under a root that holds the
 * host's /etc (its os-release is there), it is "". Under a root without /etc (the DaemonSet mounts
 * only parts of it) absence proves nothing: a Red Hat family release ships the file, so there it is
 * unknown; other distributions ship none, so "" is inferred.
 */
async function systemCpe(host: HostRoot): Promise<string | { unknown: string }> {
  const cpe = await host.readText('/etc/system-release-cpe');
  if (cpe.ok) return cpe.text;
  if (cpe.code !== 'ENOENT') return { unknown: `needs /etc/system-release-cpe (${cpe.reason})` };
  if (host.isRealRoot || (await host.exists('/etc/os-release'))) return '';
  const osRelease = await host.readText('/usr/lib/os-release', { maxBytes: 64 * 1024 });
  const field = (name: string): string => (osRelease.ok ? new RegExp(`^${name}=("?)([^"\n]*)\\1$`, 'm').exec(osRelease.text)?.[2] ?? '' : '');
  if (/\b(rhel|fedora|centos)\b/.test(`${field('ID')} ${field('ID_LIKE')}`)) {
    return { unknown: `needs /etc/system-release-cpe, which TuneD matches system= against and a Red Hat family release ships, but the host root ${host.root} holds no /etc to tell (mount it read-only to decide)` };
  }
  return '';
}

async function anyProcessMatches(host: HostRoot, pattern: string): Promise<boolean> {
  return (await listProcesses(host)).some((p) => matches(pattern, p.argv.join(' '), ''));
}

async function firstMatch(inputs: RecommendInputs, text: string, file: string): Promise<Recommendation | undefined> {
  for (const section of parseIni(text)) {
    let verdict: boolean | string = true;
    for (const { key, value: pattern } of section.options) {
      const result = await optionMatches(inputs, key, pattern);
      if (result !== true) {
        verdict = result;
        break;
      }
    }
    if (typeof verdict === 'string') return { unknown: `${file} [${section.name}] ${verdict}` };
    if (verdict) return { profile: section.name.replace(/,[^,]*$/, ''), file };
  }
  return undefined;
}

/** /etc/tuned/recommend.conf, then recommend.d files from /usr/lib and /etc merged by name (/etc wins), sorted. */
export async function recommendProfile(inputs: RecommendInputs, tunedInstalled: boolean): Promise<Recommendation> {
  const { host } = inputs;
  if (!tunedInstalled) return (await firstMatch(inputs, SHIPPED_RULES, 'tuned defaults')) ?? { profile: 'balanced', file: 'tuned defaults' };
  const files: string[] = ['/etc/tuned/recommend.conf'];
  const byName = new Map<string, string>();
  for (const dir of ['/usr/lib/tuned/recommend.d', '/etc/tuned/recommend.d']) {
    const listing = await host.listDir(dir);
    for (const name of listing.ok ? listing.entries : []) byName.set(name, `${dir}/${name}`);
  }
  files.push(...[...byName.keys()].sort().map((name) => byName.get(name) as string));
  for (const file of files) {
    const read = await host.readText(file);
    if (!read.ok) continue;
    const found = await firstMatch(inputs, read.text, file);
    if (found) return found;
  }
  return { profile: 'balanced', file: 'tuned default (no rule matched)' };
}
