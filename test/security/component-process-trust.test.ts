// Issue 22 item 9: kubelet / kube-scheduler / kube-controller-manager / kube-apiserver used to be "any
// process with that name, lowest PID": after PID wrap a user's process beat the real one. Real processes:
// nobody's `exec -a kube-scheduler sleep` and nobody's symlink named kubelet to /usr/bin/sleep, both
// started before root's scheduler (a root-owned binary reached through a symlink named kube-scheduler, as
// the hollow kubelet of the envtest runs), so they hold the lower PIDs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { chmod, copyFile, mkdir, mkdtemp, readFile, readlink, rm, symlink } from 'node:fs/promises';
import { setTimeout as delay } from 'node:timers/promises';
import { judgeProcess, pickComponentProcess } from '../../src/host/component-process.ts';
import { HostRoot } from '../../src/host/host-root.ts';
import { listProcesses, type HostProcess } from '../../src/host/processes.ts';
import { tempHost } from '../helpers/fixtures.ts';
import { factsAt } from '../helpers/host-trees.ts';
import controlPlane from '../../src/collectors/control-plane-limits.ts';
import kubeletCollector from '../../src/collectors/kubelet/collector.ts';
import { requireTool } from '../helpers/tools.ts';

const NOBODY = 65534;

async function started(child: ChildProcess): Promise<number> {
  const pid = child.pid as number;
  for (let i = 0; i < 200; i++) {
    // Until exec, /proc/<pid>/cmdline is the parent's (setpriv, bash, node).
    const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    if (/kube-scheduler|kubelet|120000/.test(cmdline.split('\0')[0] ?? '') && !cmdline.startsWith('setpriv')) return pid;
    await delay(25);
  }
  throw new Error(`PID ${pid} never exec'd its program`);
}

