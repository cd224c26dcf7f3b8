// Garbage in any host file a collector parses must come out as facts (known or unknown), never as
// an exception out of the collector.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { COLLECTORS } from '../../src/collectors/index.ts';
import { assertCollectorsSurviveGarbage } from '../helpers/garbage-hosts.ts';

const PARSED_FILES = [
  '/proc/sys/kernel/osrelease', '/proc/cmdline', '/proc/config.gz', '/boot/config-6.1.0-28-amd64', '/proc/timer_list',
  '/proc/schedstat', '/proc/cpuinfo', '/sys/devices/virtual/dmi/id/sys_vendor', '/sys/devices/virtual/dmi/id/product_name',
  '/sys/devices/virtual/dmi/id/chassis_type', '/sys/hypervisor/type',
  '/sys/devices/system/cpu/cpufreq/policy0/scaling_governor', '/sys/devices/system/cpu/cpufreq/policy0/scaling_driver',
  '/sys/devices/system/cpu/cpufreq/policy0/energy_performance_preference', '/sys/devices/system/cpu/cpufreq/policy0/scaling_max_freq',
  '/sys/devices/system/cpu/cpufreq/policy0/cpuinfo_max_freq', '/sys/devices/system/cpu/intel_pstate/no_turbo',
  '/sys/devices/system/cpu/cpuidle/current_driver', '/sys/devices/system/cpu/cpu0/cpuidle/state0/latency',
  '/etc/tuned/active_profile', '/etc/tuned/profile_mode', '/run/tuned/tuned.pid', '/etc/tuned/recommend.conf',
  '/usr/lib/tuned/recommend.d/50-tuned.conf', '/usr/lib/tuned/balanced/tuned.conf', '/etc/system-release-cpe', '/etc/hostname',
  // etcd discovery, its mount table and sysfs
  '/etc/etcd.env', '/etc/systemd/system/etcd.service', '/etc/kubernetes/manifests/etcd.yaml',
  '/etc/kubernetes/manifests/kube-apiserver.yaml', '/etc/rancher/k3s/config.yaml', '/var/lib/rancher/k3s/server/db/etcd/config',
  '/proc/1/mountinfo', '/proc/4242/cmdline', '/proc/4242/environ', '/proc/4242/mountinfo', '/sys/dev/block/8:1/partition',
];

const tricky = fc.constantFrom(
  '', '\n', '\0\0\0', '../../../../etc/passwd', 'CONFIG_HZ=abc\nCONFIG_HZ_1000=y', 'now at -5 nsecs\njiffies: x',
  '[main]\ninclude=balanced\n', '[balanced]\nvirt=(unclosed\n/etc/hostname=[\n', 'processor\t: 0\nflags\t\t: hypervisor',
  'timestamp 99999999999999999999999', 'etcd\0--data-dir=/var/lib/etcd\0--listen-metrics-urls=http://127.0.0.1:1\0',
  'ETCD_DATA_DIR=/var/lib/etcd\n', '21 0 8:1 / / rw - ext4 /dev/sda1 rw\n', 'spec:\n  containers:\n  - command: [etcd, --data-dir=/x]\n', '1'.repeat(5000), '${f:exec:cat:/etc/shadow}', '99999999999', 'performance powersave\n',
);
test('no collector throws on garbage host files', async () => {
  await assertCollectorsSurviveGarbage({ collectors: COLLECTORS, files: PARSED_FILES, tricky, maxKeys: 12, numRuns: 150 });
});

test('the rule loader turns any garbage file into located errors, never an exception', async () => {
  const { loadRules } = await import('../../src/rules/load.ts');
  const dir = await mkdtemp(path.join(os.tmpdir(), 'nta-rules-garbage-'));
  const yamlish = fc.oneof(
    fc.string({ maxLength: 400 }),
    fc.constantFrom('apiVersion: node-tuning-advisor.io/v1\nkind: RuleSet\nrules:\n  - id: [\n', 'kind: RuleOverrides\noverrides: 3\n', '---\n---\n', '&a [*a]'),
    fc.jsonValue().map((value) => `apiVersion: node-tuning-advisor.io/v1\nkind: RuleSet\nrules: ${JSON.stringify(value)}\n`),
  );
  try {
    await fc.assert(
      fc.asyncProperty(yamlish, async (text) => {
        await writeFile(path.join(dir, 'garbage.yaml'), text);
        const result = await loadRules([dir]);
        for (const error of result.errors) assert.ok(error.line >= 0 && error.message.length > 0);
        if (result.errors.length === 0) assert.ok(Array.isArray(result.rules));
      }),
      { numRuns: 200 },
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
