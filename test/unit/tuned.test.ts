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
