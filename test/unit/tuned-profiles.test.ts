// TuneD's merge on real profiles: the verdict follows what the merged [cpu] unit sets, not the names.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cp, mkdir, rm, writeFile } from 'node:fs/promises';
import cpu from '../../src/collectors/cpu.ts';
import tuned from '../../src/collectors/tuned/collector.ts';
import { runScan } from '../../src/scan.ts';
import { collectFacts } from '../../src/facts/collect.ts';
import { HostRoot } from '../../src/host/host-root.ts';
import { factsOf, fixtureHost, tempHost } from '../helpers/fixtures.ts';

async function verdict(hostRoot: string): Promise<string | undefined> {
  const report = await runScan({ hostRoot, only: ['tuned-profile'], collectors: [cpu, tuned] });
  return report.findings[0]?.status;
}

const setting = async (fixture: string, key: string) => {
  const fact = (await factsOf(fixture, [cpu, tuned])).get(key);
  return [fact?.value, fact?.source];
};

test('"throughput-performance powersave": merged left to right, powersave\'s [cpu] wins, so the profile fails', async () => {
  const facts = await factsOf('tuned-merge-powersave', [cpu, tuned]);
  assert.deepEqual(facts.value('tuned.profileChain'), ['throughput-performance', 'powersave']);
  assert.deepEqual([facts.value('tuned.cpu.governor'), facts.get('tuned.cpu.governor')?.source], ['powersave', '/usr/lib/tuned/powersave/tuned.conf:9']);
  assert.match(facts.get('tuned.cpu.governor')?.detail ?? '', /governor=ondemand\|powersave .*; ondemand not offered here \(performance powersave\)/);
  assert.deepEqual([facts.value('tuned.cpu.energyPerfBias'), facts.get('tuned.cpu.energyPerfBias')?.source], ['power', '/usr/lib/tuned/powersave/tuned.conf:10']);
  // min_perf_pct is not in powersave's [cpu]: throughput-performance's survives the merge.
  assert.deepEqual([facts.value('tuned.cpu.minPerfPct'), facts.get('tuned.cpu.minPerfPct')?.source], [100, '/usr/lib/tuned/throughput-performance/tuned.conf:15']);
  assert.equal(await verdict(fixtureHost('tuned-merge-powersave')), 'fail');
});

test('sap-hana, sap-hana-kvm-guest and accelerator-performance pass for what their [cpu] sets, not for a name on a list', async () => {
  assert.deepEqual(await setting('tuned-sap-hana', 'tuned.cpu.governor'), ['performance', '/usr/lib/tuned/sap-hana/tuned.conf:10']);
  assert.equal(await verdict(fixtureHost('tuned-sap-hana')), 'pass');
  const guest = await factsOf('tuned-sap-hana-kvm-guest', [cpu, tuned]);
  assert.deepEqual(guest.value('tuned.profileChain'), ['sap-hana', 'sap-hana-kvm-guest']);
  assert.deepEqual([guest.value('tuned.cpu.governor'), guest.get('tuned.cpu.governor')?.source], ['performance', '/usr/lib/tuned/profiles/sap-hana/tuned.conf:10']);
  assert.match(guest.get('tuned.cpu.governor')?.detail ?? '', /this host has no cpufreq, so there is nothing to set/);
  assert.equal(await verdict(fixtureHost('tuned-sap-hana-kvm-guest')), 'pass');
  assert.deepEqual(await setting('tuned-accelerator-performance', 'tuned.cpu.governor'), ['performance', '/usr/lib/tuned/accelerator-performance/tuned.conf:9']);
  assert.deepEqual(await setting('tuned-accelerator-performance', 'tuned.cpu.forceLatency'), ['99', '/usr/lib/tuned/accelerator-performance/tuned.conf:12']);
  assert.equal(await verdict(fixtureHost('tuned-accelerator-performance')), 'pass');
});

test('a site profile including openshift: ${f:virt_check} resolved from cpu.virtualized, throughput-performance on bare metal', async (t) => {
  const facts = await factsOf('tuned-custom-openshift', [cpu, tuned]);
  assert.deepEqual(facts.value('tuned.profileChain'), ['throughput-performance', 'openshift', 'site-node']);
  assert.equal(await verdict(fixtureHost('tuned-custom-openshift')), 'pass');
  // The same tree as a VM (hypervisor flag set): virtual-guest, which includes throughput-performance.
  const root = await tempHost(t, {});
  await cp(fixtureHost('tuned-custom-openshift'), root, { recursive: true });
  await writeFile(`${root}/proc/cpuinfo`, 'processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) Platinum 8259CL CPU @ 2.50GHz\nflags\t\t: fpu vme de pse hypervisor lahf_lm\n');
  const vm = await collectFacts(new HostRoot(root), { collectors: [cpu, tuned] });
  assert.deepEqual(vm.value('tuned.profileChain'), ['throughput-performance', 'virtual-guest', 'openshift', 'site-node']);
});

test('conditional include "-name": skipped when missing (never a literal "-name"), merged when present', async (t) => {
  const facts = await factsOf('tuned-conditional-include', [cpu, tuned]);
  assert.deepEqual(facts.value('tuned.profileChain'), ['throughput-performance', 'cp-site']);
  assert.match(facts.get('tuned.profileChain')?.detail ?? '', /conditional include of cp-site-local skipped \(no such profile\)/);
  assert.equal(await verdict(fixtureHost('tuned-conditional-include')), 'pass');
  const root = await tempHost(t, {});
  await cp(fixtureHost('tuned-conditional-include'), root, { recursive: true });
  await mkdir(`${root}/etc/tuned/cp-site-local`, { recursive: true });
  await writeFile(`${root}/etc/tuned/cp-site-local/tuned.conf`, '[main]\nsummary=local power cap\n\n[cpu]\ngovernor=powersave\n');
  const withLocal = await collectFacts(new HostRoot(root), { collectors: [cpu, tuned] });
  assert.deepEqual(withLocal.value('tuned.profileChain'), ['throughput-performance', 'cp-site-local', 'cp-site']);
  assert.deepEqual([withLocal.value('tuned.cpu.governor'), withLocal.get('tuned.cpu.governor')?.source], ['powersave', '/etc/tuned/cp-site-local/tuned.conf:5']);
  assert.equal(await verdict(root), 'fail');
});

