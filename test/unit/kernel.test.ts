import { test } from 'node:test';
import assert from 'node:assert/strict';
import kernel, { activePreemptFromDebugfs, parseKernelConfig, snapHz } from '../../src/collectors/kernel.ts';
import { collectFacts } from '../../src/collectors/run.ts';
import { HostRoot } from '../../src/host/host-root.ts';
import { factsOf, tempHost } from '../helpers/fixtures.ts';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';

test('reads CONFIG_HZ, NO_HZ and preemption from a Debian /proc/config.gz', async () => {
  const facts = await factsOf('intel-pstate-epp-power', [kernel]);
  assert.deepEqual(facts.get('kernel.hz'), { value: 250, source: '/proc/config.gz' });
  assert.equal(facts.value('kernel.release'), '6.1.0-28-amd64');
  assert.equal(facts.value('kernel.noHz'), 'full');
  assert.equal(facts.value('kernel.preemptModel'), 'voluntary');
  assert.match(facts.get('kernel.preemptModel')?.detail ?? '', /PREEMPT_DYNAMIC/);
});

test('falls through to /boot/config-<release> on a RHEL-like host with HZ=1000', async () => {
  const facts = await factsOf('rhel-hz1000-tuned-merged', [kernel]);
  assert.deepEqual(facts.get('kernel.hz'), { value: 1000, source: '/boot/config-5.14.0-427.13.1.el9_4.x86_64' });
  assert.equal(facts.value('kernel.configSource'), '/boot/config-5.14.0-427.13.1.el9_4.x86_64');
});

test('without any kernel config or tick counter, kernel.hz is unknown and lists every path tried', async () => {
  const facts = await factsOf('no-kernel-config', [kernel], { liveProc: true });
  const hz = facts.get('kernel.hz');
  assert.equal(hz?.value, null);
  for (const tried of ['/proc/config.gz', '/boot/config-6.8.0-1015-aws', '/lib/modules/6.8.0-1015-aws/config',
    '/usr/lib/modules/6.8.0-1015-aws/config', '/usr/lib/ostree-boot/config-6.8.0-1015-aws',
    '/usr/src/linux-headers-6.8.0-1015-aws/.config', '/proc/timer_list', '/proc/schedstat']) {
    assert.ok(hz?.unknown?.includes(tried), `reason names ${tried}: ${hz?.unknown}`);
  }
});

const timerList = (nowNs: bigint, jiffies: number) =>
  `Timer List Version: v0.9\nHRTIMER_MAX_CLOCK_BASES: 8\nnow at ${nowNs} nsecs\n\ncpu: 0\n clock 0:\n  .base:       ffff8881f7a1e4c0\n  .index:      0\n  .resolution: 1 nsecs\n  .get_time:   ktime_get\n` +
  `\njiffies: ${jiffies}\n`;

test('with no config, HZ is inferred from two /proc/timer_list reads and snapped to a legal value', async (t) => {
  const root = await tempHost(t, { 'proc/sys/kernel/osrelease': '6.8.0-1015-aws\n', 'proc/timer_list': timerList(5_000_000_000n, 4_295_892_296) });
  const facts = await collectFacts(new HostRoot(root), {
    collectors: [kernel],
    liveProc: true, // the temp tree stands in for a live procfs whose counter moves
    // The second read happens after this "sleep": the kernel's clock moved 1.1 s and jiffies 1100 (1000 Hz).
    sleep: async () => writeFile(path.join(root, 'proc/timer_list'), timerList(6_100_000_000n, 4_295_893_396)),
  });
  const hz = facts.get('kernel.hz');
  assert.equal(hz?.value, 1000);
  assert.equal(hz?.source, 'inferred');
  assert.match(hz?.detail ?? '', /\/proc\/timer_list: 1000\.0 ticks\/s over 1\.10 s/);
});

test('/proc/schedstat is the fallback counter, timed with our own clock', async (t) => {
  const schedstat = (ts: number) => `version 15\ntimestamp ${ts}\ncpu0 0 0 0 0 0 0 1234 5678 90\n`;
  const root = await tempHost(t, { 'proc/schedstat': schedstat(4_295_000_000) });
  let clock = 10_000;
  const facts = await collectFacts(new HostRoot(root), {
    collectors: [kernel],
    liveProc: true,
    now: () => clock,
    sleep: async (ms) => {
      clock += ms;
      await writeFile(path.join(root, 'proc/schedstat'), schedstat(4_295_000_000 + 275));
    },
  });
  assert.equal(facts.value('kernel.hz'), 250);
});

test('snapHz rejects rates far from any legal CONFIG_HZ', () => {
  assert.equal(snapHz(249.87), 250);
  assert.equal(snapHz(1012), 1000);
  assert.equal(snapHz(600), undefined);
  assert.equal(snapHz(Number.NaN), undefined);
});

test('parseKernelConfig keeps set and unset options, ignores comments', () => {
  const config = parseKernelConfig('#\n# Linux/x86 6.1 Kernel Configuration\nCONFIG_HZ_1000=y\n# CONFIG_HZ_250 is not set\nCONFIG_HZ=1000\nCONFIG_LOCALVERSION=""\n');
  assert.equal(config.get('HZ'), '1000');
  assert.equal(config.get('HZ_250'), 'n');
  assert.equal(config.get('LOCALVERSION'), '');
  assert.equal(activePreemptFromDebugfs('none voluntary (full) lazy\n'), 'full');
});

test('preempt= on the kernel command line overrides a PREEMPT_DYNAMIC build default', async (t) => {
  const root = await tempHost(t, {
    'proc/sys/kernel/osrelease': '6.8.0-45-generic\n',
    'proc/cmdline': 'BOOT_IMAGE=/boot/vmlinuz-6.8.0-45-generic root=/dev/sda1 ro preempt=full\n',
    'boot/config-6.8.0-45-generic': 'CONFIG_HZ_1000=y\nCONFIG_HZ=1000\nCONFIG_NO_HZ_IDLE=y\nCONFIG_PREEMPT_VOLUNTARY=y\nCONFIG_PREEMPT_DYNAMIC=y\n',
  });
  const facts = await collectFacts(new HostRoot(root), { collectors: [kernel] });
  assert.deepEqual([facts.value('kernel.preemptModel'), facts.get('kernel.preemptModel')?.source], ['full', '/proc/cmdline']);
  assert.equal(facts.value('kernel.hz'), 1000);
});

test('a snapshot tree (its /proc is not procfs) is never sampled for 1.1 s: the tick counter of a copy cannot move', async (t) => {
  const root = await tempHost(t, { 'proc/sys/kernel/osrelease': '6.8.0-1015-aws\n', 'proc/timer_list': timerList(5_000_000_000n, 4_295_892_296) });
  const slept: number[] = [];
  const facts = await collectFacts(new HostRoot(root), { collectors: [kernel], sleep: async (ms) => void slept.push(ms) });
  assert.deepEqual(slept, []);
  const hz = facts.get('kernel.hz');
  assert.equal(hz?.value, null);
  assert.match(hz?.unknown ?? '', /\/proc under .* is not a live procfs \(a snapshot\): the tick rate cannot be measured there/);
});

test('the live /proc of this machine is recognised as procfs (the DaemonSet\'s /host/proc is the same mount)', async () => {
  const { isLiveProcfs } = await import('../../src/host/procfs.ts');
  assert.equal(await isLiveProcfs(new HostRoot('/')), true);
});
