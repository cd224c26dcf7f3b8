// The kubectl plugin as a user gets it: `npm pack` of this repository, installed into a clean
// prefix, found by the real kubectl on the PATH, run against the real API server. The installed
// package must run the compiled bundle: Node refuses to strip types under node_modules.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cp as copy, mkdir, mkdtemp, readFile, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { parse } from 'yaml';
import { ControlPlane, realServerTier } from '../helpers/control-plane.ts';
import { fixtureHost } from '../helpers/fixtures.ts';
import { createReadyNode, ensureNamespace } from '../helpers/kube-objects.ts';
import { requireTool, toolPath } from '../helpers/tools.ts';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const NODE = 'plug-failing';

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

/** The files `npm pack` needs to build the bundle (prepack), in a copy of their own: two suites may run at once. */
async function projectCopy(dir: string): Promise<string> {
  const app = path.join(dir, 'app');
  await mkdir(app);
  for (const entry of ['package.json', 'package-lock.json', 'README.md', 'bin', 'scripts', 'src', 'rules']) {
    await copy(path.join(ROOT, entry), path.join(app, entry), { recursive: true });
  }
  await symlink(path.join(ROOT, 'node_modules'), path.join(app, 'node_modules'));
  return app;
}

async function files(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries.filter((e) => e.isFile()).map((e) => path.relative(dir, path.join(e.parentPath, e.name)));
}

