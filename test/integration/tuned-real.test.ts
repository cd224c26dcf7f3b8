// The real tuned package on this machine: what tuned-adm says must match what we compute from files.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import cpu from '../../src/collectors/cpu.ts';
import tuned from '../../src/collectors/tuned/collector.ts';
import { recommendProfile } from '../../src/collectors/tuned/recommend.ts';
import { collectFacts } from '../../src/collectors/run.ts';
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

// ---- TuneD's own profile loader as the oracle for our merge ---------------------------------

import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { loadProfiles } from '../../src/collectors/tuned/profiles.ts';
import { fixtureHost } from '../helpers/fixtures.ts';

/** Loads `names` with TuneD's Loader/Locator/Merger (virt_check answered by `virtualized`), run by tuned's own interpreter. */
const ORACLE = `
import json, sys
import tuned.profiles.loader as L, tuned.profiles.locator as Lo, tuned.profiles.merger as M, tuned.profiles.factory as F, tuned.profiles.variables as V
import tuned.profiles.functions.function_virt_check as VC
args = json.loads(sys.argv[1])
VC.virt_check.execute = lambda self, a: (a[0] if args['virtualized'] else a[1])
order = []
merge = M.Merger.merge
def recording(self, configs):
    order.extend(p.name for p in configs)
    return merge(self, configs)
M.Merger.merge = recording
created = []
create = F.Factory.create
def creating(self, name, config):
    created.append(name)
    return create(self, name, config)
F.Factory.create = creating
loader = L.Loader(Lo.Locator(args['dirs']), F.Factory(), M.Merger(), None, V.Variables())
try:
    profile = loader.load(args['names'])
except Exception as e:
    print(json.dumps({'error': str(e)})); sys.exit(0)
if not order: order.extend(created)
units = {n: {'type': u.type, 'enabled': u.enabled, 'devices': u.devices, 'options': dict(u.options)} for n, u in profile.units.items()}
print(json.dumps({'order': [n.lstrip('-') for n in order], 'units': units}))
`;

function tunedInterpreter(tunedAdm: string): string {
  const shebang = spawnSync('head', ['-1', tunedAdm], { encoding: 'utf8' }).stdout.trim();
  return /^#!\s*(\S+)/.exec(shebang)?.[1] ?? '/usr/bin/python3';
}

function oracle(python: string, root: string, localDirs: string[], names: string[], virtualized: boolean): { error: string } | { order: string[]; units: Record<string, unknown> } {
  const dirs = localDirs.map((dir) => path.join(root, dir));
  const out = spawnSync(python, ['-Es', '-c', ORACLE, JSON.stringify({ dirs, names, virtualized })], { encoding: 'utf8', cwd: os.tmpdir() });
  return JSON.parse(out.stdout);
}

async function ours(root: string, dirsLowFirst: string[], names: string[], virtualized: boolean) {
  const result = await loadProfiles({ host: new HostRoot(root), dirs: [...dirsLowFirst].reverse(), virtualized }, names);
  if (!result.ok) return { error: result.reason };
  const units = Object.fromEntries([...result.merged.units].filter(([name]) => name !== 'variables').map(([name, unit]) => [
    name, {
      type: unit.type, enabled: unit.enabled, devices: unit.devices,
      // TuneD's loader expands ${i:PROFILE_DIR} to the local directory of the file that set the option.
      options: Object.fromEntries([...unit.options].map(([key, set]) => [key, set.value.replaceAll('${i:PROFILE_DIR}', path.join(root, path.dirname(set.file)))])),
    },
  ]));
  return { order: result.profiles.map((p) => p.name), units };
}

function comparable(result: { error: string } | { order: string[]; units: Record<string, unknown> }) {
  if ('error' in result) return 'error';
  // [variables] is consumed by the loader, and script= becomes a path list there: neither is a setting we judge.
  const units = Object.fromEntries(Object.entries(result.units).filter(([name]) => name !== 'variables').map(([name, unit]) => {
    const { options, ...rest } = unit as { options: Record<string, unknown> };
    return [name, { ...rest, options: Object.fromEntries(Object.entries(options).filter(([key]) => key !== 'script')) }];
  }));
  return { order: result.order, units };
}

