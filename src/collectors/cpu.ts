// CPU facts: model, whether this is a VM (and which hypervisor), the cpufreq policies with their
// driver, governor and EPP, pstate driver status, boost, and the cpuidle driver's deepest state.
import type { Collector, CollectorContext } from './collector.ts';
import type { HostRoot } from '../host/host-root.ts';
import { collectIdentity } from './cpu-identity.ts';

export { hypervisorFromDmi, parseCpuinfo } from './cpu-identity.ts';

const CPU_SYSFS = '/sys/devices/system/cpu';

export interface CpufreqPolicy {
  policy: string;
  /** Host path of the policy directory. */
  path: string;
  cpus: string;
  driver: string | null;
  governor: string | null;
  availableGovernors: string[];
  epp: string | null;
  cpuinfoMaxKHz: number | null;
  scalingMaxKHz: number | null;
}

async function readOptional(host: HostRoot, path: string): Promise<string | null> {
  const read = await host.readValue(path);
  return read.ok ? read.text : null;
}

/** A sysfs integer; anything else (including digits too long to be exact) is null. */
function toNumber(text: string | null): number | null {
  if (text === null || !/^\d+$/.test(text)) return null;
  const value = Number(text);
  return Number.isSafeInteger(value) ? value : null;
}

/** ".../cpufreq/policy2" → "policy2"; the old per-CPU ".../cpu2/cpufreq" → "cpu2". */
function policyName(policyPath: string): string {
  const parts = policyPath.split('/');
  return (parts.at(-1) === 'cpufreq' ? parts.at(-2) : parts.at(-1)) ?? policyPath;
}

async function readPolicies(host: HostRoot): Promise<{ glob: string; policies: CpufreqPolicy[] }> {
  let dir = `${CPU_SYSFS}/cpufreq`;
  const listing = await host.listDir(dir);
  let names = listing.ok ? listing.entries.filter((entry) => /^policy\d+$/.test(entry)) : [];
  const paths = names.map((name) => `${dir}/${name}`);
  if (names.length === 0) {
    // Kernels before 4.x had no policyN directories: each cpuN/cpufreq is its own.
    const cpus = await host.listDir(CPU_SYSFS);
    names = cpus.ok ? cpus.entries.filter((entry) => /^cpu\d+$/.test(entry)) : [];
    dir = CPU_SYSFS;
    paths.length = 0;
    for (const cpu of names) {
      if (await host.exists(`${CPU_SYSFS}/${cpu}/cpufreq/scaling_governor`)) paths.push(`${CPU_SYSFS}/${cpu}/cpufreq`);
    }
  }
  const policies: CpufreqPolicy[] = [];
  for (const policyPath of paths) {
    const read = (file: string) => readOptional(host, `${policyPath}/${file}`);
    const [driver, governor, available, epp, cpus, cpuinfoMax, scalingMax] = await Promise.all([
      read('scaling_driver'),
      read('scaling_governor'),
      read('scaling_available_governors'),
      read('energy_performance_preference'),
      read('affected_cpus'),
      read('cpuinfo_max_freq'),
      read('scaling_max_freq'),
    ]);
    policies.push({
      policy: policyName(policyPath),
      path: policyPath,
      cpus: cpus ?? '',
      driver: driver || null,
      governor: governor || null,
      availableGovernors: available ? available.split(/\s+/).filter(Boolean) : [],
      epp: epp || null,
      cpuinfoMaxKHz: toNumber(cpuinfoMax),
      scalingMaxKHz: toNumber(scalingMax),
    });
  }
  const glob = dir === CPU_SYSFS ? `${CPU_SYSFS}/cpu*/cpufreq` : `${dir}/policy*`;
  return { glob, policies };
}

/** The common value across policies, "mixed" when they differ, null when none has one. */
export function summarize(values: (string | null)[]): string | null {
  const present = [...new Set(values.filter((value): value is string => value !== null))];
  if (present.length === 0) return null;
  return present.length === 1 ? (present[0] as string) : 'mixed';
}

