// For the `measure pod-startup` tests on the real control plane: the CLI as a child process (as an
// operator or CI job runs it), what the phases should be from what the fake kubelet wrote and when
// the API server received each create (its audit log), and the advisor's agent run once to publish
// a node's facts.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { cp as copy, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { AuditLog } from './audit.ts';
import { freePort, type ControlPlane } from './control-plane.ts';
import type { PodRecord } from './kubelet.ts';
import { REPO } from './manifests.ts';
import { SOURCE_NODE_FLAGS } from './source-node.ts';

export const CLI = path.join(REPO, 'bin/node-tuning-advisor.js');
export const TOLERANCE_MS = 250;
export const PHASES = ['scheduling', 'initialization', 'creation', 'readiness', 'total'] as const;
export type Phase = (typeof PHASES)[number];

export interface Run { code: number | null; stdout: string; stderr: string; json?: any }

/** Runs argv (a command and its args) with only PATH and HOME in its environment; resolves when it has closed its output. */
export function runArgv(argv: string[], home: string): Promise<Run> {
  const [command, ...args] = argv as [string, ...string[]];
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH, HOME: home } });
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout.on('data', (c: Buffer) => out.push(c));
  child.stderr.on('data', (c: Buffer) => err.push(c));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout: Buffer.concat(out).toString(), stderr: Buffer.concat(err).toString() })));
}

/** Nearest rank, as an operator computes it from the list. */
export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}

/** pod-startup-007 → 7. */
export const podIndex = (pod: any): number => Number(/-(\d+)$/.exec(pod.metadata.name)?.[1] ?? -1);
export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Runs `measure pod-startup` with these args; `interrupt` is polled and `signal` (SIGINT) sent once it returns true. */
export function runMeasure(kubeconfig: string, home: string, args: string[], interrupt?: () => boolean, signal: NodeJS.Signals = 'SIGINT'): Promise<Run> {
  const child = spawn(process.execPath, [...SOURCE_NODE_FLAGS, CLI, 'measure', 'pod-startup', '--kubeconfig', kubeconfig, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH, HOME: home },
  });
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout.on('data', (c: Buffer) => out.push(c));
  child.stderr.on('data', (c: Buffer) => err.push(c));
  const poll = interrupt ? setInterval(() => { if (interrupt()) { clearInterval(poll); child.kill(signal); } }, 50) : undefined;
  return new Promise((resolve) => child.on('close', (code) => {
    clearInterval(poll);
    const stdout = Buffer.concat(out).toString();
    let json: any;
    try { json = JSON.parse(stdout); } catch { /* not JSON output */ }
    resolve({ code, stdout, stderr: Buffer.concat(err).toString(), json });
  }));
}

/** When each pod's create reached the API server, by pod name (the audit log must cover `user`'s writes). */
export async function createdAt(audit: AuditLog, user: string, namespace: string): Promise<Map<string, number>> {
  const creates = await audit.requests((r) => r.verb === 'create' && r.path === `/api/v1/namespaces/${namespace}/pods` && r.user === user);
  return new Map(creates.map((r) => [(r.body as any).metadata.name as string, r.at]));
}

/** Each pod's phases as the kubelet wrote them (created: when its create reached the server; total: until the test's watch received it Ready). */
export function expectedPhases(records: PodRecord[], created: Map<string, number>): Record<Phase, number[]> {
  const out: Record<Phase, number[]> = { scheduling: [], initialization: [], creation: [], readiness: [], total: [] };
  for (const r of records) {
    const createdMs = created.get(r.name) as number;
    const scheduled = r.scheduledAt ?? (r.boundSeenAt as number);
    out.scheduling.push(scheduled - createdMs);
    out.initialization.push((r.initializedAt as number) - scheduled);
    out.creation.push((r.startedAt as number) - (r.initializedAt as number));
    out.readiness.push((r.readyAt as number) - (r.startedAt as number));
    // The total is what a user sees: until the pod is received Ready through a watch (here the kubelet's own).
    out.total.push((r.readySeenAt as number) - createdMs);
  }
  return out;
}

