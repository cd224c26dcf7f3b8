import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import type { TestContext } from 'node:test';
import { PROBE_FILE_PREFIX, runFsyncProbe, type FsyncProbeOptions } from '../../src/probe/fsync.ts';
import { percentile } from '../../src/probe/percentiles.ts';
import { createEtcdFsyncCollector } from '../../src/collectors/etcd/fsync.ts';
import etcd from '../../src/collectors/etcd/collector.ts';
import { collectFacts } from '../../src/collectors/run.ts';
import { HostRoot } from '../../src/host/host-root.ts';
import { main } from '../../src/cli/main.ts';
import { requireTool, toolPath } from '../helpers/tools.ts';
import { SOURCE_NODE_FLAGS } from '../helpers/source-node.ts';

const PROBE_MODULE = new URL('../../src/probe/fsync.ts', import.meta.url).href;
const CLI = new URL('../../bin/node-tuning-advisor.js', import.meta.url).pathname;

async function tempDir(t: TestContext): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'nta-probe-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

const probeFiles = async (dir: string): Promise<string[]> => (await readdir(dir)).filter((name) => name.startsWith(PROBE_FILE_PREFIX));

/** A temp dir with a small tmpfs mounted on it when mounting is permitted (unmounted before removal). */
async function tempMount(t: TestContext, options: string): Promise<{ dir: string; mounted: boolean }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'nta-probe-mnt-'));
  const mounted = process.getuid?.() === 0 && spawnSync('mount', ['-t', 'tmpfs', '-o', options, 'tmpfs', dir]).status === 0;
  t.after(async () => {
    if (mounted) spawnSync('umount', [dir]);
    await rm(dir, { recursive: true, force: true });
  });
  return { dir, mounted };
}

test('probe: etcd\'s fio job in miniature, percentiles ordered, file removed', async (t) => {
  const dir = await tempDir(t);
  const result = await runFsyncProbe({ dir, sizeBytes: 256 * 1024 });
  assert.ok(result.ok, result.ok ? '' : result.reason);
  assert.equal(result.samples, Math.floor((256 * 1024) / 2300));
  assert.equal(result.bytesWritten, result.samples * 2300);
  assert.ok(result.p50Ms > 0 && result.p50Ms <= result.p90Ms && result.p90Ms <= result.p99Ms && result.p99Ms <= result.p999Ms && result.p999Ms <= result.maxMs);
  assert.equal(result.preallocation, toolPath('fallocate') ? 'fallocate' : 'zeros');
  assert.match(result.device, /^\d+:\d+$/);
  assert.deepEqual(await probeFiles(dir), []);
  const zeros = await runFsyncProbe({ dir, sizeBytes: 64 * 1024, blockSize: 4096, useFallocate: false, expectedDevice: '999:999' });
  assert.ok(zeros.ok);
  assert.deepEqual([zeros.preallocation, zeros.samples, zeros.sameDeviceAsEtcd], ['zeros', 16, false]);
});

test('probe refuses etcd\'s member/ directory, bad sizes and missing directories with the fix', async (t) => {
  const dir = await tempDir(t);
  await mkdir(path.join(dir, 'member', 'wal'), { recursive: true });
  const member = await runFsyncProbe({ dir: path.join(dir, 'member') });
  assert.match(member.ok ? '' : member.reason, /inside etcd's member\/ directory/);
  const small = await runFsyncProbe({ dir, sizeBytes: 100, blockSize: 2300 });
  assert.equal(small.ok ? '' : small.code, 'EINVAL');
  const missing = await runFsyncProbe({ dir: path.join(dir, 'nope') });
  assert.deepEqual(missing.ok ? [] : [missing.code, missing.reason], ['ENOENT', `${path.join(dir, 'nope')} cannot be used (ENOENT): pass an existing directory with --dir`]);
});

test('percentile is nearest-rank', () => {
  const sorted = Float64Array.from({ length: 1000 }, (_, i) => i + 1);
  assert.deepEqual([percentile(sorted, 50), percentile(sorted, 99), percentile(sorted, 99.9), percentile(sorted, 100)], [500, 990, 999, 1000]);
});

test('a full filesystem: a clear ENOSPC result from the free-space check and from fallocate itself', async (t) => {
  const { dir, mounted } = await tempMount(t, 'size=1m');
  const inject: Partial<FsyncProbeOptions> = mounted ? {} : { freeBytes: async () => 1024 * 1024 };
  const checked = await runFsyncProbe({ dir, sizeBytes: 2 * 1024 * 1024, ...inject });
  assert.equal(checked.ok ? '' : checked.code, 'ENOSPC');
  assert.match(checked.ok ? '' : checked.reason, /has 1\.0 MiB free, the probe needs 6\.0 MiB: free space on that filesystem or pass a smaller --size/);
  if (!mounted) return t.diagnostic('mount not permitted: full filesystem injected through freeBytes');
  // Past the check (as when the disk fills up meanwhile): the error from the write path.
  const filled = await runFsyncProbe({ dir, sizeBytes: 2 * 1024 * 1024, freeBytes: async () => Infinity });
  assert.equal(filled.ok ? '' : filled.code, 'ENOSPC');
  assert.deepEqual(await probeFiles(dir), []);
});

test('a read-only filesystem gives EROFS with the fix', async (t) => {
  const { dir, mounted } = await tempMount(t, 'ro,size=1m');
  if (!mounted) return t.skip('mount not permitted here');
  const result = await runFsyncProbe({ dir, sizeBytes: 64 * 1024, freeBytes: async () => Infinity });
  assert.equal(result.ok ? '' : result.code, 'EROFS');
  assert.match(result.ok ? '' : result.reason, /read-only/);
});

function startProbeChild(dir: string): ReturnType<typeof spawn> {
  const script = `const { runFsyncProbe } = await import(${JSON.stringify(PROBE_MODULE)});
await runFsyncProbe({ dir: ${JSON.stringify(dir)}, sizeBytes: 256 * 1024 * 1024 });`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'ignore', 'pipe'] });
  child.stderr?.setEncoding('utf8').on('data', (text: string) => { childErrors.set(child, (childErrors.get(child) ?? '') + text); });
  return child;
}