const CPUFREQ_FACTS = ['cpu.cpufreq', 'cpu.policies', 'cpu.driver', 'cpu.governor', 'cpu.epp', 'cpu.pstateStatus', 'cpu.activePstateMode', 'cpu.boost', 'cpu.scalingCapped'];

const cpuCollector: Collector = {
  name: 'cpu',
  provides: [
    'cpu.model', 'cpu.count', 'cpu.virtualized', 'cpu.hypervisor', 'cpu.cpufreq', 'cpu.driver', 'cpu.governor',
    'cpu.policies', 'cpu.epp', 'cpu.pstateStatus', 'cpu.activePstateMode', 'cpu.boost', 'cpu.scalingCapped', 'cpu.idleDriver',
    'cpu.idleGovernor', 'cpu.deepestIdleLatencyUs',
  ],
  async collect(ctx) {
    await collectIdentity(ctx);
    await collectCpufreq(ctx);
    await collectCpuidle(ctx);
  },
};

async function collectCpufreq(ctx: CollectorContext): Promise<void> {
  const { host, facts } = ctx;
  const { glob, policies } = await readPolicies(host);
  const cpuDir = policies.length === 0 ? await host.listDir(CPU_SYSFS) : undefined;
  if (cpuDir && !cpuDir.ok) {
    // No CPU directory at all is a tree that lacks sysfs, not a kernel without cpufreq.
    const reason = cpuDir.code === 'ENOENT'
      ? `${CPU_SYSFS} does not exist under this host root: whether the kernel controls CPU frequency cannot be told (mount the host's /sys)`
      : `${cpuDir.reason}: whether the kernel controls CPU frequency cannot be told`;
    for (const key of CPUFREQ_FACTS) facts.unknown(key, reason, CPU_SYSFS);
    return;
  }
  if (policies.length === 0) {
    const source = `${CPU_SYSFS}/cpufreq`;
    facts.set('cpu.cpufreq', false, source, 'no cpufreq policy: the kernel does not control CPU frequency here');
    for (const key of ['cpu.driver', 'cpu.governor', 'cpu.epp', 'cpu.pstateStatus', 'cpu.activePstateMode', 'cpu.boost', 'cpu.scalingCapped']) {
      facts.set(key, null, source);
    }
    facts.set('cpu.policies', [], source);
    return;
  }
  facts.set('cpu.cpufreq', true, glob);
  facts.set('cpu.policies', policies as unknown as Record<string, unknown>[], glob);
  facts.set('cpu.driver', summarize(policies.map((policy) => policy.driver)), `${glob}/scaling_driver`, describeSpread(policies, (policy) => policy.driver));
  const governorDetail = describeSpread(policies, (policy) => policy.governor);
  facts.set('cpu.governor', summarize(policies.map((policy) => policy.governor)), `${glob}/scaling_governor`, governorDetail);
  facts.set('cpu.epp', summarize(policies.map((policy) => policy.epp)), `${glob}/energy_performance_preference`, describeSpread(policies, (policy) => policy.epp));
  facts.set(
    'cpu.scalingCapped',
    policies.some((policy) => policy.cpuinfoMaxKHz !== null && policy.scalingMaxKHz !== null && policy.scalingMaxKHz < policy.cpuinfoMaxKHz),
    `${glob}/scaling_max_freq`,
  );

  const intel = await readOptional(host, `${CPU_SYSFS}/intel_pstate/status`);
  const amd = await readOptional(host, `${CPU_SYSFS}/amd_pstate/status`);
  if (intel) facts.set('cpu.pstateStatus', `intel_pstate:${intel}`, `${CPU_SYSFS}/intel_pstate/status`);
  else if (amd) facts.set('cpu.pstateStatus', `amd_pstate:${amd}`, `${CPU_SYSFS}/amd_pstate/status`);
  else facts.set('cpu.pstateStatus', null, `${CPU_SYSFS}/intel_pstate/status`);
  recordActiveMode(ctx, intel ? `intel_pstate:${intel}` : amd ? `amd_pstate:${amd}` : null, summarize(policies.map((policy) => policy.driver)));

  const noTurbo = await readOptional(host, `${CPU_SYSFS}/intel_pstate/no_turbo`);
  const boost = await readOptional(host, `${CPU_SYSFS}/cpufreq/boost`);
  if (noTurbo === '0' || noTurbo === '1') facts.set('cpu.boost', noTurbo === '0', `${CPU_SYSFS}/intel_pstate/no_turbo`);
  else if (boost === '0' || boost === '1') facts.set('cpu.boost', boost === '1', `${CPU_SYSFS}/cpufreq/boost`);
  else facts.set('cpu.boost', null, `${CPU_SYSFS}/cpufreq/boost`, 'the driver exposes no boost switch');
}

