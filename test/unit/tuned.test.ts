import { test } from 'node:test';
import assert from 'node:assert/strict';
import cpu from '../../src/collectors/cpu.ts';
import tuned from '../../src/collectors/tuned/collector.ts';
import { recommendProfile } from '../../src/collectors/tuned/recommend.ts';
import { parseIni } from '../../src/collectors/tuned/ini.ts';
import { expandInclude } from '../../src/collectors/tuned/profiles.ts';
import { HostRoot } from '../../src/host/host-root.ts';
import { factsOf, fixtureHost, tempHost } from '../helpers/fixtures.ts';
import { readFile } from 'node:fs/promises';
import { runScan } from '../../src/scan.ts';

test('two merged profiles in manual mode, daemon running, RHEL profile layout', async () => {
  const facts = await factsOf('rhel-hz1000-tuned-merged', [cpu, tuned]);
  assert.equal(facts.value('tuned.installed'), true);
  assert.deepEqual(facts.value('tuned.activeProfiles'), ['throughput-performance', 'cp-overrides']);
  assert.deepEqual(facts.value('tuned.profileChain'), ['throughput-performance', 'cp-overrides']);
  assert.equal(facts.value('tuned.mode'), 'manual');
  assert.equal(facts.value('tuned.running'), true);
  assert.equal(facts.get('tuned.running')?.detail, 'pid 1187');
  assert.ok((facts.value('tuned.profiles') as string[]).includes('cp-overrides'));
  // Bare metal whose /etc/system-release-cpe does not say "server": tuned's own rules give balanced.
  assert.deepEqual(facts.get('tuned.recommendedProfile'), { value: 'balanced', source: '/usr/lib/tuned/recommend.d/50-tuned.conf' });
});

test('a preset profile with a dead daemon: include chain followed in the Debian layout, mode derived', async () => {
  const facts = await factsOf('no-kernel-config', [cpu, tuned]);
  // TuneD loads an include before the profile that names it: the merge order.
  assert.deepEqual(facts.value('tuned.profileChain'), ['throughput-performance', 'virtual-guest']);
  assert.equal(facts.value('tuned.running'), false);
  assert.deepEqual([facts.value('tuned.mode'), facts.get('tuned.mode')?.source], ['manual', 'inferred']);
  assert.equal(facts.value('tuned.recommendedProfile'), 'virtual-guest');
});

test('tuned absent: installed false and empty profiles, recommendation from the shipped rules', async () => {
  const facts = await factsOf('vm-no-cpufreq', [cpu, tuned]);
  assert.equal(facts.value('tuned.installed'), false);
  assert.deepEqual(facts.value('tuned.activeProfiles'), []);
  assert.equal(facts.value('tuned.running'), false);
  assert.deepEqual([facts.value('tuned.recommendedProfile'), facts.get('tuned.recommendedProfile')?.source], ['virtual-guest', 'inferred']);
});

test('recommend rules: bare-metal server → throughput-performance; /etc/tuned/recommend.conf wins', async (t) => {
  const shipped = await readFile(`${fixtureHost('amd-acpi-cpufreq-ondemand')}/usr/lib/tuned/recommend.d/50-tuned.conf`, 'utf8');
  const server = await tempHost(t, {
    'usr/lib/tuned/recommend.d/50-tuned.conf': shipped,
    'etc/system-release-cpe': 'cpe:/o:redhat:enterprise_linux:7.9:ga:server\n',
  });
  assert.deepEqual(await recommendProfile({ host: new HostRoot(server), virt: '' }, true), {
    profile: 'throughput-performance',
    file: '/usr/lib/tuned/recommend.d/50-tuned.conf',
  });
  const override = await tempHost(t, {
    'usr/lib/tuned/recommend.d/50-tuned.conf': shipped,
    'etc/tuned/recommend.conf': '[latency-performance,site]\n/etc/hostname=cp-.*\n',
    'etc/hostname': 'cp-3\n',
  });
  assert.equal(((await recommendProfile({ host: new HostRoot(override), virt: 'kvm' }, true)) as { profile: string }).profile, 'latency-performance');
  assert.deepEqual(await recommendProfile({ host: new HostRoot(server), virt: undefined }, true), {
    unknown: '/usr/lib/tuned/recommend.d/50-tuned.conf [atomic-host] needs to know whether this is a VM',
  });
});

test('parseIni follows ConfigParser as tuned configures it (inline comments after whitespace); include= expands virt_check', () => {
  assert.deepEqual(parseIni('[main]\nsummary=x # note\n[cpu]\ngovernor=performance#kept\n'), [
    { name: 'main', line: 1, options: [{ key: 'summary', value: 'x', line: 2 }] },
    { name: 'cpu', line: 3, options: [{ key: 'governor', value: 'performance#kept', line: 4 }] },
  ]);
  const include = 'openshift, ${f:virt_check:virtual-guest:network-throughput}';
  assert.deepEqual(expandInclude(include, true), { value: 'openshift, virtual-guest' });
  assert.deepEqual(expandInclude(include, false), { value: 'openshift, network-throughput' });
  assert.match((expandInclude(include, undefined) as { unknown: string }).unknown, /depends on whether this host is a VM, which is unknown/);
});