test('/etc/tuned/post_loaded_profile is loaded after the active profiles and wins', async () => {
  const facts = await factsOf('tuned-post-loaded', [cpu, tuned]);
  assert.deepEqual([facts.value('tuned.postLoadedProfile'), facts.value('tuned.loadedProfiles')], ['powersave', ['throughput-performance', 'powersave']]);
  assert.equal(facts.value('tuned.cpu.governor'), 'powersave');
  assert.equal(await verdict(fixtureHost('tuned-post-loaded')), 'fail');
});

test('auto mode loads the recommendation; a missing, unparsable or undecidable profile makes the settings unknown, never a pass', async (t) => {
  const copyOf = async (fixture: string) => {
    const root = await tempHost(t, {});
    await cp(fixtureHost(fixture), root, { recursive: true });
    return root;
  };
  const auto = await copyOf('tuned-merge-powersave');
  await writeFile(`${auto}/etc/tuned/profile_mode`, 'auto\n');
  const autoFacts = await collectFacts(new HostRoot(auto), { collectors: [cpu, tuned] });
  // Bare metal without "server" in /etc/system-release-cpe: TuneD's own rules recommend balanced.
  assert.deepEqual(autoFacts.value('tuned.loadedProfiles'), ['balanced']);
  assert.equal(autoFacts.value('tuned.cpu.governor'), 'powersave', 'balanced: conservative|powersave, intel_pstate offers powersave');

  const missing = await copyOf('tuned-sap-hana');
  await writeFile(`${missing}/etc/tuned/active_profile`, 'sap-hana site-gone\n');
  const missingFacts = await collectFacts(new HostRoot(missing), { collectors: [cpu, tuned] });
  assert.match(missingFacts.get('tuned.cpu.governor')?.unknown ?? '', /Requested profile 'site-gone' doesn't exist/);
  assert.equal(await verdict(missing), 'unknown');

  const broken = await copyOf('tuned-sap-hana');
  await writeFile(`${broken}/usr/lib/tuned/sap-hana/tuned.conf`, '[main]\nsummary=x\n[cpu]\ngovernor performance\n');
  const brokenFacts = await collectFacts(new HostRoot(broken), { collectors: [cpu, tuned] });
  assert.match(brokenFacts.get('tuned.cpu.governor')?.unknown ?? '', /sap-hana\/tuned\.conf: line 4 is not "key=value".*Cannot parse/);

  const undecided = await copyOf('tuned-custom-openshift');
  await rm(`${undecided}/proc/cpuinfo`);
  const undecidedFacts = await collectFacts(new HostRoot(undecided), { collectors: [cpu, tuned] });
  assert.match(undecidedFacts.get('tuned.cpu.governor')?.unknown ?? '', /openshift\/tuned\.conf:7: \$\{f:virt_check:virtual-guest:throughput-performance\} depends on whether this host is a VM/);
});

test('a stopped daemon fails whatever the profile; tuned running is also found from the process table without a pid file', async (t) => {
  const root = await tempHost(t, {});
  await cp(fixtureHost('tuned-sap-hana'), root, { recursive: true });
  await rm(`${root}/run/tuned/tuned.pid`);
  const facts = await collectFacts(new HostRoot(root), { collectors: [cpu, tuned] });
  assert.deepEqual([facts.value('tuned.running'), facts.get('tuned.running')?.source], [true, '/proc/1187/cmdline']);
  await rm(`${root}/proc/1187`, { recursive: true });
  assert.equal(await verdict(root), 'fail');
});

test('a VM with virtual-guest selected but the daemon stopped: the fix is to start tuned, not to select the profile it has', async (t) => {
  const hostRoot = fixtureHost('tuned-virtual-guest-stopped');
  const facts = await factsOf('tuned-virtual-guest-stopped', [cpu, tuned]);
  assert.equal(facts.value('tuned.running'), false);
  assert.deepEqual(facts.value('tuned.loadedProfiles'), ['virtual-guest']);
  assert.equal(facts.value('tuned.recommendedProfile'), 'virtual-guest');
  assert.equal(facts.value('tuned.fixKind'), 'start');
  const report = await runScan({ hostRoot, only: ['tuned-profile'], collectors: [cpu, tuned] });
  const finding = report.findings[0];
  assert.equal(finding?.status, 'fail');
  assert.match(finding?.remediation.summary ?? '', /^start tuned \(systemctl enable --now tuned\)/);
  assert.doesNotMatch(finding?.remediation.summary ?? '', /tuned-adm profile/);

  // The same VM with another profile selected: select the recommended one and start the daemon.
  const root = await tempHost(t, {});
  await cp(hostRoot, root, { recursive: true });
  await writeFile(`${root}/etc/tuned/active_profile`, 'throughput-performance\n');
  await writeFile(`${root}/etc/tuned/profile_mode`, 'manual\n');
  const other = await runScan({ hostRoot: root, only: ['tuned-profile'], collectors: [cpu, tuned] });
  assert.match(other.findings[0]?.remediation.summary ?? '', /tuned-adm profile .*start tuned/);
});
