// The footprint figures of issue 14, in one run:
//  - the bundle: what each package costs in bytes and which command loads it (esbuild's metafile);
//  - the shipped agent (the image's node flags, the DaemonSet's args and env, the local bundle)
//    against the real control plane with the project's RBAC and a node-bound token, scanning a
//    fixture host every second and scraped every second, next to a bare `node` started with it:
//    steady RSS after 60 scans and the ratio, CPU per scan;
//  - the CLI as the image's ENTRYPOINT runs it: wall time against `node -e 0` and peak RSS, for
//    --version, scan --host-root FIXTURE and rules list.
// The goals are printed beside the figures. Needs KUBEBUILDER_ASSETS (the real-server tier) and
// GNU time (/usr/bin/time, Debian's `time`) for peak RSS.
import type { Metafile } from 'esbuild';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdtemp, readFile, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';
import { bundleTo } from '../scripts/bundle.ts';
import { ControlPlane, envtestAssets } from '../test/helpers/control-plane.ts';
import { createBoundPod, createReadyNode, podBoundToken } from '../test/helpers/kube-objects.ts';
import { REPO } from '../test/helpers/manifests.ts';
import { imageEntrypoint, localArgv, mebibytes, shippedAgentCommand, splitNodeCommand } from '../test/helpers/shipped-agent.ts';
import { describeBundle } from '../scripts/bundle-costs.ts';
import { median, sampleProcess, sleep, startBareNode, type ProcessSample } from './_process.ts';

const SCANS = Number(process.env.NTA_BENCH_FOOTPRINT_SCANS ?? 60);
const CLI_ROUNDS = Number(process.env.NTA_BENCH_FOOTPRINT_ROUNDS ?? 11);
const HOST = path.join(REPO, 'test/fixtures/hosts/etcd-kubeadm-nvme');
const NODE = 'footprint-1';
const GOALS = { agentMiB: 80, agentRatio: 1.9, versionRatio: 3, scanRatio: 4, scanPeakMiB: 70 };

export interface App { root: string; bundle: string; metafile?: unknown; configMapRules: string }

/** The app as the image lays it out: bundle two levels below the root, rules and package.json beside. */
export async function buildApp(tmp: string): Promise<App> {
  const root = path.join(tmp, 'app');
  const built = await bundleTo(path.join(root, 'dist/bundle')) as { file: string; metafile?: unknown };
  await cp(path.join(REPO, 'rules'), path.join(root, 'rules'), { recursive: true });
  await cp(path.join(REPO, 'package.json'), path.join(root, 'package.json'));
  // What the DaemonSet mounts at /etc/node-tuning-advisor/rules: the files of the rules ConfigMap.
  const configMapRules = path.join(tmp, 'configmap-rules');
  const generator = parse(await readFile(path.join(REPO, 'manifests/base/rules/kustomization.yaml'), 'utf8'));
  for (const file of generator.configMapGenerator[0].files as string[]) await cp(path.join(REPO, 'manifests/base/rules', file), path.join(configMapRules, file));
  return { root, bundle: built.file, metafile: built.metafile, configMapRules };
}

/** The real control plane with the project's namespace and RBAC, a Ready node and the agent pod's node-bound token. */
export async function agentCluster(tmp: string): Promise<{ cp: ControlPlane; kubeconfig: string }> {
  const found = envtestAssets();
  if ('missing' in found) throw new Error(found.missing);
  const cp = await ControlPlane.start();
  try {
    for (const file of ['namespace.yaml', 'rbac.yaml']) {
      const applied = await cp.kubectl(['apply', '-f', path.join(REPO, 'manifests/base', file)]);
      if (applied.code !== 0) throw new Error(`kubectl apply ${file}: ${applied.stderr}`);
    }
    await createReadyNode(cp, NODE);
    const pod = await createBoundPod(cp, 'node-tuning-advisor', `agent-${NODE}`, NODE, 'node-tuning-advisor');
    const token = await podBoundToken(cp, 'node-tuning-advisor', 'node-tuning-advisor', pod);
    return { cp, kubeconfig: await cp.writeKubeconfig(path.join(tmp, 'agent.kubeconfig'), 'agent', token) };
  } catch (err) {
    await cp.stop();
    throw err;
  }
}

export interface AgentRun {
  scans: number;
  steadyMiB: number;
  maxMiB: number;
  hwmMiB: number;
  bareMiB: number;
  cpuMsPerScan: number;
  scanErrors: number;
}

function metric(text: string, name: string): number | undefined {
  const m = new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text);
  return m ? Number(m[1]) : undefined;
}

async function waitForListen(agent: ChildProcess, log: () => string): Promise<string> {
  for (let i = 0; i < 600; i++) {
    const addr = /serving \/metrics, \/healthz, \/readyz on ([\d.]+:\d+)/.exec(log())?.[1];
    if (addr) return addr;
    if (agent.exitCode !== null) break;
    await sleep(100);
  }
  throw new Error(`the agent did not start:\n${log()}`);
}

