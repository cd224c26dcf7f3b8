// What the merged profile's [cpu] unit makes TuneD's cpu plugin do (tuned/plugins/plugin_cpu.py):
// of "a|b" alternatives the plugin applies the first this host offers (governor: the cpufreq
// policy's scaling_available_governors; EPB: a value the kernel accepts; EPP: the policy's
// energy_performance_available_preferences). Each resolved value keeps the file:line that set it.
import type { FactSet } from '../../facts/fact-set.ts';
import type { HostRoot } from '../../host/host-root.ts';
import type { Profile, ProfileUnit, SetBy } from './profiles.ts';

export const CPU_SETTING_FACTS = {
  governor: 'tuned.cpu.governor',
  energy_perf_bias: 'tuned.cpu.energyPerfBias',
  energy_performance_preference: 'tuned.cpu.energyPerformancePreference',
  min_perf_pct: 'tuned.cpu.minPerfPct',
  force_latency: 'tuned.cpu.forceLatency',
} as const;
type CpuOption = keyof typeof CPU_SETTING_FACTS;

/** The kernel's EPB names (arch/x86/kernel/cpu/intel_epb.c) and the numbers TuneD shows as them. */
const EPB_NAMES = ['performance', 'balance-performance', 'normal', 'balance-power', 'power'];
const EPB_NUMBERS: Record<number, string> = { 0: 'performance', 4: 'balance-performance', 6: 'normal', 8: 'balance-power', 15: 'power' };
const EPP_NAMES = ['default', 'performance', 'balance_performance', 'balance_power', 'power'];
const POLICY0 = '/sys/devices/system/cpu/cpufreq/policy0';

interface Resolved {
  value: string | number | null;
  detail: string;
  /** Set when the value is a guess (the host's offer is unknown): the fact's source is then "inferred". */
  inferred?: boolean;
}

const at = (set: SetBy): string => `${set.file}:${set.line}`;
const alternativesOf = (value: string): string[] => value.split('|').map((v) => v.trim()).filter(Boolean);

function governorOf(set: SetBy, facts: FactSet): Resolved {
  const alternatives = alternativesOf(set.value);
  const cpufreq = facts.value('cpu.cpufreq');
  const policies = facts.value('cpu.policies');
  const offered = Array.isArray(policies) ? [...new Set(policies.flatMap((p) => ((p as { availableGovernors?: string[] }).availableGovernors ?? [])))] : [];
  const written = `governor=${set.value} (${at(set)})`;
  if (cpufreq === true && offered.length > 0) {
    const applied = alternatives.find((governor) => offered.includes(governor)) ?? null;
    const passed = alternatives.slice(0, applied === null ? alternatives.length : alternatives.indexOf(applied));
    const why = passed.length > 0 ? `; ${passed.join(', ')} not offered here (${offered.join(' ')})` : '';
    return { value: applied, detail: applied === null ? `${written}: none of them is offered here (${offered.join(' ')}), so TuneD leaves the governor alone` : `${written}${why}` };
  }
  const first = alternatives[0] ?? null;
  if (cpufreq === false) return { value: first, detail: `${written}; this host has no cpufreq, so there is nothing to set` };
  return { value: first, detail: `${written}; the governors this host offers are not known, so the first alternative is assumed`, inferred: true };
}

function epbOf(set: SetBy): Resolved {
  for (const alternative of alternativesOf(set.value)) {
    const number = /^\d+$/.test(alternative) ? Number(alternative) : undefined;
    if (number !== undefined && number <= 15) return { value: EPB_NUMBERS[number] ?? String(number), detail: `energy_perf_bias=${set.value} (${at(set)})` };
    if (EPB_NAMES.includes(alternative)) return { value: alternative, detail: `energy_perf_bias=${set.value} (${at(set)})` };
  }
  return { value: null, detail: `energy_perf_bias=${set.value} (${at(set)}): no value the kernel accepts` };
}

