// Which CPU this is and whether it runs in a VM, on every architecture Linux prints /proc/cpuinfo
// for. Only x86 has a "hypervisor" CPU flag that every hypervisor sets, so only there does its
// absence mean bare metal; elsewhere DMI, /sys/hypervisor, the device tree, the platform line
// (ppc64, s390x) or a cpufreq driver a VM never has must say so, or the answer is unknown.
import type { CollectorContext } from './collector.ts';
import type { HostRoot } from '../host/host-root.ts';

const DMI = '/sys/devices/virtual/dmi/id';
const DEVICE_TREE = '/sys/firmware/devicetree/base';
/** cpufreq drivers that drive real clocks and regulators (described by the board's device tree or firmware). */
const HARDWARE_CPUFREQ_DRIVERS = [
  'cpufreq-dt', 'scpi-cpufreq', 'scmi-cpufreq', 'qcom-cpufreq-hw', 'mediatek-cpufreq', 'mediatek-cpufreq-hw',
  'sun50i-cpufreq-nvmem', 'imx6q-cpufreq', 'tegra194', 'tegra186', 'apple-cpufreq', 'raspberrypi-cpufreq',
];

export type CpuArch = 'x86' | 'arm' | 'ppc' | 's390' | 'mips' | 'loongarch' | 'riscv' | 'unknown';

export interface CpuinfoSummary {
  model?: string;
  /** Why the model reads as it does, when it is not a plain "model name" line. */
  modelDetail?: string;
  processors: number;
  /** Set when the count does not come from one "processor" line per CPU. */
  countDetail?: string;
  hypervisorFlag: boolean;
  vendor?: string;
  arch: CpuArch;
  /** ppc64 "platform" (pSeries under a hypervisor, PowerNV on bare metal). */
  platform?: string;
  /** ppc64 "model" (e.g. "IBM pSeries (emulated by qemu)"). */
  machineModel?: string;
  /** s390x: "version = FF" marks a z/VM or KVM guest CPU. */
  s390Version?: string;
}

interface Lines {
  first: Map<string, string>;
  processorLines: number;
}

function readLines(text: string): Lines {
  const first = new Map<string, string>();
  let processorLines = 0;
  for (const line of text.split('\n')) {
    const match = /^([^:]+?)\s*:\s*(.*)$/.exec(line);
    if (!match) continue;
    const [, key, value] = match as unknown as [string, string, string];
    if (key === 'processor') processorLines++;
    if (!first.has(key)) first.set(key, value.trim());
  }
  return { first, processorLines };
}

function archOf(first: Map<string, string>): CpuArch {
  if (first.has('CPU implementer')) return 'arm';
  if (first.get('vendor_id')?.startsWith('IBM/S390')) return 's390';
  if (first.has('flags') && first.has('vendor_id')) return 'x86';
  if (first.has('cpu model')) return 'mips';
  if (first.has('Model Name') || first.get('CPU Family')?.startsWith('Loongson')) return 'loongarch';
  if (first.has('platform') || first.has('timebase')) return 'ppc';
  if (first.has('isa') && (first.has('mmu') || first.has('uarch') || first.has('hart'))) return 'riscv';
  return 'unknown';
}

/** The model line each architecture's kernel prints, in the order they are tried. */
function modelOf(first: Map<string, string>, arch: CpuArch): { model?: string; detail?: string } {
  const named = first.get('model name') ?? first.get('Model Name') ?? first.get('cpu model') ?? (arch === 'ppc' ? first.get('cpu') : undefined) ?? first.get('uarch');
  if (named) return { model: named };
  const processor = first.get('Processor');
  if (processor && !/^\d+$/.test(processor)) return { model: processor };
  if (arch === 'arm') {
    const implementer = first.get('CPU implementer');
    const part = first.get('CPU part');
    return { model: `ARM implementer ${implementer} part ${part ?? '?'}`, detail: 'arm64 kernels print no model name: implementer and part as /proc/cpuinfo gives them' };
  }
  if (arch === 's390') {
    const machine = /machine = (\w+)/.exec(first.get('processor 0') ?? '')?.[1];
    if (machine) return { model: `${first.get('vendor_id')} machine ${machine}` };
  }
  return {};
}