test('a user\'s process named kube-scheduler (or a symlink named kubelet) with a lower PID never beats root\'s', async (t) => {
  const setpriv = requireTool(t, 'setpriv', 'util-linux');
  if (!setpriv) return;
  if (process.getuid?.() !== 0) return t.skip('needs root: the real component is root\'s, the attacker nobody');
  // A root-owned directory outside the world-writable /tmp, so root's binary is in a root-owned chain.
  await mkdir('/run/nta-test', { recursive: true, mode: 0o755 });
  const dir = await mkdtemp('/run/nta-test/components-');
  t.after(() => rm(dir, { recursive: true, force: true }));
  await symlink('/usr/bin/sleep', `${dir}/kubelet`);
  // root's own program in root-owned directories all the way: not this checkout's node binary, which
  // may sit under a world-writable /tmp (a clone there), where the product rightly refuses it.
  // perl (Debian's perl-base, essential) sleeps without a fork and takes the flag as an argument.
  await symlink('/usr/bin/perl', `${dir}/kube-scheduler`);
  const children: ChildProcess[] = [];
  t.after(() => { for (const child of children) child.kill('SIGKILL'); });
  const run = (file: string, args: string[]): ChildProcess => {
    const child = spawn(file, args, { stdio: 'ignore' });
    children.push(child);
    return child;
  };
  const asNobody = ['--reuid', String(NOBODY), '--regid', String(NOBODY), '--clear-groups', '--'];
  const fakeScheduler = await started(run(setpriv, [...asNobody, 'bash', '-c', 'exec -a kube-scheduler sleep 120']));
  const fakeKubelet = await started(run(setpriv, [...asNobody, `${dir}/kubelet`, '120']));
  const realScheduler = await started(run(`${dir}/kube-scheduler`, ['-e', 'sleep 120', '--', '--kube-api-qps=77']));
  if (!(fakeScheduler < realScheduler)) return t.skip(`PIDs wrapped during the test (${fakeScheduler} > ${realScheduler})`);

  const host = new HostRoot('/');
  const ours = (await listProcesses(host)).filter((p) => [fakeScheduler, fakeKubelet, realScheduler].includes(p.pid));
  const scheduler = await pickComponentProcess(host, ours, ['kube-scheduler']);
  assert.equal(scheduler.chosen?.process.pid, realScheduler, 'root\'s scheduler, not the lower-PID one named so by nobody');
  assert.equal(scheduler.chosen?.level, 'verified');
  assert.match(scheduler.chosen?.why ?? '', /root's .*perl \(root-owned, in root-owned directories\)/);
  assert.ok(scheduler.chosen?.process.argv.includes('--kube-api-qps=77'));
  assert.match(scheduler.refused.join('\n'), new RegExp(`PID ${fakeScheduler} \\(kube-scheduler\\) runs /usr/bin/sleep as uid ${NOBODY} outside a root-run unit`));

  const kubelet = await pickComponentProcess(host, ours, ['kubelet']);
  assert.equal(kubelet.chosen, undefined, 'nobody\'s symlink named kubelet is not "found"');
  assert.match(kubelet.refused.join('\n'), new RegExp(`PID ${fakeKubelet} \\(kubelet\\) runs /usr/bin/sleep as uid ${NOBODY}`));
});

test('without the binary to read (the DaemonSet, a snapshot): root\'s process is inferred with why, another user\'s is refused', async (t) => {
  const status = (uid: number) => `Name:\tkube-schedule\nUid:\t${uid}\t${uid}\t${uid}\t${uid}\n`;
  const root = await tempHost(t, {
    '/proc/300/cmdline': 'kube-scheduler\0--kube-api-qps=1\0', '/proc/300/comm': 'kube-schedule\n', '/proc/300/status': status(1000),
    '/proc/400/cmdline': '/usr/local/bin/kube-scheduler\0--kube-api-qps=77\0', '/proc/400/comm': 'kube-schedule\n', '/proc/400/status': status(0),
    '/proc/500/cmdline': '/usr/bin/kubelet\0', '/proc/500/comm': 'kubelet\n',
  });
  const host = new HostRoot(root);
  const processes = await listProcesses(host);
  const scheduler = await pickComponentProcess(host, processes, ['kube-scheduler']);
  assert.equal(scheduler.chosen?.process.pid, 400);
  assert.equal(scheduler.chosen?.level, 'inferred');
  assert.match(scheduler.chosen?.why ?? '', /only the name and owner match: PID 400 \(kube-scheduler\) is root's.*CAP_SYS_PTRACE/);
  assert.match(scheduler.refused[0] ?? '', /PID 300 \(kube-scheduler\) runs as uid 1000, and neither its binary .* nor a root-run unit vouches for it/);
  const facts = await factsAt(root, controlPlane);
  assert.equal(facts.get('scheduler.present')?.source, 'inferred');
  assert.match(facts.get('scheduler.present')?.detail ?? '', /only the name and owner match.*not used: PID 300/);
  assert.equal(facts.get('scheduler.kubeAPIQPS')?.value, 77);
  const kubelet = await pickComponentProcess(host, processes, ['kubelet']);
  assert.equal(kubelet.chosen?.level, 'inferred');
  assert.match(kubelet.chosen?.why ?? '', /only the name matches: .*no \/proc\/500\/status or exe/);
});

test('a root kubelet whose binary was replaced on disk since it started is still the kubelet: inferred, restart pending (real process)', async (t) => {
  if (process.getuid?.() !== 0) return t.skip('needs root: the component is root\'s');
  await mkdir('/run/nta-test', { recursive: true, mode: 0o755 });
  const dir = await mkdtemp('/run/nta-test/replaced-');
  t.after(() => rm(dir, { recursive: true, force: true }));
  // A copy (not a link): removing it leaves the running process with /proc/<pid>/exe → "… (deleted)",
  // what a package upgrade without a restart leaves behind.
  await copyFile(process.execPath, `${dir}/kubelet`);
  await chmod(`${dir}/kubelet`, 0o755);
  const child = spawn(`${dir}/kubelet`, ['-e', 'setTimeout(() => {}, 120000)', 'x', '--kube-api-qps=50'], { stdio: 'ignore' });
  t.after(() => child.kill('SIGKILL'));
  const pid = await started(child);
  await rm(`${dir}/kubelet`);
  assert.match(await readlink(`/proc/${pid}/exe`), / \(deleted\)$/);

  const host = new HostRoot('/');
  const ours = (await listProcesses(host)).filter((p) => p.pid === pid);
  const kubelet = await pickComponentProcess(host, ours, ['kubelet']);
  assert.equal(kubelet.chosen?.process.pid, pid, `never "no kubelet": ${kubelet.refused.join('; ')}`);
  assert.equal(kubelet.chosen?.level, 'inferred');
  assert.equal(kubelet.chosen?.replaced?.path, `${dir}/kubelet`);
  assert.match(kubelet.chosen?.why ?? '', /is root's, but its binary .*kubelet was replaced or removed since it started \(\/proc\/\d+\/exe: deleted\): restart pending/);
});

test('replaced or missing binaries in a snapshot: root\'s kubelet is kept with why and its settings decided; another user\'s is not', async (t) => {
  const status = (uid: number) => `Name:\tkubelet\nUid:\t${uid}\t${uid}\t${uid}\t${uid}\n`;
  const root = await tempHost(t, {
    '/proc/600/cmdline': '/usr/bin/kubelet\0--config=/var/lib/kubelet/config.yaml\0', '/proc/600/comm': 'kubelet\n', '/proc/600/status': status(0),
    '/proc/600/exe': '->/usr/bin/kubelet (deleted)', '/proc/600/cwd': '->/',
    '/proc/700/cmdline': '/opt/bin/kubelet\0', '/proc/700/comm': 'kubelet\n', '/proc/700/status': status(1000),
    '/proc/700/exe': '->/opt/bin/kubelet (deleted)',
    '/proc/800/cmdline': '/usr/local/bin/kubelet\0', '/proc/800/comm': 'kubelet\n', '/proc/800/status': status(0),
    '/proc/800/exe': '->/usr/local/bin/kubelet',
    '/var/lib/kubelet/config.yaml': 'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nkubeAPIQPS: 50\nkubeAPIBurst: 100\n',
  });
  const host = new HostRoot(root);
  const processes = await listProcesses(host);
  const picked = await pickComponentProcess(host, processes, ['kubelet']);
  assert.equal(picked.chosen?.process.pid, 600);
  assert.equal(picked.chosen?.replaced?.path, '/usr/bin/kubelet');
  assert.match(picked.refused.join('\n'), /PID 700 \(kubelet\) runs as uid 1000 a binary since removed from \/opt\/bin\/kubelet/);
  const missing = await judgeProcess(host, processes.find((p) => p.pid === 800) as HostProcess, ['kubelet']);
  assert.equal(typeof missing === 'string' ? missing : missing.level, 'inferred', 'root\'s process whose binary is not under the host root');
  assert.match(typeof missing === 'string' ? missing : missing.why, /is root's, but its binary \/usr\/local\/bin\/kubelet is not under the host root to check/);

  const facts = await factsAt(root, kubeletCollector);
  assert.equal(facts.get('kubelet.present')?.value, true, 'never "no kubelet on this node"');
  assert.equal(facts.get('kubelet.present')?.source, 'inferred');
  assert.match(facts.get('kubelet.present')?.detail ?? '', /restart pending/);
  assert.equal(facts.get('kubelet.binaryReplaced')?.value, true);
  assert.match(facts.get('kubelet.binaryReplaced')?.detail ?? '', /runs the old one until restarted \(restart pending\)/);
  assert.equal(facts.get('kubelet.kubeAPIQPS')?.value, 50, 'the kubelet rules are still decided');
});