test('our profile merge equals TuneD\'s own loader on the tuned fixtures (real Debian and upstream profiles)', async (t) => {
  const tunedAdm = requireTool(t, 'tuned-adm', 'tuned');
  if (!tunedAdm) return;
  const python = tunedInterpreter(tunedAdm);
  const cases: [string, string[], string[], boolean][] = [
    ['tuned-merge-powersave', ['usr/lib/tuned', 'etc/tuned'], ['throughput-performance', 'powersave'], false],
    ['tuned-custom-openshift', ['usr/lib/tuned', 'etc/tuned'], ['site-node'], false],
    ['tuned-custom-openshift', ['usr/lib/tuned', 'etc/tuned'], ['site-node'], true],
    ['tuned-conditional-include', ['usr/lib/tuned', 'etc/tuned'], ['cp-site'], false],
    ['tuned-post-loaded', ['usr/lib/tuned', 'etc/tuned'], ['throughput-performance', 'powersave'], false],
    ['tuned-sap-hana-kvm-guest', ['usr/lib/tuned/profiles', 'etc/tuned/profiles'], ['sap-hana-kvm-guest'], true],
    ['rhel-hz1000-tuned-merged', ['usr/lib/tuned/profiles', 'etc/tuned/profiles'], ['throughput-performance', 'cp-overrides'], false],
  ];
  for (const [fixture, dirs, names, virtualized] of cases) {
    const root = fixtureHost(fixture);
    assert.deepEqual(comparable(await ours(root, dirs, names, virtualized)), comparable(oracle(python, root, dirs, names, virtualized)), `${fixture} ${names.join(' ')}`);
  }
});

const NAMES = ['base', 'perf', 'save', 'site', 'local'];
const governor = fc.constantFrom('performance', 'powersave', 'ondemand|powersave', 'conservative|powersave');
const unitText = fc.record({
  section: fc.constantFrom('cpu', 'cpu_extra', 'sysctl'),
  governor: fc.option(governor, { nil: undefined }),
  epb: fc.option(fc.constantFrom('performance', 'power', 'normal'), { nil: undefined }),
  replace: fc.boolean(),
  disabled: fc.boolean(),
  drop: fc.boolean(),
  typed: fc.boolean(),
}).map((u) => [
  `[${u.section}]`,
  ...(u.typed && u.section !== 'cpu' ? ['type=cpu'] : []),
  ...(u.governor ? [`governor=${u.governor}`] : []),
  ...(u.epb ? [`energy_perf_bias=${u.epb}  # inline comment`] : []),
  ...(u.replace ? ['replace=1'] : []),
  ...(u.disabled ? ['enabled=false'] : []),
  ...(u.drop ? ['drop=governor'] : []),
].join('\n'));
const includeEntry = fc.oneof(
  fc.constantFrom(...NAMES),
  fc.constantFrom(...NAMES).map((n) => `-${n}`),
  fc.constant('-ghost'),
  fc.tuple(fc.constantFrom(...NAMES), fc.constantFrom(...NAMES)).map(([a, b]) => `\${f:virt_check:${a}:${b}}`),
);
const profileText = fc.record({
  include: fc.array(includeEntry, { maxLength: 3 }),
  units: fc.array(unitText, { maxLength: 3 }),
}).map(({ include, units }) => ['[main]', 'summary=generated', ...(include.length ? [`include=${include.join(', ')}`] : []), '', ...units].join('\n'));
const forest = fc.record({
  profiles: fc.dictionary(fc.constantFrom(...NAMES), fc.record({ text: profileText, dirs: fc.constantFrom<string[]>(['usr/lib/tuned'], ['etc/tuned'], ['usr/lib/tuned', 'etc/tuned']) }), { minKeys: 1 }),
  active: fc.array(fc.constantFrom(...NAMES), { minLength: 1, maxLength: 2 }),
  virtualized: fc.boolean(),
});

test('property: random profile forests (includes, -conditional, virt_check, replace, drop, enabled, type=cpu) merge as TuneD merges them', async (t) => {
  const tunedAdm = requireTool(t, 'tuned-adm', 'tuned');
  if (!tunedAdm) return;
  const python = tunedInterpreter(tunedAdm);
  const base = await mkdtemp(path.join(os.tmpdir(), 'nta-tuned-forest-'));
  t.after(() => rm(base, { recursive: true, force: true }));
  let run = 0;
  await fc.assert(
    fc.asyncProperty(forest, async ({ profiles, active, virtualized }) => {
      const root = path.join(base, String(run++));
      for (const [name, { text, dirs }] of Object.entries(profiles)) {
        for (const dir of dirs) {
          await mkdir(path.join(root, dir, name), { recursive: true });
          await writeFile(path.join(root, dir, name, 'tuned.conf'), dir.startsWith('etc') ? text.replace('summary=generated', 'summary=site copy') : text);
        }
      }
      await mkdir(path.join(root, 'usr/lib/tuned'), { recursive: true });
      await mkdir(path.join(root, 'etc/tuned'), { recursive: true });
      const dirs = ['usr/lib/tuned', 'etc/tuned'];
      assert.deepEqual(comparable(await ours(root, dirs, active, virtualized)), comparable(oracle(python, root, dirs, active, virtualized)));
      await rm(root, { recursive: true, force: true });
    }),
    { numRuns: 40 },
  );
});
