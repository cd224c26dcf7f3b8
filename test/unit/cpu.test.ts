import { test } from 'node:test';
import assert from 'node:assert/strict';
import cpu, { hypervisorFromDmi, parseCpuinfo } from '../../src/collectors/cpu.ts';
import { factsOf } from '../helpers/fixtures.ts';

test('Intel bare metal with intel_pstate powersave and EPP power', async () => {
  const facts = await factsOf('intel-pstate-epp-power', [cpu]);
  assert.equal(facts.value('cpu.model'), 'Intel(R) Xeon(R) Gold 6230 CPU @ 2.10GHz');
  assert.equal(facts.value('cpu.count'), 4);
  assert.equal(facts.value('cpu.virtualized'), false);
  assert.equal(facts.value('cpu.cpufreq'), true);
  assert.equal(facts.value('cpu.driver'), 'intel_pstate');
  assert.equal(facts.value('cpu.governor'), 'powersave');
  assert.equal(facts.value('cpu.epp'), 'power');
  assert.equal(facts.value('cpu.pstateStatus'), 'intel_pstate:active');
  assert.equal(facts.value('cpu.boost'), true);
  assert.equal(facts.value('cpu.idleDriver'), 'intel_idle');
  assert.equal(facts.value('cpu.deepestIdleLatencyUs'), 170);
  const policies = facts.value('cpu.policies') as { policy: string; governor: string; availableGovernors: string[] }[];
  assert.deepEqual(policies.map((policy) => policy.policy), ['policy0', 'policy1', 'policy2', 'policy3']);
  assert.deepEqual(policies[0]?.availableGovernors, ['performance', 'powersave']);
});

test('EPP performance under intel_pstate powersave is read per policy', async () => {
  const facts = await factsOf('intel-pstate-epp-performance', [cpu]);
  assert.equal(facts.value('cpu.governor'), 'powersave');
  assert.equal(facts.value('cpu.epp'), 'performance');
});

test('AMD acpi-cpufreq ondemand: no EPP, boost from cpufreq/boost', async () => {
  const facts = await factsOf('amd-acpi-cpufreq-ondemand', [cpu]);
  assert.equal(facts.value('cpu.model'), 'AMD EPYC 7502P 32-Core Processor');
  assert.equal(facts.value('cpu.driver'), 'acpi-cpufreq');
  assert.equal(facts.value('cpu.governor'), 'ondemand');
  assert.equal(facts.get('cpu.epp')?.value, null);
  assert.equal(facts.value('cpu.pstateStatus'), null);
  assert.deepEqual(facts.get('cpu.boost'), { value: true, source: '/sys/devices/system/cpu/cpufreq/boost' });
  assert.equal(facts.value('cpu.idleDriver'), 'acpi_idle');
});

test('mixed governors summarise as "mixed" and say which policy runs what', async () => {
  const facts = await factsOf('mixed-governors', [cpu]);
  assert.equal(facts.value('cpu.governor'), 'mixed');
  assert.equal(facts.get('cpu.governor')?.detail, 'performance on policy0,policy1; powersave on policy2,policy3');
});

test('a KVM guest without cpufreq: virtualized from the CPU flag, no governor at all', async () => {
  const facts = await factsOf('vm-no-cpufreq', [cpu]);
  assert.equal(facts.value('cpu.virtualized'), true);
  assert.equal(facts.value('cpu.hypervisor'), 'gce');
  assert.equal(facts.value('cpu.cpufreq'), false);
  assert.equal(facts.get('cpu.governor')?.value, null);
  assert.equal(facts.value('cpu.idleDriver'), 'haltpoll');
});

test('DMI decides VM-ness the CPU flag alone would not, and .metal shapes stay bare metal', () => {
  assert.equal(hypervisorFromDmi('QEMU', 'Standard PC (Q35 + ICH9, 2009)'), 'kvm');
  assert.equal(hypervisorFromDmi('VMware, Inc.', 'VMware7,1'), 'vmware');
  assert.equal(hypervisorFromDmi('Microsoft Corporation', 'Virtual Machine'), 'hyperv');
  assert.equal(hypervisorFromDmi('Amazon EC2', 'm5.metal'), undefined);
  assert.equal(hypervisorFromDmi('Dell Inc.', 'PowerEdge R640'), undefined);
});

test('parseCpuinfo counts processors and finds the hypervisor flag (arm64 "Features" too)', () => {
  const summary = parseCpuinfo('processor\t: 0\nFeatures\t: fp asimd evtstrm hypervisor\n\nprocessor\t: 1\nFeatures\t: fp asimd\n');
  assert.deepEqual(summary, { processors: 2, hypervisorFlag: true, arch: 'unknown' });
});

