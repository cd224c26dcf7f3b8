// k0s: root's k0scontroller.service runs `k0s controller`, which starts etcd as the user etcd from the
// root-owned /var/lib/k0s/bin/etcd. Such an etcd is trusted by its unit and its binary, not refused for
// its uid — and only while both are root's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmod, cp, readFile, writeFile } from 'node:fs/promises';
import etcd from '../../src/collectors/etcd/collector.ts';
import { factsOf, fixtureHost, tempHost } from '../helpers/fixtures.ts';
import { fact, factsAt } from '../helpers/host-trees.ts';

async function copyOf(t: Parameters<typeof tempHost>[0]): Promise<string> {
  const root = await tempHost(t, {});
  await cp(fixtureHost('k0s-controller'), root, { recursive: true, verbatimSymlinks: true });
  return root;
}

test('k0s controller: etcd run as user etcd under k0scontroller.service is used, data dir /var/lib/k0s/etcd', async () => {
  const facts = await factsOf('k0s-controller', [etcd]);
  assert.equal(fact(facts, 'etcd.present').value, true);
  assert.equal(fact(facts, 'etcd.dataDir').value, '/var/lib/k0s/etcd');
  assert.equal(fact(facts, 'etcd.pid').value, 2190);
  assert.match(fact(facts, 'etcd.dataDir').detail ?? '', /k0scontroller\.service.*k0s controller, which supervises it/);
});

test('k0s etcd whose binary others may write is refused: the data dir is unknown, never a guess', async (t) => {
  const root = await copyOf(t);
  await chmod(`${root}/var/lib/k0s/bin/etcd`, 0o757);
  const facts = await factsAt(root, etcd);
  assert.equal(fact(facts, 'etcd.dataDir').value, null);
  assert.match(fact(facts, 'etcd.dataDir').unknown ?? '', /PID 2190.*\/var\/lib\/k0s\/bin\/etcd is writable by every user/);
});

test('a supervisor unit that runs as another user does not vouch for its etcd', async (t) => {
  const root = await copyOf(t);
  const unit = `${root}/etc/systemd/system/k0scontroller.service`;
  await writeFile(unit, (await readFile(unit, 'utf8')).replace('[Service]\n', '[Service]\nUser=k0s\n'));
  const facts = await factsAt(root, etcd);
  assert.equal(fact(facts, 'etcd.dataDir').value, null);
  assert.match(fact(facts, 'etcd.dataDir').unknown ?? '', /k0scontroller\.service runs as k0s, not root/);
});
