// Where etcd's data is, only from what can be trusted: a verified etcd process (root's etcd binary, or
// a process in a root-owned etcd unit), root's manifests and units. Never from a process merely named etcd.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmod, chown, cp, mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import { setTimeout as delay } from 'node:timers/promises';
import etcd from '../../src/collectors/etcd/collector.ts';
import { createEtcdFsyncCollector } from '../../src/collectors/etcd/fsync.ts';
import { findEtcdProcesses } from '../../src/collectors/etcd/process.ts';
import { collectFacts } from '../../src/facts/collect.ts';
import { HostRoot } from '../../src/host/host-root.ts';
import { systemServiceOf } from '../../src/host/trust.ts';
import { runScan } from '../../src/scan.ts';
import { factsOf, fixtureHost, tempHost } from '../helpers/fixtures.ts';
import { requireTool } from '../helpers/tools.ts';

async function copyOf(t: Parameters<typeof tempHost>[0], fixture: string): Promise<string> {
  const root = await tempHost(t, {});
  await cp(fixtureHost(fixture), root, { recursive: true, verbatimSymlinks: true });
  return root;
}

const STATUS = (uid: number) => `Name:\tetcd\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t777\nNgid:\t0\nPid:\t777\nPPid:\t1\nTracerPid:\t0\nUid:\t${uid}\t${uid}\t${uid}\t${uid}\nGid:\t${uid}\t${uid}\t${uid}\t${uid}\n`;

async function plantProcess(root: string, pid: number, files: { cmdline: string[]; uid?: number; exe?: string; cgroup?: string }): Promise<void> {
  const dir = `${root}/proc/${pid}`;
  await mkdir(dir, { recursive: true });
  await writeFile(`${dir}/cmdline`, `${files.cmdline.join('\0')}\0`);
  await writeFile(`${dir}/comm`, 'etcd\n');
  if (files.uid !== undefined) await writeFile(`${dir}/status`, STATUS(files.uid).replaceAll('777', String(pid)));
  if (files.exe) await symlink(files.exe, `${dir}/exe`);
  if (files.cgroup) await writeFile(`${dir}/cgroup`, files.cgroup);
}

test('systemd etcd whose environ cannot be read: the unit found through its cgroup gives ETCD_DATA_DIR from its EnvironmentFile', async () => {
  const facts = await factsOf('etcd-systemd-envfile', [etcd]);
  assert.deepEqual([facts.value('etcd.pid'), facts.value('etcd.setup')], [1502, 'systemd']);
  assert.deepEqual([facts.value('etcd.dataDir'), facts.get('etcd.dataDir')?.source], ['/data/etcd', '/etc/etcd.env (ETCD_DATA_DIR)']);
  assert.match(facts.get('etcd.present')?.detail ?? '', /runs in etcd\.service, whose root-owned unit starts \/usr\/local\/bin\/etcd \(\/proc\/1502\/cgroup\)/);
  assert.deepEqual([facts.value('etcd.device.name'), facts.value('etcd.device.rotational')], ['sdb1', false]);
  assert.equal(facts.value('etcd.metricsUrl'), 'http://127.0.0.1:2381');
  const report = await runScan({ hostRoot: fixtureHost('etcd-systemd-envfile'), only: ['etcd-disk-rotational'], collectors: [etcd] });
  assert.equal(report.findings[0]?.status, 'pass');
});