test('an empty profile_mode (as Debian ships it) is "not recorded": the mode is derived, not unknown', async (t) => {
  const root = await tempHost(t, { 'usr/sbin/tuned': '#!/usr/bin/python3 -Es\n', 'etc/tuned/active_profile': '\n', 'etc/tuned/profile_mode': '\n' });
  const { collectFacts } = await import('../../src/collectors/run.ts');
  const facts = await collectFacts(new HostRoot(root), { collectors: [tuned] });
  assert.deepEqual([facts.value('tuned.mode'), facts.get('tuned.mode')?.source], ['auto', 'inferred']);
  assert.match(facts.get('tuned.mode')?.detail ?? '', /^empty \/etc\/tuned\/profile_mode/);
});

// /etc/os-release of RHEL 7.9 Server as redhat-release-server 7.9 ships it (its CPE_NAME says server).
const RHEL79_OS_RELEASE = 'NAME="Red Hat Enterprise Linux Server"\nVERSION="7.9 (Maipo)"\nID="rhel"\nID_LIKE="fedora"\nVARIANT="Server"\nVARIANT_ID="server"\nVERSION_ID="7.9"\nPRETTY_NAME="Red Hat Enterprise Linux Server 7.9 (Maipo)"\nANSI_COLOR="0;31"\nCPE_NAME="cpe:/o:redhat:enterprise_linux:7.9:GA:server"\n';

test('system= matches /etc/system-release-cpe only: a RHEL 7 server with only os-release is recommended balanced, as TuneD does', async (t) => {
  const shipped = await readFile(`${fixtureHost('amd-acpi-cpufreq-ondemand')}/usr/lib/tuned/recommend.d/50-tuned.conf`, 'utf8');
  const onlyOsRelease = await tempHost(t, { 'usr/lib/tuned/recommend.d/50-tuned.conf': shipped, 'etc/os-release': RHEL79_OS_RELEASE });
  assert.deepEqual(await recommendProfile({ host: new HostRoot(onlyOsRelease), virt: '' }, true), { profile: 'balanced', file: '/usr/lib/tuned/recommend.d/50-tuned.conf' });
  // The DaemonSet's host root holds no /etc/os-release: on a Red Hat family host the file may be there, unseen.
  const partial = await tempHost(t, { 'usr/lib/tuned/recommend.d/50-tuned.conf': shipped, 'usr/lib/os-release': RHEL79_OS_RELEASE });
  assert.match((await recommendProfile({ host: new HostRoot(partial), virt: '' }, true) as { unknown: string }).unknown,
    /\[atomic-host\] needs \/etc\/system-release-cpe, which TuneD matches system= against and a Red Hat family release ships, but the host root .* holds no \/etc to tell/);
  const debian = await tempHost(t, { 'usr/lib/tuned/recommend.d/50-tuned.conf': shipped, 'usr/lib/os-release': 'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nNAME="Debian GNU/Linux"\nVERSION_ID="12"\nID=debian\n' });
  assert.deepEqual(await recommendProfile({ host: new HostRoot(debian), virt: '' }, true), { profile: 'balanced', file: '/usr/lib/tuned/recommend.d/50-tuned.conf' });
});

test('a profile that sets no CPU policy (intel-sst, as TuneD ships it) passes, and its want line says so', async (t) => {
  const root = await tempHost(t, {
    'usr/sbin/tuned': '#!/usr/bin/python3 -Es\n',
    // redhat-performance/tuned profiles/intel-sst/tuned.conf (commit 2bfa4423586bb516452c538a232c8f7075bafbdf)
    'usr/lib/tuned/intel-sst/tuned.conf': '[main]\nsummary=Configure for Intel Speed Select Base Frequency\n\n[bootloader]\ncmdline_intel_sst=-intel_pstate=disable\n',
    'etc/tuned/active_profile': 'intel-sst\n', 'etc/tuned/profile_mode': 'manual\n',
    'run/tuned/tuned.pid': '4242\n', 'proc/4242/cmdline': '/usr/bin/python3\0-Es\0/usr/sbin/tuned\0-l\0-P\0',
  });
  const report = await runScan({ hostRoot: root, collectors: [cpu, tuned], only: ['tuned-profile'] });
  const finding = report.findings[0];
  assert.equal(finding?.status, 'pass');
  assert.equal(finding?.expected, 'the profile sets no CPU policy (the kernel\'s, see cpu-governor); daemon running');
  assert.equal(report.facts?.['tuned.cpu.setsPolicy']?.value, false);
});
