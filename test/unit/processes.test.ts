import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { argsFrom, findProcesses, listProcesses, parseFlags, processCwd, splitCmdline } from '../../src/host/processes.ts';
import { KUBELET_BOOLEAN_FLAGS } from '../../src/collectors/kubelet/config.ts';
import { HostRoot } from '../../src/host/host-root.ts';
import { fixtureHost } from '../helpers/fixtures.ts';

const flagsOf = (argv: string[]) => parseFlags(argsFrom(argv, 'cmdline'), KUBELET_BOOLEAN_FLAGS);

test('splitCmdline splits on NUL and drops the trailing empty part', () => {
  assert.deepEqual(splitCmdline('/usr/bin/kubelet\0--config\0/etc/k.yaml\0'), ['/usr/bin/kubelet', '--config', '/etc/k.yaml']);
  assert.deepEqual(splitCmdline('k3s server --flag'), ['k3s', 'server', '--flag'], 'a process that rewrote its title into one string');
});

test('parseFlags reads --flag=value and --flag value alike (kube-bench misreads the second)', () => {
  const flags = flagsOf(['--config', '/etc/kubernetes/kubelet-config.yaml', '--kube-api-qps=100', '-v', '2']);
  assert.equal(flags.get('config')?.value, '/etc/kubernetes/kubelet-config.yaml');
  assert.equal(flags.get('kube-api-qps')?.value, '100');
  assert.equal(flags.get('v')?.value, '2');
});

test('a boolean flag never takes the next argument; an explicit =false is kept', () => {
  const flags = flagsOf(['--fail-swap-on', '--config', 'a.yaml', '--serialize-image-pulls=false']);
  assert.equal(flags.get('fail-swap-on')?.value, 'true');
  assert.equal(flags.get('config')?.value, 'a.yaml');
  assert.equal(flags.get('serialize-image-pulls')?.value, 'false');
});

test('the last occurrence of a flag wins, with its own origin, and nothing after -- is a flag', () => {
  const flags = parseFlags([
    { text: '--kube-api-qps=10', origin: 'a.env (A)' },
    { text: '--kube-api-qps=20', origin: 'b.env (B)' },
    { text: '--', origin: 'x' },
    { text: '--kube-api-qps=30', origin: 'x' },
  ]);
  assert.deepEqual(flags.get('kube-api-qps'), { value: '20', origin: 'b.env (B)' });
});

test('an empty value and a trailing flag without value are read, not dropped', () => {
  const flags = flagsOf(['--node-labels=', '--hostname-override']);
  assert.equal(flags.get('node-labels')?.value, '');
  assert.equal(flags.get('hostname-override')?.value, 'true');
});

test('listProcesses reads comm and cmdline from the host /proc; processCwd resolves the cwd link', async () => {
  const host = new HostRoot(fixtureHost('kubelet-relative-config'));
  const kubelet = findProcesses(await listProcesses(host), ['kubelet'])[0];
  assert.equal(kubelet?.pid, 2001);
  assert.equal(kubelet?.argv[1], '--config=kubelet_conf.json');
  assert.equal(await processCwd(host, 2001), '/etc/kubernetes/kubelet');
  assert.equal(await processCwd(host, 999), undefined);
});

test('parseFlags and splitCmdline never throw on garbage', () => {
  fc.assert(
    fc.property(fc.array(fc.string()), fc.string(), (argv, raw) => {
      parseFlags(argsFrom(argv, 'x'), KUBELET_BOOLEAN_FLAGS);
      splitCmdline(raw);
    }),
  );
});

test('a scan walks the host process table once, however many collectors look for processes', async () => {
  const { HostRoot } = await import('../../src/host/host-root.ts');
  const { collectFacts } = await import('../../src/collectors/run.ts');
  const { fixtureHost } = await import('../helpers/fixtures.ts');
  let procListings = 0;
  class CountingHost extends HostRoot {
    override async listDir(hostPath: string) {
      if (hostPath === '/proc') procListings++;
      return super.listDir(hostPath);
    }
  }
  const facts = await collectFacts(new CountingHost(fixtureHost('etcd-kubeadm-nvme')), { sleep: async () => {} });
  assert.equal(facts.value('etcd.present'), true);
  assert.equal(procListings, 1);
});