test('without a cgroup, the unit whose ExecStart is the process\'s binary; without the EnvironmentFile, the data dir is unknown, not etcd\'s default', async (t) => {
  const root = await copyOf(t, 'etcd-systemd-envfile');
  await rm(`${root}/proc/1502/cgroup`);
  await symlink('/usr/local/bin/etcd', `${root}/proc/1502/exe`);
  const byBinary = await collectFacts(new HostRoot(root), { collectors: [etcd] });
  assert.equal(byBinary.value('etcd.dataDir'), '/data/etcd');

  await rm(`${root}/etc/etcd.env`);
  const facts = await collectFacts(new HostRoot(root), { collectors: [etcd] });
  assert.equal(facts.value('etcd.present'), true);
  assert.equal(facts.value('etcd.dataDir'), undefined);
  assert.match(facts.get('etcd.dataDir')?.unknown ?? '', /no --data-dir on etcd's command line \(\/proc\/1502\/cmdline\), and its environment cannot be read: .*etcd\.service's EnvironmentFile cannot be read \(\/etc\/etcd\.env does not exist\)/);
  assert.match(facts.get('etcd.dataDir')?.unknown ?? '', /the DaemonSet\), mount \/etc\/etcd\.env read-only/, 'kubespray: the pod needs /etc/etcd.env mounted');
  assert.match(facts.get('etcd.device.rotational')?.unknown ?? '', /etcd's data dir is unknown/);
  const report = await runScan({ hostRoot: root, only: ['etcd-disk-rotational'], collectors: [etcd] });
  assert.equal(report.findings[0]?.status, 'unknown');
});

test('a process merely named etcd (another user\'s, or root\'s running another binary) never picks the data dir or the metrics URL', async (t) => {
  const root = await copyOf(t, 'etcd-lvm-chain');
  const planted = ['etcd', '--data-dir=/tmp/attacker', '--listen-metrics-urls=http://203.0.113.9:2381'];
  await plantProcess(root, 777, { cmdline: planted, uid: 1000, exe: '/usr/local/bin/etcd' });
  await plantProcess(root, 778, { cmdline: planted, uid: 0, exe: '/usr/bin/sleep' });
  const { trusted, ignored } = await findEtcdProcesses(new HostRoot(root));
  assert.deepEqual(trusted, []);
  assert.match(ignored.join('\n'), /PID 777 named etcd is not used: PID 777 runs as uid 1000/);
  assert.match(ignored.join('\n'), /PID 778 named etcd is not used: PID 778 runs \/usr\/bin\/sleep, not etcd/);
  const facts = await collectFacts(new HostRoot(root), { collectors: [etcd] });
  assert.deepEqual([facts.value('etcd.setup'), facts.value('etcd.dataDir'), facts.value('etcd.metricsUrl'), facts.value('etcd.pid')], ['kubeadm', '/var/lib/etcd', 'http://127.0.0.1:2381', null]);
  assert.match(facts.get('etcd.pid')?.detail ?? '', /no verified etcd process/);
});