/**
 * One agent with `nodeFlags` and `env` against the cluster: scans every second, one scrape per
 * second, until `scans` scans were seen (bounded: 3 s per scan). Steady = median over the last third.
 */
export async function measureAgent(app: App, kubeconfig: string, nodeFlags: string[], env: Record<string, string>, scans = SCANS): Promise<AgentRun> {
  const shipped = await shippedAgentCommand();
  const argv = localArgv({ ...shipped, nodeFlags }, app.bundle, {
    'host-root': HOST, 'metrics-addr': '127.0.0.1:0', interval: '1s', 'startup-jitter': '1ms', 'probe-interval': 'off',
    rules: app.configMapRules, kubeconfig,
  });
  let log = '';
  const agent = spawn(process.execPath, argv, { stdio: ['ignore', 'ignore', 'pipe'], env: { PATH: process.env.PATH ?? '', NODE_NAME: NODE, ...env } });
  agent.stderr?.on('data', (d: Buffer) => { log = (log + d.toString()).slice(-20_000); });
  const bare = startBareNode();
  try {
    const addr = await waitForListen(agent, () => log);
    const seen = new Set<number>();
    const samples: ProcessSample[] = [];
    const bareSamples: number[] = [];
    let first: ProcessSample | undefined;
    let firstScans = 0;
    let errors = 0;
    for (const deadline = Date.now() + scans * 3000; seen.size < scans && Date.now() < deadline;) {
      await sleep(1000);
      const text = await (await fetch(`http://${addr}/metrics`)).text();
      if (/publish failed/.test(log)) throw new Error(`the agent cannot publish:\n${log}`);
      const at = metric(text, 'node_tuning_advisor_last_scan_success_timestamp_seconds');
      if (at) seen.add(at);
      errors = metric(text, 'node_tuning_advisor_scan_errors_total') ?? 0;
      const s = await sampleProcess(agent.pid as number);
      if (!first && seen.size > 0) { first = s; firstScans = seen.size; }
      samples.push(s);
      bareSamples.push((await sampleProcess(bare.pid as number)).rssMiB);
    }
    if (seen.size < scans) throw new Error(`only ${seen.size} scans in ${scans * 3} s:\n${log}`);
    const last = samples.at(-1) as ProcessSample;
    const tail = Math.max(1, Math.floor(samples.length / 3));
    return {
      scans: seen.size,
      steadyMiB: median(samples.slice(-tail).map((s) => s.rssMiB)),
      maxMiB: Math.max(...samples.map((s) => s.rssMiB)),
      hwmMiB: last.hwmMiB,
      bareMiB: median(bareSamples.slice(-tail)),
      cpuMsPerScan: first ? (last.cpuMs - first.cpuMs) / Math.max(1, seen.size - firstScans) : NaN,
      scanErrors: errors,
    };
  } finally {
    agent.kill('SIGTERM');
    bare.kill('SIGKILL');
  }
}

interface CliFigure { label: string; ms: number; peakMiB: number }

/** Wall time (ms) and peak RSS (MiB, wait4's ru_maxrss through GNU time) of one run. */
async function timed(argv: string[], tmp: string): Promise<{ ms: number; peakMiB: number }> {
  const out = path.join(tmp, 'time.out');
  const started = performance.now();
  const child = spawn('/usr/bin/time', ['-f', '%M', '-o', out, process.execPath, ...argv], { stdio: 'ignore', cwd: tmp, env: { PATH: process.env.PATH ?? '' } });
  await new Promise((resolve) => child.on('exit', resolve));
  const ms = performance.now() - started;
  return { ms, peakMiB: Number((await readFile(out, 'utf8')).trim().split('\n').at(-1)) / 1024 };
}

interface CliLine { label: string; nodeFlags: string[] }

/** Each command under each command line, and `node -e 0`, interleaved, `rounds` times; medians. */
export async function measureCli(app: App, tmp: string, lines: CliLine[], rounds = CLI_ROUNDS): Promise<{ bare: CliFigure; commands: Record<string, CliFigure[]> }> {
  const commands: [string, string[]][] = [
    ['--version', ['--version']],
    ['scan --host-root FIXTURE', ['scan', '--host-root', HOST]],
    ['rules list', ['rules', 'list']],
  ];
  const runs = new Map<string, { ms: number; peakMiB: number }[]>();
  const record = (key: string, r: { ms: number; peakMiB: number }) => runs.set(key, [...(runs.get(key) ?? []), r]);
  for (let round = 0; round <= rounds; round++) {
    const bare = await timed(['-e', '0'], tmp);
    for (const line of lines) {
      for (const [label, args] of commands) {
        const r = await timed([...line.nodeFlags, app.bundle, ...args], tmp);
        if (round > 0) record(`${line.label}\0${label}`, r); // round 0 warms the page cache
      }
    }
    if (round > 0) record('node -e 0', bare);
  }
  const figure = (key: string): CliFigure => {
    const rs = runs.get(key) ?? [];
    return { label: key.split('\0').at(-1) as string, ms: median(rs.map((r) => r.ms)), peakMiB: median(rs.map((r) => r.peakMiB)) };
  };
  return {
    bare: figure('node -e 0'),
    commands: Object.fromEntries(lines.map((line) => [line.label, commands.map(([label]) => figure(`${line.label}\0${label}`))])),
  };
}

