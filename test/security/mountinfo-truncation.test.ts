// Issue 17 item 14: a mount table longer than the read cap was cut silently, and etcd's data dir was
// attributed to "/" (its own mount was in the part not read). Now: a table of a few MiB is read whole,
// and one beyond the cap makes the device facts unknown with the reason, never a wrong mount.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import etcd from '../../src/collectors/etcd/collector.ts';
import volumesHost from '../../src/collectors/volumes-host.ts';
import { MAX_MOUNTINFO_BYTES } from '../../src/host/mountinfo.ts';
import { fixtureHost } from '../helpers/fixtures.ts';
import { factsAt } from '../helpers/host-trees.ts';

/** kubespray's etcd on /data (sdb1), with `bytes` of pod volume mounts listed before /data's line. */
async function hostWithMounts(t: { after(fn: () => Promise<void>): void }, bytes: number): Promise<string> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'nta-mounts-'));
  t.after(() => rm(root, { recursive: true, force: true }));
  await cp(fixtureHost('etcd-kubespray-ssd'), root, { recursive: true });
  const table = path.join(root, 'proc', '1', 'mountinfo');
  const lines = (await readFile(table, 'utf8')).split('\n');
  const data = lines.findIndex((l) => l.includes(' /data '));
  const filler: string[] = [];
  for (let i = 0, size = 0; size < bytes; i++) {
    const uid = `${String(i).padStart(8, '0')}-1c2d-4e5f-8a9b-0c1d2e3f4a5b`;
    const line = `${3000 + i} 26 0:${400 + i} / /var/lib/kubelet/pods/${uid}/volumes/kubernetes.io~projected/kube-api-access-${String(i % 99999).padStart(5, 'x')} rw,relatime shared:${900 + i} - tmpfs tmpfs rw,size=16384k,inode64`;
    filler.push(line);
    size += line.length + 1;
  }
  await writeFile(table, [...lines.slice(0, data), ...filler, ...lines.slice(data)].join('\n'));
  return root;
}

test('a 2 MiB mount table is read whole: etcd\'s data dir is on /data (sdb1), not on /', async (t) => {
  const facts = await factsAt(await hostWithMounts(t, 2 * 1024 * 1024), etcd);
  assert.equal(facts.value('etcd.device.mountPoint'), '/data');
  assert.equal(facts.value('etcd.device.majorMinor'), '8:17');
});

test('a mount table beyond the cap: the device is unknown with the reason, never a guessed mount', async (t) => {
  const facts = await factsAt(await hostWithMounts(t, MAX_MOUNTINFO_BYTES + 1024), etcd, volumesHost);
  assert.equal(facts.get('etcd.device.mountPoint')?.value, null);
  assert.match(facts.get('etcd.device.mountPoint')?.unknown ?? '', /\/proc\/1\/mountinfo is longer than 16 MiB; a mount table read in part could name the wrong mount/);
  assert.notEqual(facts.value('etcd.device.name'), 'sda');
  assert.match(facts.get('volumes.kubeletMounts')?.unknown ?? '', /longer than 16 MiB/, 'mount counts are not lower bounds shown as found');
});
