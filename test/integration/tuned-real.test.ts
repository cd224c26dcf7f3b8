// The real tuned package on this machine: what tuned-adm says must match what we compute from files.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import cpu from '../../src/collectors/cpu.ts';
import tuned from '../../src/collectors/tuned.ts';
import { recommendProfile } from '../../src/collectors/tuned-recommend.ts';
import { collectFacts } from '../../src/facts/collect.ts';
import { HostRoot } from '../../src/host/host-root.ts';
import { requireTool } from '../helpers/tools.ts';

/** tuned-adm's stdout; it exits 1 for "No current active profile.", which is still an answer. */
function tunedAdm(args: string[]): string {
  return spawnSync('tuned-adm', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).stdout.trim();
}

test('our recommend-rule evaluation agrees with tuned-adm recommend on this host', async (t) => {
  if (!requireTool(t, 'tuned-adm', 'tuned')) return;
  if (process.getuid?.() !== 0) return t.skip('tuned-adm recommend needs root for its virt= rules');
  const host = new HostRoot('/');
  const facts = await collectFacts(host, { collectors: [cpu, tuned] });
  const fromTunedAdm = tunedAdm(['recommend']).split('\n').at(-1);
  assert.deepEqual(facts.get('tuned.recommendedProfile'), { value: fromTunedAdm, source: 'command:tuned-adm recommend' });
  const virt = facts.value('cpu.virtualized') === true ? String(facts.value('cpu.hypervisor')) : '';
  const computed = await recommendProfile({ host, virt }, true);
  assert.equal('profile' in computed ? computed.profile : computed.unknown, fromTunedAdm);
});

test('installed tuned is detected with the profiles its package ships', async (t) => {
  if (!requireTool(t, 'tuned-adm', 'tuned')) return;
  const facts = await collectFacts(new HostRoot('/'), { collectors: [cpu, tuned] });
  assert.equal(facts.value('tuned.installed'), true);
  const profiles = facts.value('tuned.profiles') as string[];
  for (const profile of ['balanced', 'throughput-performance', 'virtual-guest']) assert.ok(profiles.includes(profile), profile);
  const active = tunedAdm(['active']);
  const expected = /^Current active profile: (.+)$/m.exec(active)?.[1]?.split(/\s+/) ?? [];
  assert.deepEqual(facts.value('tuned.activeProfiles'), expected);
});
