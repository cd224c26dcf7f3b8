// What the bundle keeps out, read from esbuild's metafile of a real build: each command loads only
// its own chunk (scan never the Kubernetes client or prom-client, --version no package at all);
// client-node's generated models and npm undici are replaced by stubs whose fit is checked against
// the installed packages; the output is ASCII (one byte per character in V8) and the fsync worker is
// a .mjs file (no type stripping, which needs WebAssembly).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { cp, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Metafile } from 'esbuild';
import { asciiOnly, bundleSnippet, checkReplacements, ruleFileValidatorModule, namedImports, replacementProblems } from '../../scripts/bundle.ts';
import { REPLACEMENTS } from '../../scripts/replacements.ts';
import { loadedBy, packageOf } from '../../scripts/bundle-costs.ts';
import { bundleTo } from '../helpers/bundle-cache.ts';
import { parse } from 'yaml';
import { pathToFileURL } from 'node:url';
import { validateRuleFile } from '../../src/rules/file-validator.ts';
import { FakeApiServer } from '../helpers/fake-apiserver.ts';
import { REPO } from '../helpers/manifests.ts';
import { imageEntrypoint, splitNodeCommand } from '../helpers/shipped-agent.ts';

const GEN = REPLACEMENTS.find((r) => r.specifier === './gen/index.js')!;
const CONFIG_JS = "import { Agent as UndiciAgent, ProxyAgent as UndiciProxyAgent, } from 'undici';\n" +
  "import { createConfiguration, ServerConfiguration, } from './gen/index.js';\n";

describe('module replacements fail the build when they no longer fit', () => {
  test('named imports as config.js writes them', () => {
    assert.deepEqual(namedImports(CONFIG_JS, './gen/index.js'), { names: ['ServerConfiguration', 'createConfiguration'] });
    assert.deepEqual(namedImports(CONFIG_JS, 'undici'), { names: ['Agent', 'ProxyAgent'] });
  });

  test('fits: the importer takes exactly the stub\'s names and the real module has them', () => {
    assert.deepEqual(replacementProblems(GEN, CONFIG_JS, ['createConfiguration', 'ServerConfiguration'], ['createConfiguration', 'ServerConfiguration', 'CoreV1Api']), []);
  });

  test('a name the importer starts to use, a name it stops using, a name the real module drops', () => {
    const more = CONFIG_JS.replace('ServerConfiguration, }', 'ServerConfiguration, RequestContext }');
    assert.match(replacementProblems(GEN, more, ['createConfiguration', 'ServerConfiguration'], ['createConfiguration', 'ServerConfiguration', 'RequestContext'])[0] ?? '',
      /now imports RequestContext, which the stub lacks/);
    const fewer = CONFIG_JS.replace('createConfiguration, ', '');
    assert.match(replacementProblems(GEN, fewer, ['createConfiguration', 'ServerConfiguration'], ['createConfiguration', 'ServerConfiguration'])[0] ?? '',
      /no longer imports createConfiguration; shrink the stub/);
    assert.match(replacementProblems(GEN, CONFIG_JS, ['createConfiguration', 'ServerConfiguration'], ['createConfiguration'])[0] ?? '',
      /real module no longer exports ServerConfiguration/);
  });

  test('a namespace, default or dynamic import, a re-export, or no import at all cannot be stubbed by name', () => {
    for (const [text, problem] of [
      ["import * as gen from './gen/index.js';", /not only named bindings/],
      ["import gen from './gen/index.js';", /not only named bindings/],
      ["const gen = await import('./gen/index.js');", /with import\(\)/],
      ["export { createConfiguration } from './gen/index.js';", /re-exports/],
      ["import { x } from './other.js';", /no longer imports/],
    ] as const) {
      assert.match(replacementProblems(GEN, text, ['createConfiguration'], ['createConfiguration'])[0] ?? '', problem, text);
    }
  });

  test('the installed client-node and undici still fit the stubs', async () => {
    await checkReplacements();
  });
});