async function eppOf(set: SetBy, host: HostRoot): Promise<Resolved> {
  const available = await host.readValue(`${POLICY0}/energy_performance_available_preferences`);
  const offered = available.ok ? available.text.split(/\s+/).filter(Boolean) : EPP_NAMES;
  const applied = alternativesOf(set.value).find((epp) => offered.includes(epp)) ?? null;
  const where = available.ok ? `${POLICY0}/energy_performance_available_preferences` : 'the kernel\'s EPP names';
  return { value: applied, detail: `energy_performance_preference=${set.value} (${at(set)}), checked against ${where}` };
}

/** ${name} from the merged [variables] unit, each value expanded with the ones before it. */
function expandVariables(value: string, variables: Map<string, SetBy> | undefined): string {
  if (!variables) return value;
  const known = new Map<string, string>();
  for (const [name, set] of variables) if (name !== 'include') known.set(name, set.value.replace(/\$\{(\w+)\}/g, (all, ref: string) => known.get(ref) ?? all));
  return value.replace(/\$\{(\w+)\}/g, (all, name: string) => known.get(name) ?? all);
}

/** The enabled unit the cpu plugin runs for every CPU: [cpu] itself, else the first unit of type cpu. */
export function cpuUnitOf(merged: Profile): { unit: ProfileUnit | undefined; others: string[] } {
  const units = [...merged.units.values()].filter((unit) => unit.type === 'cpu' && unit.enabled);
  const unit = units.find((u) => u.name === 'cpu') ?? units[0];
  return { unit, others: units.filter((u) => u !== unit).map((u) => `[${u.name}] devices=${u.devices}`) };
}

/** Whether the merged profile sets a CPU policy at all (governor, EPP or EPB): the tuned-profile rule's want line follows it. */
const POLICY_OPTIONS = ['governor', 'energy_performance_preference', 'energy_perf_bias'];

export async function recordCpuSettings(facts: FactSet, host: HostRoot, merged: Profile, chainSource: string): Promise<void> {
  const { unit, others } = cpuUnitOf(merged);
  const sets = POLICY_OPTIONS.filter((option) => unit?.options.get(option));
  facts.set('tuned.cpu.setsPolicy', sets.length > 0, chainSource, sets.length > 0 ? `the merged profile ${merged.name} sets ${sets.join(', ')}` : `the merged profile ${merged.name} sets no governor, EPP or EPB: the CPU policy is the kernel's (rule cpu-governor)`);
  const variables = merged.units.get('variables')?.options;
  const note = others.length > 0 ? `; other cpu units apply to some CPUs: ${others.join(', ')}` : '';
  for (const [option, key] of Object.entries(CPU_SETTING_FACTS) as [CpuOption, string][]) {
    const raw = unit?.options.get(option);
    if (!raw) {
      facts.set(key, null, chainSource, `${unit ? `[${unit.name}] does not set ${option}` : 'no enabled [cpu] unit'} in the merged profile ${merged.name}${note}`);
      continue;
    }
    const set = { ...raw, value: expandVariables(raw.value, variables) };
    let resolved: Resolved;
    if (option === 'governor') resolved = governorOf(set, facts);
    else if (option === 'energy_perf_bias') resolved = epbOf(set);
    else if (option === 'energy_performance_preference') resolved = await eppOf(set, host);
    else if (option === 'min_perf_pct') resolved = { value: /^\d+$/.test(set.value) ? Number(set.value) : set.value, detail: `min_perf_pct=${set.value} (${at(set)}); intel_pstate only` };
    else resolved = { value: set.value, detail: `force_latency=${set.value} (${at(set)})` };
    facts.set(key, resolved.value, resolved.inferred ? 'inferred' : at(set), `${resolved.detail}${note}`);
  }
}

export function recordCpuSettingsUnknown(facts: FactSet, reason: string): void {
  for (const key of Object.values(CPU_SETTING_FACTS)) facts.unknown(key, reason);
  facts.unknown('tuned.cpu.setsPolicy', reason);
}

export function recordCpuSettingsNone(facts: FactSet, source: string, why: string): void {
  for (const key of Object.values(CPU_SETTING_FACTS)) facts.set(key, null, source, why);
  facts.set('tuned.cpu.setsPolicy', false, source, why);
}