test('the DaemonSet (UID 0, no CAP_SYS_PTRACE): root\'s static-pod etcd cannot be verified as a process, so its manifest is used', async (t) => {
  const root = await copyOf(t, 'etcd-kubeadm-nvme');
  await rm(`${root}/proc/2817/exe`);
  const facts = await collectFacts(new HostRoot(root), { collectors: [etcd] });
  assert.deepEqual([facts.value('etcd.setup'), facts.value('etcd.pid'), facts.value('etcd.dataDir')], ['kubeadm', null, '/mnt/fast/etcd']);
  assert.match(facts.get('etcd.present')?.detail ?? '', /not used: PID 2817 named etcd is not used: \/proc\/2817\/exe does not exist \(reading another process's binary needs CAP_SYS_PTRACE\)/);
  assert.equal(facts.value('etcd.metricsUrl'), 'http://127.0.0.1:2381');
});

test('a manifest or unit others can write is not trusted; nothing trusted left means unknown, never a pass', async (t) => {
  const root = await copyOf(t, 'etcd-lvm-chain');
  await chmod(`${root}/etc/kubernetes/manifests/etcd.yaml`, 0o666);
  const facts = await collectFacts(new HostRoot(root), { collectors: [etcd] });
  assert.equal(facts.value('etcd.present'), undefined);
  assert.match(facts.get('etcd.present')?.unknown ?? '', /\/etc\/kubernetes\/manifests\/etcd\.yaml is not used: \/etc\/kubernetes\/manifests\/etcd\.yaml is writable by every user/);
  if (process.getuid?.() !== 0) return t.skip('chown needs root');
  await chmod(`${root}/etc/kubernetes/manifests/etcd.yaml`, 0o600);
  await chown(`${root}/etc/kubernetes/manifests/etcd.yaml`, 65534, 65534);
  const owned = await collectFacts(new HostRoot(root), { collectors: [etcd] });
  assert.match(owned.get('etcd.present')?.unknown ?? '', /is owned by uid 65534, not root/);
});

test('cgroup lines: system services count, user services and scopes do not', () => {
  assert.equal(systemServiceOf('0::/system.slice/etcd.service\n'), 'etcd.service');
  assert.equal(systemServiceOf('12:pids:/system.slice\n1:name=systemd:/system.slice/etcd@m1.service\n'), 'etcd@m1.service');
  assert.equal(systemServiceOf('0::/user.slice/user-1000.slice/user@1000.service/app.slice/etcd.service\n'), undefined);
  assert.equal(systemServiceOf('0::/kubepods.slice/kubepods-pod1.slice/cri-containerd-ab.scope\n'), undefined);
  assert.equal(systemServiceOf('garbage'), undefined);
});

async function spawnNamedEtcd(t: Parameters<typeof tempHost>[0], asNobody: boolean, dataDir: string): Promise<number> {
  // exec -a sets argv[0] only: the kernel's /proc/<pid>/exe still names /bin/dash (or sh).
  const shell = `exec -a etcd /bin/sh -c 'sleep 60' etcd --data-dir=${dataDir} --listen-metrics-urls=http://127.0.0.1:9`;
  const argv = asNobody ? ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', '--', 'bash', '-c', shell] : ['bash', '-c', shell];
  const child = spawn(argv[0] as string, argv.slice(1), { stdio: 'ignore' });
  const exited = new Promise((resolve) => child.on('exit', resolve));
  t.after(async () => {
    child.kill('SIGKILL');
    await exited;
  });
  for (let i = 0; i < 100; i++) {
    const { ignored, trusted } = await findEtcdProcesses(new HostRoot('/'));
    if ([...ignored, ...trusted.map((p) => `PID ${p.pid} `)].some((line) => line.startsWith(`PID ${child.pid} `))) break;
    await delay(50);
  }
  return child.pid as number;
}

test('attack on this machine: nobody\'s and root\'s `exec -a etcd` processes are ignored; the fsync probe never gets their directory', async (t) => {
  if (!requireTool(t, 'setpriv', 'util-linux')) return;
  if (process.getuid?.() !== 0) return t.skip('starting a process as nobody needs root');
  const evil = `/tmp/nta-evil-${process.pid}`;
  const nobody = await spawnNamedEtcd(t, true, `${evil}-nobody`);
  const rootsSleep = await spawnNamedEtcd(t, false, `${evil}-root`);
  const { trusted, ignored } = await findEtcdProcesses(new HostRoot('/'));
  assert.ok(!trusted.some((p) => p.pid === nobody || p.pid === rootsSleep), 'neither planted process is trusted');
  assert.match(ignored.join('\n'), new RegExp(`PID ${nobody} named etcd is not used: PID ${nobody} runs as uid 65534`));
  assert.match(ignored.join('\n'), new RegExp(`PID ${rootsSleep} named etcd is not used: PID ${rootsSleep} runs /(usr/)?bin/(da)?sh, not etcd`));
  const probed: string[] = [];
  const probe = createEtcdFsyncCollector({ run: true, probe: async (options) => (probed.push(options.dir), { ok: false, code: 'EINVAL', reason: 'test', dir: options.dir, staleFilesRemoved: 0 }) });
  const facts = await collectFacts(new HostRoot('/'), { collectors: [etcd, probe] });
  assert.ok(!probed.some((dir) => dir.startsWith(evil)), `probe dirs: ${probed.join(', ')}`);
  assert.ok(!String(facts.value('etcd.dataDir')).startsWith(evil));
  assert.notEqual(facts.value('etcd.metricsUrl'), 'http://127.0.0.1:9');
});