test('asciiOnly: regular expressions and strings mean the same with their non-ASCII characters escaped', () => {
  // The characters themselves (the escapes are this file's, resolved when the string is built).
  const source = '[/([0-9.]+[a-z\u00b5\u03bc]+)/, /[+-]([^\u00b0]*)/g, /\u{1F600}+/u, /[\u{1F600}]/, "\u00e9t\u00e9"]';
  assert.match(source, /[^\x00-\x7f]/, 'the sample holds non-ASCII characters');
  const escaped = asciiOnly(source);
  assert.doesNotMatch(escaped, /[^\x00-\x7f]/);
  const [before, after] = [source, escaped].map((text) => (0, eval)(text) as [RegExp, RegExp, RegExp, RegExp, string]);
  for (const sample of ['12.5\u00b5s', '3\u03bcs', '+41.0\u00b0C', '\u{1F600}\u{1F600}', '\u00e9t\u00e9']) {
    for (let i = 0; i < 4; i++) assert.deepEqual(String(sample.match(after![i] as RegExp)), String(sample.match(before![i] as RegExp)), `${sample} ${before![i]}`);
  }
  assert.equal(after![4], before![4]);
  assert.throws(() => asciiOnly('/\\\u00b5/'), /after a backslash/);
});

test('the rule file validator compiled at build time judges as the one compiled at run time', async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'nta-validator-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const file = await bundleSnippet(await ruleFileValidatorModule(), dir);
  const { validateRuleFile: precompiled } = await import(pathToFileURL(file).href) as { validateRuleFile: typeof validateRuleFile };
  const samples: unknown[] = [];
  for (const name of (await readdir(path.join(REPO, 'rules'))).filter((f) => f.endsWith('.yaml'))) {
    const doc = parse(await readFile(path.join(REPO, 'rules', name), 'utf8'));
    samples.push(doc);
    // Each key of the first rule deleted, or given a value of another type; the file's own keys too.
    for (const [list, target] of [['rules', doc.rules?.[0]], [undefined, doc]] as const) {
      for (const key of Object.keys(target ?? {})) {
        for (const value of [undefined, 42, 'x'.repeat(300), {}, [], [{}], null, true]) {
          const copy = structuredClone(doc);
          const at = list ? copy[list][0] : copy;
          if (value === undefined) delete at[key]; else at[key] = value;
          samples.push(copy);
        }
      }
    }
  }
  samples.push({ apiVersion: 'node-tuning-advisor.io/v1', kind: 'RuleOverrides', overrides: [{ id: 'Bad Id', severty: 'info' }] }, 'text', 7, null, []);
  let failing = 0;
  for (const sample of samples) {
    const ok = validateRuleFile(sample);
    assert.equal(precompiled(sample), ok, JSON.stringify(sample).slice(0, 200));
    assert.deepEqual(precompiled.errors ?? null, validateRuleFile.errors ?? null);
    if (!ok) failing++;
  }
  assert.ok(failing > samples.length / 2, `${failing} of ${samples.length} samples are invalid: the comparison covers errors`);
});