const verdict = (ok: boolean) => (ok ? 'met' : 'NOT MET');

export async function run(): Promise<void> {
  if (!existsSync('/usr/bin/time')) throw new Error('peak RSS needs GNU time: apt-get install time');
  const tmp = await mkdtemp(path.join(tmpdir(), 'nta-footprint-'));
  let cluster: { cp: ControlPlane; kubeconfig: string } | undefined;
  try {
    const app = await buildApp(tmp);
    if (app.metafile) console.log(describeBundle(app.metafile as Metafile));

    const shipped = await shippedAgentCommand();
    cluster = await agentCluster(tmp);
    const agent = await measureAgent(app, cluster.kubeconfig, shipped.nodeFlags, shipped.env);
    const ratio = agent.steadyMiB / agent.bareMiB;
    console.log(`\nshipped agent: node ${[...shipped.nodeFlags, '<bundle>'].join(' ')} ${shipped.args.join(' ')}`);
    console.log(`  env: ${Object.entries(shipped.env).map(([k, v]) => `${k}=${v}`).join(' ') || '(none)'}`);
    console.log(`  against the real control plane (kube-apiserver v1.36, node-bound token; load average ${loadavg()[0]?.toFixed(1)}), ${agent.scans} scans of ${path.basename(HOST)} at 1 s, one /metrics scrape per second:`);
    console.log(`  steady RSS ${agent.steadyMiB.toFixed(1)} MiB vs bare node ${agent.bareMiB.toFixed(1)} MiB = ${ratio.toFixed(2)}x` +
      ` (max ${agent.maxMiB.toFixed(1)}, high-water mark ${agent.hwmMiB.toFixed(1)} MiB); ${agent.scanErrors} scan errors`);
    console.log(`  CPU ${agent.cpuMsPerScan.toFixed(0)} ms per scan with its scrape: ${(agent.cpuMsPerScan / 300).toFixed(2)} millicores at the 5 min interval`);
    console.log(`  DaemonSet memory: request ${shipped.memory.request ?? '-'}, limit ${shipped.memory.limit ?? '-'}` +
      `${(mebibytes(shipped.memory.request) ?? Infinity) < agent.hwmMiB ? ' (request BELOW the high-water mark)' : ''}`);
    console.log(`  goal <= ${GOALS.agentMiB} MiB and <= ${GOALS.agentRatio}x bare: ${verdict(agent.steadyMiB <= GOALS.agentMiB && ratio <= GOALS.agentRatio)}`);
    await cluster.cp.stop();
    cluster = undefined;

    const { nodeFlags } = splitNodeCommand(await imageEntrypoint());
    const image = `node ${[...nodeFlags, '<bundle>'].join(' ')} (the image's ENTRYPOINT)`;
    const lines = [{ label: image, nodeFlags }, ...(nodeFlags.length ? [{ label: 'node <bundle>', nodeFlags: [] }] : [])];
    const cli = await measureCli(app, tmp, lines);
    console.log(`\nCLI, median of ${CLI_ROUNDS} runs, each command line interleaved with node -e 0 (load average ${loadavg()[0]?.toFixed(1)}):`);
    const row = (f: CliFigure) => `    ${f.label.padEnd(26)} ${f.ms.toFixed(0).padStart(5)} ms ${(f.ms / cli.bare.ms).toFixed(1).padStart(5)}x  peak ${f.peakMiB.toFixed(1).padStart(5)} MiB`;
    console.log(row({ ...cli.bare }));
    for (const [label, figures] of Object.entries(cli.commands)) console.log(`  ${label}:\n${figures.map(row).join('\n')}`);
    const [version, scan] = cli.commands[image] as [CliFigure, CliFigure, CliFigure];
    console.log(`  goal (image) --version <= ${GOALS.versionRatio}x node -e 0: ${verdict(version.ms / cli.bare.ms <= GOALS.versionRatio)}; ` +
      `scan <= ${GOALS.scanRatio}x and <= ${GOALS.scanPeakMiB} MiB peak: ${verdict(scan.ms / cli.bare.ms <= GOALS.scanRatio && scan.peakMiB <= GOALS.scanPeakMiB)}`);
  } finally {
    await cluster?.cp.stop();
    await rm(tmp, { recursive: true, force: true });
  }
}
