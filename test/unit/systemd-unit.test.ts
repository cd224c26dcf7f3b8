import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { expandExecStart, parseEnvironmentFile, reconstructUnitCommand, serviceAssignments, splitWords } from '../../src/host/systemd-unit.ts';
import { HostRoot } from '../../src/host/host-root.ts';
import { fixtureHost, tempHost } from '../helpers/fixtures.ts';

test('splitWords groups quotes and honours backslash escapes', () => {
  assert.deepEqual(splitWords(`"KUBELET_CONFIG_ARGS=--config=/var/lib/kubelet/config.yaml" 'a b' c\\ d`), [
    'KUBELET_CONFIG_ARGS=--config=/var/lib/kubelet/config.yaml', 'a b', 'c d',
  ]);
});

test("parseEnvironmentFile joins kubespray's backslash-continued KUBELET_ARGS and unquotes values", () => {
  const env = parseEnvironmentFile('KUBE_LOG_LEVEL="--v=2"\nKUBELET_ARGS="--a=1 \\\n--config=/etc/kubernetes/kubelet-config.yaml \\\n --b=  "\n# comment\nEMPTY=\n');
  assert.equal(env.get('KUBE_LOG_LEVEL'), '--v=2');
  assert.equal(splitWords(env.get('KUBELET_ARGS') ?? '').join(' '), '--a=1 --config=/etc/kubernetes/kubelet-config.yaml --b=');
  assert.equal(env.get('EMPTY'), '');
});

test('$VAR expands to several words, ${VAR} inside one word, unset variables to nothing', () => {
  const env = new Map([
    ['A', { value: '--x=1 --y=2', origin: 'a.env (A)' }],
    ['B', { value: '/etc/b', origin: 'b.env (B)' }],
  ]);
  const args = expandExecStart('-/usr/bin/kubelet $A --config=${B}/c.yaml $UNSET', env, 'unit');
  assert.deepEqual(args.map((a) => a.text), ['/usr/bin/kubelet', '--x=1', '--y=2', '--config=/etc/b/c.yaml']);
  assert.deepEqual(args.map((a) => a.origin), ['unit', 'a.env (A)', 'a.env (A)', 'b.env (B)']);
});

test('serviceAssignments keeps only [Service] keys and joins continuation lines', () => {
  const a = serviceAssignments('[Unit]\nDescription=x\n[Service]\nExecStart=/bin/k \\\n  --a\nRestart=always\n', 'u');
  assert.deepEqual(a.map((x) => [x.key, x.value]), [['ExecStart', '/bin/k    --a'], ['Restart', 'always']]);
});

test('the kubeadm unit rebuilds to the kubelet command with each flag traced to its file', async () => {
  const unit = await reconstructUnitCommand(new HostRoot(fixtureHost('kubelet-qps-zero')), 'kubelet.service');
  assert.ok(unit);
  assert.equal(unit.args[0]?.text, '/usr/bin/kubelet', 'ExecStart= reset by 10-kubeadm.conf, then redefined');
  const qps = unit.args.find((a) => a.text === '--kube-api-qps=0');
  assert.equal(qps?.origin, '/etc/default/kubelet (KUBELET_EXTRA_ARGS)');
  const config = unit.args.find((a) => a.text.startsWith('--config='));
  assert.equal(config?.origin, '/usr/lib/systemd/system/kubelet.service.d/10-kubeadm.conf (KUBELET_CONFIG_ARGS)');
  assert.ok(unit.files.includes('/var/lib/kubelet/kubeadm-flags.env'));
});

test('a drop-in in /etc overrides the same-named one in /usr/lib; a missing optional EnvironmentFile is skipped', async (t) => {
  const host = new HostRoot(await tempHost(t, {
    '/usr/lib/systemd/system/kubelet.service': '[Service]\nExecStart=/usr/bin/kubelet\n',
    '/usr/lib/systemd/system/kubelet.service.d/10-kubeadm.conf': '[Service]\nExecStart=\nExecStart=/usr/bin/kubelet --from-usr\n',
    '/etc/systemd/system/kubelet.service.d/10-kubeadm.conf': '[Service]\nEnvironmentFile=-/etc/none\nExecStart=\nExecStart=/usr/bin/kubelet --from-etc\n',
  }));
  const unit = await reconstructUnitCommand(host, 'kubelet.service');
  assert.deepEqual(unit?.args.map((a) => a.text), ['/usr/bin/kubelet', '--from-etc']);
  assert.equal(await reconstructUnitCommand(host, 'absent.service'), undefined);
});

test('the unit parsers never throw on garbage', () => {
  fc.assert(
    fc.property(fc.string(), (text) => {
      splitWords(text);
      parseEnvironmentFile(text);
      serviceAssignments(text, 'x');
      expandExecStart(text, new Map(), 'x');
    }),
  );
});