/**
 * Whether the driver picks P-states itself (intel_pstate or amd-pstate in active mode): there
 * "powersave" is the driver's own adaptive algorithm and EPP says how eagerly it ramps up, so the
 * governor's name alone does not say what it does. Without a status file the driver name tells
 * (intel_pstate and amd-pstate-epp are the active-mode names; passive mode shows as intel_cpufreq, amd-pstate).
 */
function recordActiveMode(ctx: CollectorContext, status: string | null, driver: string | null): void {
  const { facts } = ctx;
  if (status) {
    const [name, mode] = status.split(':') as [string, string];
    facts.set('cpu.activePstateMode', mode === 'active', `${CPU_SYSFS}/${name}/status`, `${name} in ${mode} mode`);
  } else if (driver === 'intel_pstate' || driver === 'amd-pstate-epp') {
    facts.set('cpu.activePstateMode', true, `${CPU_SYSFS}/cpufreq/policy*/scaling_driver`, `driver ${driver}: its active-mode name (no status file on this kernel)`);
  } else {
    facts.set('cpu.activePstateMode', false, `${CPU_SYSFS}/cpufreq/policy*/scaling_driver`, `driver ${driver ?? 'none'} follows its governor`);
  }
}

/** "performance on policy0-1, powersave on policy2-3" for a human; undefined when all agree. */
function describeSpread(policies: CpufreqPolicy[], pick: (policy: CpufreqPolicy) => string | null): string | undefined {
  const groups = new Map<string, string[]>();
  for (const policy of policies) {
    const value = pick(policy) ?? 'none';
    groups.set(value, [...(groups.get(value) ?? []), policy.policy]);
  }
  if (groups.size < 2) return undefined;
  return [...groups].map(([value, names]) => `${value} on ${names.join(',')}`).join('; ');
}

async function collectCpuidle(ctx: CollectorContext): Promise<void> {
  const { host, facts } = ctx;
  const base = `${CPU_SYSFS}/cpuidle`;
  const driver = await host.readValue(`${base}/current_driver`);
  if (driver.ok) facts.set('cpu.idleDriver', driver.text === 'none' ? null : driver.text, driver.path);
  else facts.unknown('cpu.idleDriver', driver.reason);
  let governor = await host.readValue(`${base}/current_governor_ro`);
  if (!governor.ok) governor = await host.readValue(`${base}/current_governor`);
  if (governor.ok) facts.set('cpu.idleGovernor', governor.text, governor.path);
  else facts.unknown('cpu.idleGovernor', governor.reason);

  const states = await host.listDir(`${CPU_SYSFS}/cpu0/cpuidle`);
  const latencies: number[] = [];
  for (const state of states.ok ? states.entries.filter((entry) => /^state\d+$/.test(entry)) : []) {
    const disabled = await readOptional(host, `${CPU_SYSFS}/cpu0/cpuidle/${state}/disable`);
    const latency = toNumber(await readOptional(host, `${CPU_SYSFS}/cpu0/cpuidle/${state}/latency`));
    if (latency !== null && disabled !== '1') latencies.push(latency);
  }
  if (latencies.length > 0) facts.set('cpu.deepestIdleLatencyUs', Math.max(...latencies), `${CPU_SYSFS}/cpu0/cpuidle/state*/latency`);
  else facts.set('cpu.deepestIdleLatencyUs', null, `${CPU_SYSFS}/cpu0/cpuidle`, 'no enabled idle state');
}

export default cpuCollector;