describe('kubectl node-tuning, installed from npm pack into a clean prefix', realServerTier(), () => {
  let work: string;
  let prefix: string;
  let tarball: string;
  let cp: ControlPlane;
  let kubeconfig: string;
  let env: NodeJS.ProcessEnv;

  /** A command of the installed package (or kubectl), with only the PATH and HOME we give it. */
  async function sh(command: string, args: string[], extra: NodeJS.ProcessEnv = {}): Promise<Ran> {
    try {
      const { stdout, stderr } = await run(command, args, { env: { ...env, ...extra }, encoding: 'utf8', timeout: 60_000 });
      return { code: 0, stdout, stderr };
    } catch (error) {
      const e = error as { code?: number | string; stdout?: string; stderr?: string };
      return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? String(error) };
    }
  }

  before(async () => {
    work = await mkdtemp(path.join(tmpdir(), 'nta-plugin-'));
    prefix = path.join(work, 'prefix');
    const packAndInstall = async (): Promise<void> => {
      const app = await projectCopy(work);
      const packed = await run('npm', ['pack', '--pack-destination', work, '--silent'], { cwd: app, encoding: 'utf8', timeout: 120_000 });
      tarball = path.join(work, packed.stdout.trim().split('\n').at(-1) as string);
      await run('npm', ['install', '--global', '--prefix', prefix, tarball, '--offline', '--no-audit', '--no-fund'], { encoding: 'utf8', timeout: 120_000 });
    };
    // The control plane starts while npm packs and installs (neither needs the other).
    [cp] = await Promise.all([ControlPlane.start(), packAndInstall()]);
    // Node 24 (the one running this test) on the PATH, as an operator's machine would have it; no ~/.kube of this machine.
    env = { PATH: [path.join(prefix, 'bin'), path.dirname(process.execPath), '/usr/local/bin', '/usr/bin', '/bin'].join(':'), HOME: work, COLUMNS: '80' };
    // Two contexts: the current one points nowhere, so only --context reaches the cluster.
    const admin = await readFile(cp.kubeconfig, 'utf8');
    kubeconfig = path.join(work, 'two-contexts.kubeconfig');
    await writeFile(kubeconfig, `${admin
      .replace('clusters:\n', 'clusters:\n- name: elsewhere\n  cluster: {server: "https://127.0.0.1:1"}\n')
      .replace('contexts:\n', 'contexts:\n- name: elsewhere\n  context: {cluster: elsewhere, user: admin}\n')
      .replace(/current-context: .*/, 'current-context: elsewhere')}`, { mode: 0o600 });
    // The agent takes the kubelet's version from the Node: seed 000 ran kubelet 1.20.2.
    await createReadyNode(cp, NODE, { kubeletVersion: 'v1.20.2' });
  });
  after(async () => {
    await cp?.stop();
    if (work) await rm(work, { recursive: true, force: true });
  });

  test('the tarball ships the bundle and the rules, no TypeScript; the install has no npm dependencies', async (t) => {
    const tar = requireTool(t, 'tar', 'tar');
    if (!tar) return;
    const listed = (await run(tar, ['-tzf', tarball], { encoding: 'utf8' })).stdout.trim().split('\n');
    assert.ok(listed.every((f) => !f.endsWith('.ts')), listed.join('\n'));
    for (const f of ['dist/bundle/node-tuning-advisor.mjs', 'dist/bundle/kubectl-node_tuning.mjs', 'dist/bundle/fsync-worker.mjs', 'rules/host.yaml', 'package.json']) {
      assert.ok(listed.includes(`package/${f}`), f);
    }
    const installed = await files(path.join(prefix, 'lib', 'node_modules', 'node-tuning-advisor'));
    assert.ok(!installed.some((f) => f.startsWith('node_modules')), 'bundled: nothing to install beside it');
    const version = await sh('node-tuning-advisor', ['--version']);
    assert.match(version.stdout, /^node-tuning-advisor \d+\.\d+\.\d+ \(Node v24\./);
  });

  test('npm run krew:manifest writes the release\'s manifest for the packed tarball: the sha256 of what krew downloads from its uri; installed as krew does (file moves, a link named kubectl-node_tuning to bin), run by kubectl', async (t) => {
    const tar = requireTool(t, 'tar', 'tar');
    const kubectl = toolPath('kubectl') ?? requireTool(t, 'kubectl', 'kubernetes-client');
    if (!tar || !kubectl) return;
    // The release host: a loopback server with the tarball at the path the manifest names.
    const release = (JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
    const hosted = `/node-tuning-advisor/v${release}/${path.basename(tarball)}`;
    const body = await readFile(tarball);
    const server = createServer((req, res) => { if (req.url === hosted) res.writeHead(200, { 'content-type': 'application/gzip' }).end(body); else res.writeHead(404).end(); });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    t.after(() => { server.closeAllConnections(); server.close(); });
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}${hosted}`;
    const generated = path.join(work, 'krew', 'node-tuning.yaml');
    await run(process.execPath, [path.join(ROOT, 'scripts/krew-manifest.ts'), '--version', release, '--url', url, '--archive', tarball, '--output', generated], { encoding: 'utf8' });
    const manifest = parse(await readFile(generated, 'utf8'));
    const platform = manifest.spec.platforms[0];
    assert.equal(manifest.spec.version, `v${release}`);
    assert.equal(platform.uri, url);
    // What krew does first: download the uri and compare its sha256 with the manifest's.
    const downloaded = Buffer.from(await (await fetch(platform.uri)).arrayBuffer());
    assert.equal(createHash('sha256').update(downloaded).digest('hex'), platform.sha256, 'the manifest\'s sha256 is the downloaded file\'s');
    const archive = path.join(work, 'krew-download.tgz');
    await writeFile(archive, downloaded);
    const staging = path.join(work, 'krew-staging');
    const store = path.join(work, 'krew-store');
    const bin = path.join(work, 'krew-bin');
    await Promise.all([staging, store, bin].map((d) => mkdir(d)));
    await run(tar, ['-xzf', archive, '-C', staging]);
    // krew's moveToInstallDir for `from: DIR/*`: every entry of DIR into `to`.
    for (const op of platform.files as { from: string; to: string }[]) {
      assert.match(op.from, /^[\w.-]+\/\*$/, 'a move of one directory\'s entries (what this test lays out)');
      const from = path.join(staging, op.from.slice(0, -2));
      for (const entry of await readdir(from)) await copy(path.join(from, entry), path.join(store, op.to, entry), { recursive: true });
    }
    // krew links bin/kubectl-<name, - as _> to the plugin's bin; it sets no mode, so the tarball's must do.
    const link = path.join(bin, `kubectl-${manifest.metadata.name.replaceAll('-', '_')}`);
    await symlink(path.relative(bin, path.join(store, platform.bin)), link);
    const env = { PATH: [bin, path.dirname(process.execPath), '/usr/bin', '/bin'].join(':'), HOME: work };
    const list = await run(kubectl, ['plugin', 'list'], { env, encoding: 'utf8' }).catch((e) => e);
    assert.match(list.stdout, new RegExp(`${link}$`, 'm'), `${list.stdout}${list.stderr}`);
    assert.doesNotMatch(list.stderr ?? '', /not executable/, 'bin is executable as packed');
    const version = await run(kubectl, ['node-tuning', 'version'], { env, encoding: 'utf8' });
    assert.match(version.stdout, new RegExp(`^node-tuning-advisor ${manifest.spec.version.slice(1).replaceAll('.', '\\.')} `));
  });

  test('kubectl finds the plugin on the PATH; its probe worker runs from node_modules', async (t) => {
    const kubectl = toolPath('kubectl') ?? requireTool(t, 'kubectl', 'kubernetes-client');
    if (!kubectl) return;
    const list = await sh(kubectl, ['plugin', 'list']);
    assert.match(list.stdout, new RegExp(`${path.join(prefix, 'bin', 'kubectl-node_tuning')}$`, 'm'), list.stdout + list.stderr);
    assert.match((await sh(kubectl, ['node-tuning', 'version'])).stdout, /^node-tuning-advisor \d+\.\d+\.\d+/);
    const probeDir = path.join(work, 'probe');
    await mkdir(probeDir);
    const probe = await sh('node-tuning-advisor', ['probe', 'fsync', '--dir', probeDir, '--size', '64KiB', '-o', 'json']);
    assert.equal(probe.code, 0, probe.stderr);
    assert.equal(JSON.parse(probe.stdout).ok, true);
  });

  test('kubectl node-tuning describe NODE: --kubeconfig, --context, $KUBECONFIG, -o json|yaml, and the terminal view', async (t) => {
    const kubectl = toolPath('kubectl') ?? requireTool(t, 'kubectl', 'kubernetes-client');
    if (!kubectl) return;
    // The agents' namespace, where its --once renews its heartbeat: the node is current, not stale.
    await ensureNamespace(cp, 'node-tuning-advisor');
    const agent = await sh('node-tuning-advisor', ['agent', '--kubeconfig', cp.kubeconfig, '--node-name', NODE, '--host-root', fixtureHost('seed-000-before'), '--once']);
    assert.equal(agent.code, 0, agent.stderr);
    assert.doesNotMatch(agent.stderr, /heartbeat .*failed/);

    // Every read below at once: none writes.
    const [wrongContext, view, json, yamlRun, noContext, missing] = await Promise.all([
      sh(kubectl, ['node-tuning', 'describe', NODE, '--kubeconfig', kubeconfig]),
      sh(kubectl, ['node-tuning', 'describe', NODE, '--kubeconfig', kubeconfig, '--context', 'admin@envtest']),
      sh(kubectl, ['node-tuning', 'describe', NODE, '--context', 'admin@envtest', '-o', 'json'], { KUBECONFIG: kubeconfig }),
      sh(kubectl, ['node-tuning', 'describe', NODE, '--context', 'admin@envtest', '--output', 'yaml'], { KUBECONFIG: kubeconfig }),
      sh(kubectl, ['node-tuning', 'describe', NODE, '--kubeconfig', kubeconfig, '--context', 'nope']),
      sh(kubectl, ['node-tuning', 'describe', 'no-such-node', '--kubeconfig', cp.kubeconfig]),
    ]);
    assert.equal(wrongContext.code, 2, 'the current context points nowhere');
    assert.match(wrongContext.stderr, /^kubectl node-tuning describe: cannot read node plug-failing: /);

    assert.equal(view.code, 1, `rules fail on the node: ${view.stderr}`);
    const lines = view.stdout.trimEnd().split('\n');
    for (const line of lines) assert.ok([...line].length <= 80, line);
    assert.match(lines[0] as string, /^node plug-failing · score \d+\/100, grade F · worker · as its agent published it$/);
    assert.match(view.stdout, /^FAIL {5}warning {3}kubelet-api-qps +Kubelet's API client limit/m);
    assert.match(view.stdout, /^ {2}fix {4}raise kubeAPIQPS\/kubeAPIBurst to 170\/220$/m);
    assert.match(view.stdout, /^UNKNOWN {2}warning {3}kernel-tick-rate +Kernel timer tick below 1000 Hz\n {2}reason the kernel's timer tick( \(CONFIG_HZ\))?: no kernel config/m);
    assert.match(view.stdout, /^Events \(node-tuning-advisor, newest first\)\n {2}\d+s +(Warning +TuningRecommendation +WARN|Normal +TuningRecommendation +INFO) /m);

    const advice = JSON.parse(json.stdout);
    assert.deepEqual([advice.kind, advice.node, advice.report.counts.fail], ['NodeAdvice', NODE, 4]);
    assert.ok((lines[0] as string).includes(`score ${advice.report.score}/100`));
    assert.equal(advice.findings.length, advice.report.counts.fail + advice.report.counts.unknown);
    assert.equal(advice.events.length, 4);
    // An info rule's recommendation is a Normal Event (issue 24), the others Warning.
    assert.deepEqual(advice.events.map((e: { reason: string; type: string; message: string }) => [e.reason, e.type, e.message.startsWith('INFO ')]).sort(),
      [['TuningRecommendation', 'Normal', true], ['TuningRecommendation', 'Warning', false], ['TuningRecommendation', 'Warning', false], ['TuningRecommendation', 'Warning', false]]);
    const yaml = parse(yamlRun.stdout);
    assert.deepEqual(yaml.findings, advice.findings);

    assert.equal(noContext.code, 2);
    assert.match(noContext.stderr, /--context nope: no such context in --kubeconfig \S+ \(it has: elsewhere, admin@envtest\)/);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /no node "no-such-node"; see: kubectl get nodes/);
  });

  test('kubectl node-tuning report and scan', async (t) => {
    const kubectl = toolPath('kubectl') ?? requireTool(t, 'kubectl', 'kubernetes-client');
    if (!kubectl) return;
    const report = await sh(kubectl, ['node-tuning', 'report', '--kubeconfig', kubeconfig, '--context', 'admin@envtest', '-o', 'yaml', '--fail-on', 'never']);
    assert.equal(report.code, 0, report.stderr);
    assert.equal(parse(report.stdout).kind, 'ClusterReport');
    const table = await sh(kubectl, ['node-tuning', 'report', '--context', 'admin@envtest', '--fail-on', 'never'], { KUBECONFIG: kubeconfig });
    for (const line of table.stdout.trimEnd().split('\n')) assert.ok([...line].length <= 80, line);

    const scan = await sh(kubectl, ['node-tuning', 'scan', '--host-root', fixtureHost('seed-000-after'), '-o', 'json', '--fail-on', 'never']);
    assert.equal(scan.code, 0, scan.stderr);
    assert.equal(JSON.parse(scan.stdout).node, 'master1');
    const misplaced = await sh(kubectl, ['node-tuning', 'scan', '--kubeconfig', kubeconfig]);
    assert.equal(misplaced.code, 2);
    assert.match(misplaced.stderr, /scan reads this machine, not a cluster, so --kubeconfig does not apply/);
    const unknown = await sh(kubectl, ['node-tuning', 'nodes']);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /unknown command "nodes": use report, describe NODE, scan, explain RULE, measure pod-startup or cleanup/);
    // measure is in the packed bundle too; its checks run before anything is created.
    const measure = await sh(kubectl, ['node-tuning', 'measure', 'pod-startup', '--node', 'no-such-node', '--context', 'admin@envtest'], { KUBECONFIG: kubeconfig });
    assert.equal(measure.code, 2, measure.stderr);
    assert.match(measure.stderr, /node "no-such-node" does not exist \(nodes: .*\); --node takes a name from kubectl get nodes/);
  });
});