export function parseCpuinfo(text: string): CpuinfoSummary {
  const { first, processorLines } = readLines(text);
  const arch = archOf(first);
  const { model, detail } = modelOf(first, arch);
  const flags = `${first.get('flags') ?? ''} ${first.get('Features') ?? ''}`;
  const summary: CpuinfoSummary = { processors: processorLines, hypervisorFlag: /(?:^|\s)hypervisor(?:\s|$)/.test(flags), arch };
  if (model !== undefined) summary.model = model;
  if (detail !== undefined) summary.modelDetail = detail;
  const vendor = first.get('vendor_id');
  if (vendor !== undefined) summary.vendor = vendor;
  const s390Count = Number(first.get('# processors'));
  if (processorLines === 0 && Number.isInteger(s390Count) && s390Count > 0) {
    summary.processors = s390Count;
    summary.countDetail = 's390x lists "# processors", not a line per CPU';
  } else if (processorLines === 0 && arch === 'arm' && first.has('Processor')) {
    summary.processors = 1;
    summary.countDetail = 'no per-CPU "processor" lines: a uniprocessor ARM kernel (before 3.8) prints them only on SMP builds';
  }
  if (first.has('platform')) summary.platform = first.get('platform') as string;
  if (first.has('model') && arch === 'ppc') summary.machineModel = first.get('model') as string;
  const version = /version = (\w+)/.exec(first.get('processor 0') ?? '')?.[1];
  if (version) summary.s390Version = version;
  return summary;
}

/** Known VM signatures in DMI sys_vendor / product_name → hypervisor name. Bare-metal cloud shapes say ".metal". */
export function hypervisorFromDmi(vendor: string, product: string): string | undefined {
  const both = `${vendor} ${product}`;
  if (/\.metal\b/i.test(product)) return undefined;
  if (/qemu|kvm/i.test(both)) return 'kvm';
  if (/vmware/i.test(both)) return 'vmware';
  if (/virtualbox|innotek/i.test(both)) return 'virtualbox';
  if (/microsoft corporation/i.test(vendor) && /virtual machine/i.test(product)) return 'hyperv';
  if (/xen/i.test(both)) return 'xen';
  if (/amazon ec2/i.test(vendor)) return 'aws-nitro';
  if (/google/i.test(vendor) && /compute engine/i.test(product)) return 'gce';
  if (/openstack|nutanix|parallels|bhyve|firecracker/i.test(both)) return both.trim().toLowerCase().split(/\s+/)[0];
  return undefined;
}

async function readOptional(host: HostRoot, path: string): Promise<string | null> {
  const read = await host.readValue(path);
  return read.ok ? read.text : null;
}

/** The device tree's root "compatible" list (NUL-separated), or undefined without a device tree. */
async function deviceTreeCompatible(host: HostRoot, node = ''): Promise<string[] | undefined> {
  for (const base of [DEVICE_TREE, '/proc/device-tree']) {
    const read = await host.readText(`${base}${node}/compatible`, { maxBytes: 4096 });
    if (read.ok) return read.text.split('\0').map((entry) => entry.trim()).filter(Boolean);
  }
  return undefined;
}

interface Verdict {
  virtualized: boolean;
  hypervisor: string | null;
  source: string;
  detail: string;
}

/** Evidence that is not a CPU flag: the only kind there is off x86. */
async function verdictWithoutCpuFlag(host: HostRoot, summary: CpuinfoSummary, dmi: { vendor: string; product: string }): Promise<Verdict | undefined> {
  const fromDmi = hypervisorFromDmi(dmi.vendor, dmi.product);
  if (fromDmi) return { virtualized: true, hypervisor: fromDmi, source: `${DMI}/sys_vendor`, detail: `${dmi.vendor} / ${dmi.product}` };
  const xen = await readOptional(host, '/sys/hypervisor/type');
  if (xen) return { virtualized: true, hypervisor: xen, source: '/sys/hypervisor/type', detail: `${xen} guest` };
  const hypervisorNode = await deviceTreeCompatible(host, '/hypervisor');
  if (hypervisorNode) return { virtualized: true, hypervisor: hypervisorNode[0]?.split(',')[0] ?? 'unidentified', source: `${DEVICE_TREE}/hypervisor/compatible`, detail: `device tree hypervisor node: ${hypervisorNode.join(', ')}` };
  const compatible = await deviceTreeCompatible(host);
  if (compatible?.includes('linux,dummy-virt')) {
    return { virtualized: true, hypervisor: 'qemu', source: `${DEVICE_TREE}/compatible`, detail: 'device tree of a virtual machine ("linux,dummy-virt": QEMU virt, also used by Firecracker and Cloud Hypervisor)' };
  }
  if (summary.arch === 'ppc' && summary.platform) {
    if (/^pSeries/i.test(summary.platform)) {
      const kvm = /qemu/i.test(summary.machineModel ?? '');
      return { virtualized: true, hypervisor: kvm ? 'kvm' : 'powervm', source: '/proc/cpuinfo', detail: `platform ${summary.platform}: a PAPR partition${kvm ? ` (${summary.machineModel})` : ' under PowerVM'}` };
    }
    if (/^PowerNV/i.test(summary.platform)) return { virtualized: false, hypervisor: null, source: '/proc/cpuinfo', detail: 'platform PowerNV: OPAL firmware, bare metal' };
  }
  if (summary.arch === 's390') {
    const guest = summary.s390Version === 'FF';
    return { virtualized: true, hypervisor: 'ibm_systemz', source: '/proc/cpuinfo', detail: guest ? 'CPU version FF: a z/VM or KVM guest' : 'an LPAR: IBM Z always runs under PR/SM' };
  }
  const driver = (await readOptional(host, '/sys/devices/system/cpu/cpufreq/policy0/scaling_driver')) ?? undefined;
  if (driver && HARDWARE_CPUFREQ_DRIVERS.includes(driver)) {
    return { virtualized: false, hypervisor: null, source: '/sys/devices/system/cpu/cpufreq/policy0/scaling_driver', detail: `cpufreq driver ${driver} sets real clocks, which a VM never has` };
  }
  if (/\.metal\b/i.test(dmi.product)) return { virtualized: false, hypervisor: null, source: `${DMI}/product_name`, detail: `${dmi.vendor} / ${dmi.product}` };
  if (compatible && compatible.length > 0) {
    return { virtualized: false, hypervisor: null, source: `${DEVICE_TREE}/compatible`, detail: `the device tree describes board ${compatible.join(', ')}` };
  }
  return undefined;
}