/** p50/p90/p99/max of every phase within the tolerance; returns a diagnostic line. */
export function assertPhases(measurement: any, want: Record<Phase, number[]>): string {
  const lines: string[] = [];
  for (const phase of PHASES) {
    const got = measurement.phases[phase];
    assert.equal(got.samples, want[phase].length, `${phase}: one sample per pod`);
    for (const [key, p] of [['p50Ms', 50], ['p90Ms', 90], ['p99Ms', 99], ['maxMs', 100]] as const) {
      const w = percentile(want[phase], p);
      assert.ok(Math.abs(got[key] - w) <= TOLERANCE_MS, `${phase} ${key}: command ${got[key]} ms, injected ${w} ms`);
    }
    lines.push(`${phase} p50 ${got.p50Ms}/${percentile(want[phase], 50)} p99 ${got.p99Ms}/${percentile(want[phase], 99)}`);
  }
  return `command/injected ms: ${lines.join('; ')}`;
}

/** The namespace is gone (the controller manager removes it once empty), within 30 s. */
export async function namespaceGone(cp: ControlPlane, name: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if ((await cp.request('GET', `/api/v1/namespaces/${name}`)).status === 404) return;
    await sleep(250);
  }
  assert.fail(`namespace ${name} still exists 30 s after the run`);
}

/** Right after a run: deletion requested (or done) and no pod left in it. */
export async function cleanedUp(cp: ControlPlane, name: string): Promise<void> {
  const ns = await cp.request('GET', `/api/v1/namespaces/${name}`);
  assert.ok(ns.status === 404 || typeof ns.body?.metadata?.deletionTimestamp === 'string', `namespace ${name}: deletion requested`);
  const pods = await cp.must('GET', `/api/v1/namespaces/${name}/pods`);
  assert.deepEqual(pods.items.map((p: any) => p.metadata.name), [], `no pod left in ${name}`);
}

/** The advisor's agent, once, on `node`, over a copy of a fixture host given this CONFIG_HZ. */
export async function publishAdvisor(cp: ControlPlane, tmp: string, node: string, fixture: string, hz: number): Promise<void> {
  const root = path.join(tmp, `${fixture}-${hz}`);
  await copy(path.join(REPO, 'test/fixtures/hosts', fixture), root, { recursive: true });
  await mkdir(path.join(root, 'proc/sys/kernel'), { recursive: true });
  await mkdir(path.join(root, 'boot'), { recursive: true });
  await writeFile(path.join(root, 'proc/sys/kernel/osrelease'), '5.4.0-42-generic\n');
  await writeFile(path.join(root, 'boot/config-5.4.0-42-generic'), `CONFIG_HZ_${hz}=y\nCONFIG_HZ=${hz}\nCONFIG_NO_HZ_IDLE=y\n`);
  const child = spawn(process.execPath, [CLI, 'agent', '--once', '--kubeconfig', cp.kubeconfig, '--node-name', node, '--host-root', root,
    '--startup-jitter', '0s', '--probe-interval', 'off', '--metrics-addr', `127.0.0.1:${await freePort()}`], { stdio: ['ignore', 'ignore', 'pipe'] });
  const err: Buffer[] = [];
  child.stderr.on('data', (c: Buffer) => err.push(c));
  const code = await new Promise((r) => child.on('close', r));
  assert.equal(code, 0, Buffer.concat(err).toString());
}

/** A namespace as an earlier run leaves it: labelled, with its node, start and expiry. */
export async function earlierRun(cp: ControlPlane, name: string, node: string, startedAt: number, expiresAt: number): Promise<void> {
  await cp.must('POST', '/api/v1/namespaces', {
    apiVersion: 'v1', kind: 'Namespace',
    metadata: {
      name, labels: { 'node-tuning-advisor.io/measure': 'pod-startup' },
      annotations: {
        'node-tuning-advisor.io/node': node, 'node-tuning-advisor.io/started-by': 'someone@elsewhere',
        'node-tuning-advisor.io/started-at': new Date(startedAt).toISOString(), 'node-tuning-advisor.io/expires-at': new Date(expiresAt).toISOString(),
      },
    },
  });
}