describe('the built bundle', () => {
  let dir: string;
  let meta: Metafile;
  let files: string[];
  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'nta-bundle-'));
    ({ metafile: meta } = await bundleTo(path.join(dir, 'app/dist/bundle')));
    files = await readdir(path.join(dir, 'app/dist/bundle'));
    await cp(path.join(REPO, 'rules'), path.join(dir, 'app/rules'), { recursive: true });
    await cp(path.join(REPO, 'package.json'), path.join(dir, 'app/package.json'));
  });
  after(() => rm(dir, { recursive: true, force: true }));
  const packages = (command?: string) => [...loadedBy(meta, 'node-tuning-advisor.mjs', command && `src/cli/commands/${command}.ts`).packages.keys()];

  test('--version loads our own code only; each command is a chunk loaded when it runs', () => {
    assert.deepEqual(packages(), ['own code']);
    for (const command of ['scan', 'facts', 'rules', 'probe', 'agent', 'report']) assert.ok(packages(command).includes('own code'), command);
  });

  test('scan, facts, rules and probe load neither the Kubernetes client nor prom-client; execa, systeminformation and smol-toml load on use', () => {
    const kube = /^@kubernetes\/|^prom-client$|^js-yaml$|^@opentelemetry\//;
    for (const command of ['scan', 'facts', 'rules', 'probe']) {
      assert.deepEqual(packages(command).filter((p) => kube.test(p)), [], command);
      assert.deepEqual(packages(command).filter((p) => p === 'execa' || p === 'systeminformation' || p === 'smol-toml'), [], command);
    }
    assert.ok(packages('agent').includes('@kubernetes/client-node') && packages('agent').includes('prom-client'), 'the check sees them where they are');
    assert.ok(Object.keys(meta.inputs).some((i) => packageOf(i) === 'smol-toml'), 'smol-toml is in the bundle, in a chunk of its own');
  });

  test('the cluster commands and the plugin\'s dispatcher load not the scan pipeline (collectors, src/scan.ts)', () => {
    const inputsOf = (command: string) => loadedBy(meta, 'node-tuning-advisor.mjs', `src/cli/commands/${command}.ts`).files
      .flatMap((file) => Object.entries(meta.outputs).filter(([out]) => out.endsWith(`/${file}`) || out === file).flatMap(([, o]) => Object.keys(o.inputs)));
    for (const command of ['report', 'describe', 'measure', 'kubectl-plugin', 'rules']) {
      assert.deepEqual(inputsOf(command).filter((i) => ['src/collectors/index.ts', 'src/collectors/run.ts', 'src/scan.ts'].includes(i)), [], command);
    }
    assert.ok(inputsOf('scan').includes('src/collectors/index.ts'), 'the check sees them where they are');
  });

  test('no npm undici, none of client-node\'s generated code but the stubs, of ajv only its runtime helpers', () => {
    const inputs = Object.keys(meta.inputs);
    assert.deepEqual(inputs.filter((i) => packageOf(i) === 'ajv' && !i.startsWith('node_modules/ajv/dist/runtime/')), []);
    assert.deepEqual(inputs.filter((i) => packageOf(i) === 'undici'), []);
    assert.deepEqual(inputs.filter((i) => i.includes('client-node/dist/gen/') && !i.endsWith('rxjsStub.js')), []);
    for (const r of REPLACEMENTS) assert.ok(inputs.includes(r.stub), r.stub);
  });

  test('every output is ASCII, names no WebAssembly, and the fsync worker is .mjs, loaded as such', async () => {
    assert.deepEqual(files.filter((f) => !f.endsWith('.mjs')), []);
    assert.ok(files.includes('fsync-worker.mjs'));
    for (const file of files) {
      const bytes = await readFile(path.join(dir, 'app/dist/bundle', file));
      assert.equal(bytes.findIndex((b) => b > 0x7f), -1, `${file} is ASCII`);
    }
    const all = (await Promise.all(files.map((f) => readFile(path.join(dir, 'app/dist/bundle', f), 'utf8')))).join('\n');
    assert.match(all, /new Worker\(new URL\("\.\/fsync-worker\.mjs",import\.meta\.url\)/);
    // Under `node --lite-mode` (the image's ENTRYPOINT) the WebAssembly global does not exist.
    assert.doesNotMatch(all, /WebAssembly/);
  });

  /** Runs the bundle with the image's node flags; returns what it printed and the built-in modules it loaded. */
  async function loaded(args: string[], env: Record<string, string> = {}): Promise<{ stdout: string; modules: string[] }> {
    const { nodeFlags } = splitNodeCommand(await imageEntrypoint());
    const hook = `data:text/javascript,${encodeURIComponent("process.on('exit', () => process.stderr.write('\\nLOADED ' + process.moduleLoadList.join(',') + '\\n'))")}`;
    const run = await promisify(execFile)(process.execPath, [...nodeFlags, '--import', hook, path.join(dir, 'app/dist/bundle/node-tuning-advisor.mjs'), ...args],
      { env: { PATH: process.env.PATH ?? '', ...env } }).catch((e: { stdout: string; stderr: string; code: number }) => e);
    const modules = /^LOADED (.*)$/m.exec(run.stderr)?.[1]?.split(',') ?? [];
    assert.ok(modules.length > 0, run.stderr);
    return { stdout: run.stdout, modules };
  }
  const NODE_UNDICI = 'NativeModule internal/deps/undici/undici';

  test('scan and the agent never load Node\'s internal undici (node:http is imported without its WebSocket getters)', async () => {
    assert.doesNotMatch((await Promise.all(files.map((f) => readFile(path.join(dir, 'app/dist/bundle', f), 'utf8')))).join('\n'), /from\s*"(node:)?http"/);
    const scan = await loaded(['scan', '--host-root', path.join(REPO, 'test/fixtures/hosts/etcd-kubeadm-nvme'), '--output', 'json']);
    assert.ok(JSON.parse(scan.stdout).findings.length > 0);
    assert.ok(!scan.modules.includes(NODE_UNDICI));
    assert.ok(!scan.modules.includes('NativeModule https'), 'scan loads no TLS client');
    const api = new FakeApiServer();
    await api.start();
    try {
      api.addNode('worker-1');
      const agent = await loaded(['agent', '--kubeconfig', api.writeKubeconfig(), '--node-name', 'worker-1', '--once', '--dry-run',
        '--host-root', path.join(REPO, 'test/fixtures/hosts/etcd-kubeadm-nvme'), '--metrics-addr', '127.0.0.1:0', '--startup-jitter', '0s', '--probe-interval', 'off']);
      assert.match(agent.stdout, /PATCH/);
      assert.ok(agent.modules.includes('NativeModule https') && agent.modules.includes('NativeModule http'), 'the agent serves /metrics over node:http');
      assert.ok(!agent.modules.includes(NODE_UNDICI));
    } finally {
      await api.stop();
    }
  });

  test('the bundle (build-time validator and parsed rule files) prints what the sources print: scan JSON, rules list, a rule file error', async (t) => {
    const fixture = path.join(REPO, 'test/fixtures/hosts/etcd-kubeadm-nvme');
    const bad = await mkdtemp(path.join(tmpdir(), 'nta-bad-rules-'));
    t.after(() => rm(bad, { recursive: true, force: true }));
    // A bundled file with one key misspelt: its text is no longer the one built from, so it is parsed.
    const host = await readFile(path.join(REPO, 'rules/host.yaml'), 'utf8');
    await writeFile(path.join(bad, 'host.yaml'), host.replace(/^(\s+)severity:/m, '$1severty:'));
    const sameTimes = (text: string) => text.replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/g, 'TIME');
    const run = (argv: string[]) => promisify(execFile)(process.execPath, argv, { env: { PATH: process.env.PATH ?? '' } })
      .catch((e: { stdout: string; stderr: string; code: number }) => e);
    for (const args of [['scan', '--host-root', fixture, '-o', 'json', '--fail-on', 'never'], ['rules', 'list'], ['rules', 'lint', '--no-bundled-rules', bad]]) {
      const [bundled, source] = await Promise.all([run([path.join(dir, 'app/dist/bundle/node-tuning-advisor.mjs'), ...args]), run([path.join(REPO, 'bin/node-tuning-advisor.js'), ...args])]);
      assert.equal(sameTimes(bundled.stdout), sameTimes(source.stdout), args.join(' '));
      assert.equal(bundled.stderr, source.stderr, args.join(' '));
    }
  });
});