async function decideVirtualization(host: HostRoot, summary: CpuinfoSummary | undefined): Promise<Verdict | { unknown: string }> {
  const dmi = { vendor: (await readOptional(host, `${DMI}/sys_vendor`)) ?? '', product: (await readOptional(host, `${DMI}/product_name`)) ?? '' };
  if (summary?.hypervisorFlag) {
    const named = hypervisorFromDmi(dmi.vendor, dmi.product);
    const xen = await readOptional(host, '/sys/hypervisor/type');
    return { virtualized: true, hypervisor: named ?? (xen || 'unidentified'), source: '/proc/cpuinfo', detail: 'the "hypervisor" CPU flag is set' };
  }
  const found = await verdictWithoutCpuFlag(host, summary ?? { processors: 0, hypervisorFlag: false, arch: 'unknown' }, dmi);
  if (found) return found;
  if (summary?.arch === 'x86') {
    const detail = dmi.vendor ? `no hypervisor CPU flag; DMI says ${dmi.vendor} / ${dmi.product}` : 'no hypervisor CPU flag';
    return { virtualized: false, hypervisor: null, source: '/proc/cpuinfo', detail };
  }
  if (!summary) return { unknown: `neither /proc/cpuinfo flags nor DMI (${DMI}) tell whether this is a VM` };
  const cpus = summary.arch === 'unknown' ? 'CPUs of this architecture' : `${summary.arch.toUpperCase()} CPUs`;
  return { unknown: `${cpus} have no "hypervisor" flag; neither DMI, /sys/hypervisor, the device tree nor the cpufreq driver tells whether this is a VM` };
}

export async function collectIdentity(ctx: CollectorContext): Promise<void> {
  const { host, facts } = ctx;
  const cpuinfo = await host.readText('/proc/cpuinfo', { maxBytes: 8 * 1024 * 1024 });
  const summary = cpuinfo.ok ? parseCpuinfo(cpuinfo.text) : undefined;
  if (summary?.model) facts.set('cpu.model', summary.model, '/proc/cpuinfo', summary.modelDetail);
  else facts.unknown('cpu.model', cpuinfo.ok ? '/proc/cpuinfo has no model line (model name, cpu, cpu model, Model Name)' : cpuinfo.reason);
  if (summary && summary.processors > 0) facts.set('cpu.count', summary.processors, '/proc/cpuinfo', summary.countDetail);
  else facts.unknown('cpu.count', cpuinfo.ok ? '/proc/cpuinfo lists no processor' : cpuinfo.reason);

  const verdict = await decideVirtualization(host, summary);
  if ('unknown' in verdict) {
    facts.unknown('cpu.virtualized', verdict.unknown);
    facts.unknown('cpu.hypervisor', verdict.unknown);
    return;
  }
  facts.set('cpu.virtualized', verdict.virtualized, verdict.source, verdict.detail);
  facts.set('cpu.hypervisor', verdict.hypervisor, verdict.source);
}