const childErrors = new WeakMap<ReturnType<typeof spawn>, string>();

/** Until the child's probe file exists. No deadline of its own beyond a hang guard: a loaded machine
 * may take seconds to start node; a child that ends first fails the test with what it printed. */
async function waitForProbeFile(dir: string, child: ReturnType<typeof spawn>): Promise<void> {
  for (let i = 0; i < 6000; i++) {
    if ((await probeFiles(dir)).length > 0) return;
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`the probe ended before creating its file: ${childErrors.get(child) ?? '(no output)'}`);
    await delay(10);
  }
  throw new Error('the probe never created its file');
}

test('SIGKILL mid-run leaves a file that the next run removes', async (t) => {
  const dir = await tempDir(t);
  const child = startProbeChild(dir);
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve(signal)));
  await waitForProbeFile(dir, child);
  child.kill('SIGKILL');
  assert.equal(await exited, 'SIGKILL');
  assert.equal((await probeFiles(dir)).length, 1);
  const next = await runFsyncProbe({ dir, sizeBytes: 64 * 1024 });
  assert.equal(next.ok && next.staleFilesRemoved, 1);
  assert.deepEqual(await probeFiles(dir), []);
});

for (const signal of ['SIGTERM', 'SIGHUP'] as const) {
  test(`${signal} mid-run removes the file and the process still dies of ${signal}`, async (t) => {
    const dir = await tempDir(t);
    const child = startProbeChild(dir);
    const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve(signal)));
    await waitForProbeFile(dir, child);
    child.kill(signal);
    assert.equal(await exited, signal);
    assert.deepEqual(await probeFiles(dir), []);
  });
}

test('probe fsync in a terminal whose SSH session drops (issue 37 item 5): the hang-up removes the file', async (t) => {
  const script = requireTool(t, 'script', 'bsdutils');
  if (!script) return;
  const dir = await tempDir(t);
  const pidFile = path.join(dir, 'cli.pid');
  // The pty's session leader is the CLI (exec): when the terminal goes, the kernel sends it SIGHUP
  // and its writes to the terminal (the progress line) fail with EIO.
  const command = `echo $$ > ${pidFile}; exec ${[process.execPath, ...SOURCE_NODE_FLAGS, CLI, 'probe', 'fsync', '--dir', dir, '--size', '256MiB'].map((a) => `'${a}'`).join(' ')}`;
  const terminal = spawn(script, ['-q', '-e', '-c', command, '/dev/null'], { stdio: ['pipe', 'pipe', 'pipe'], env: { PATH: process.env.PATH, TERM: 'xterm' } });
  let screen = '';
  terminal.stdout?.on('data', (c: Buffer) => { screen += c.toString(); });
  t.after(() => { if (terminal.exitCode === null) terminal.kill('SIGKILL'); });
  await waitForProbeFile(dir, terminal);
  const pid = Number(await readFile(pidFile, 'utf8'));
  terminal.kill('SIGKILL'); // the terminal emulator goes: the pty hangs up
  for (let i = 0; i < 12_000 && alive(pid); i++) await delay(10);
  assert.ok(!alive(pid), `the CLI (pid ${pid}) still runs after the hang-up: ${screen}`);
  assert.deepEqual(await probeFiles(dir), [], `the probe file is left behind: ${screen}`);
});

/** Running (a zombie, exited but not yet reaped by whoever adopted it, is not). */
function alive(pid: number): boolean {
  try {
    return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return false;
  }
}

test('probe fsync --output json prints the summary; a full disk fails the probe, not the scan', async (t) => {
  const dir = await tempDir(t);
  let stdout = '';
  const io = { stdout: { write: (s: string) => ((stdout += s), true) }, stderr: { write: () => true }, env: {} } as never;
  assert.equal(await main(['probe', 'fsync', '--dir', dir, '--size', '128KiB', '--output', 'json'], io), 0);
  const printed = JSON.parse(stdout) as Record<string, unknown>;
  for (const key of ['samples', 'p50Ms', 'p90Ms', 'p99Ms', 'p999Ms', 'maxMs', 'wallMs', 'bytesWritten']) assert.equal(typeof printed[key], 'number', key);
  assert.equal(printed.samples, 56);

  const root = await tempDir(t);
  await mkdir(path.join(root, 'proc/1'), { recursive: true });
  await mkdir(path.join(root, 'etc'), { recursive: true });
  await writeFile(path.join(root, 'etc/etcd.env'), 'ETCD_DATA_DIR=/var/lib/etcd\n');
  await mkdir(path.join(root, 'var/lib/etcd'), { recursive: true });
  const full = createEtcdFsyncCollector({ run: true, probe: (options) => runFsyncProbe({ ...options, freeBytes: async () => 0 }) });
  const facts = await collectFacts(new HostRoot(root), { collectors: [etcd, full] });
  assert.match(facts.get('etcd.fsync.p99Ms')?.unknown ?? '', /fsync probe in \/var\/lib\/etcd failed \(ENOSPC\)/);
  assert.equal(facts.value('etcd.dataDir'), '/var/lib/etcd');
  const skipped = await collectFacts(new HostRoot(root), { collectors: [etcd, createEtcdFsyncCollector({ run: false })] });
  assert.match(skipped.get('etcd.fsync.p99Ms')?.unknown ?? '', /scan --probe/);
});