test('kernels without policyN directories: each cpuN/cpufreq is read as its own policy', async (t) => {
  const { tempHost } = await import('../helpers/fixtures.ts');
  const { collectFacts } = await import('../../src/collectors/run.ts');
  const { HostRoot } = await import('../../src/host/host-root.ts');
  const files: Record<string, string> = { 'proc/cpuinfo': 'processor\t: 0\nmodel name\t: Intel(R) Xeon(R) CPU E5-2680 v2 @ 2.80GHz\n' };
  for (const n of [0, 1]) {
    files[`sys/devices/system/cpu/cpu${n}/cpufreq/scaling_driver`] = 'acpi-cpufreq\n';
    files[`sys/devices/system/cpu/cpu${n}/cpufreq/scaling_governor`] = 'ondemand\n';
  }
  const facts = await collectFacts(new HostRoot(await tempHost(t, files)), { collectors: [cpu] });
  assert.deepEqual(facts.get('cpu.governor'), { value: 'ondemand', source: '/sys/devices/system/cpu/cpu*/cpufreq/scaling_governor' });
  assert.deepEqual((facts.value('cpu.policies') as { policy: string }[]).map((policy) => policy.policy), ['cpu0', 'cpu1']);
});

test('a sysfs number too long to be exact is no number, not Infinity', async (t) => {
  const { tempHost } = await import('../helpers/fixtures.ts');
  const { collectFacts } = await import('../../src/collectors/run.ts');
  const { HostRoot } = await import('../../src/host/host-root.ts');
  const root = await tempHost(t, { 'sys/devices/system/cpu/cpu0/cpuidle/state0/latency': `${'1'.repeat(400)}\n` });
  const facts = await collectFacts(new HostRoot(root), { collectors: [cpu] });
  assert.equal(facts.get('cpu.deepestIdleLatencyUs')?.value, null);
});

test('a tree without /sys/devices/system/cpu (a snapshot, a restricted mount): cpufreq is unknown, not absent', async (t) => {
  const { cp } = await import('node:fs/promises');
  const { collectFacts } = await import('../../src/collectors/run.ts');
  const { HostRoot } = await import('../../src/host/host-root.ts');
  const { tempHost, fixtureHost } = await import('../helpers/fixtures.ts');
  const root = await tempHost(t, {});
  const source = fixtureHost('intel-pstate-epp-power');
  await cp(source, root, { recursive: true, filter: (file) => !file.startsWith(`${source}/sys/devices/system/cpu`) });
  const facts = await collectFacts(new HostRoot(root), { collectors: [cpu] });
  assert.equal(facts.value('cpu.model'), 'Intel(R) Xeon(R) Gold 6230 CPU @ 2.10GHz');
  for (const key of ['cpu.cpufreq', 'cpu.driver', 'cpu.governor', 'cpu.epp', 'cpu.policies']) {
    assert.equal(facts.value(key), undefined, key);
    assert.match(facts.get(key)?.unknown ?? '', /\/sys\/devices\/system\/cpu does not exist under this host root: whether the kernel controls CPU frequency cannot be told/, key);
  }
});

test('non-x86 /proc/cpuinfo: model and count from each architecture\'s own lines', async () => {
  const expected: Record<string, [string, number]> = {
    'ppc64-pseries-lpar': ['POWER7 (architected), altivec supported', 6],
    's390x-zvm': ['IBM/S390 machine 2964', 4],
    'loong64-3a5000': ['Loongson-3A5000-HV', 4],
    'mips-goldfish': ['MIPS 24Kc V0.0  FPU V0.0', 1],
    'armv6-rpi-uniprocessor': ['ARMv6-compatible processor rev 7 (v6l)', 1],
    'arm64-thunderx': ['ARM implementer 0x43 part 0x0a1', 6],
  };
  for (const [fixture, [model, count]] of Object.entries(expected)) {
    const facts = await factsOf(fixture, [cpu]);
    assert.deepEqual([facts.value('cpu.model'), facts.value('cpu.count')], [model, count], fixture);
  }
  const uniprocessor = await factsOf('armv6-rpi-uniprocessor', [cpu]);
  assert.match(uniprocessor.get('cpu.count')?.detail ?? '', /no per-CPU "processor" lines: a uniprocessor ARM kernel/);
});

test('non-x86 hosts: no "hypervisor" flag is not bare metal; the device tree, the platform and the cpufreq driver decide', async () => {
  const verdict = async (fixture: string) => {
    const facts = await factsOf(fixture, [cpu]);
    const fact = facts.get('cpu.virtualized');
    return [fact?.value, facts.value('cpu.hypervisor') ?? null, fact?.source, fact?.unknown ?? null];
  };
  assert.deepEqual(await verdict('armv7-qemu-virt'), [true, 'qemu', '/sys/firmware/devicetree/base/compatible', null]);
  assert.deepEqual(await verdict('ppc64-pseries-lpar'), [true, 'powervm', '/proc/cpuinfo', null]);
  assert.deepEqual(await verdict('s390x-zvm'), [true, 'ibm_systemz', '/proc/cpuinfo', null]);
  assert.deepEqual(await verdict('armv6-rpi-zero-cpufreq-dt'), [false, null, '/sys/devices/system/cpu/cpufreq/policy0/scaling_driver', null]);
  assert.deepEqual(await verdict('armv6-rpi-uniprocessor'), [false, null, '/sys/firmware/devicetree/base/compatible', null]);
  const [value, , , reason] = await verdict('armv7-no-evidence');
  assert.equal(value, null);
  assert.match(String(reason), /ARM CPUs have no "hypervisor" flag; neither DMI, \/sys\/hypervisor, the device tree nor the cpufreq driver tells whether this is a VM/);
  // x86 keeps its rule: the flag decides.
  assert.deepEqual((await verdict('intel-pstate-epp-power')).slice(0, 2), [false, null]);
});
