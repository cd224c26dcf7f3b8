// The probe overlay mounts <etcd data dir>/node-tuning-advisor-probe writable, nothing else of
// etcd's: the fsync collector must then probe in that subdirectory, and in the data dir otherwise.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readlink, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PROBE_SUBDIR, createEtcdFsyncCollector } from '../../src/collectors/etcd/fsync.ts';
import type { Collector } from '../../src/collectors/collector.ts';
import { collectFacts } from '../../src/collectors/run.ts';
import { HostRoot } from '../../src/host/host-root.ts';
import type { FsyncProbeOptions, FsyncProbeResult } from '../../src/probe/fsync.ts';
import { requireLayerTool } from '../helpers/real-tools.ts';
import { PROBE_OVERLAY, byKind, hostMounts, kustomize } from '../helpers/manifests.ts';

const etcdAt = (dataDir: string): Collector => ({
  name: 'etcd-stub', provides: ['etcd.present', 'etcd.dataDir'],
  async collect(ctx) { ctx.facts.set('etcd.present', true, 'inferred'); ctx.facts.set('etcd.dataDir', dataDir, 'inferred'); },
});

/** The directory the probe was handed (held by descriptor: where its /proc/self/fd name leads) and how it names it. */
async function probedDir(root: string): Promise<{ at: string; label: string | undefined } | undefined> {
  let dir: { at: string; label: string | undefined } | undefined;
  const probe = async (options: FsyncProbeOptions): Promise<FsyncProbeResult> => {
    dir = { at: await readlink(options.dir), label: options.label };
    return { ok: false, code: 'EROFS', reason: 'stub', dir: options.dir } as unknown as FsyncProbeResult;
  };
  await collectFacts(new HostRoot(root), { collectors: [etcdAt('/var/lib/etcd'), createEtcdFsyncCollector({ run: true, probe })] });
  return dir;
}

test('the fsync collector probes in <data dir>/node-tuning-advisor-probe when it exists, else in the data dir', async (t) => {
  const root = await mkdtemp(path.join(tmpdir(), 'nta-probe-dir-'));
  t.after(() => rm(root, { recursive: true, force: true }));
  await mkdir(path.join(root, 'var/lib/etcd'), { recursive: true });
  const real = await realpath(root);
  assert.deepEqual(await probedDir(root), { at: path.join(real, 'var/lib/etcd'), label: '/var/lib/etcd' });
  await mkdir(path.join(root, 'var/lib/etcd', PROBE_SUBDIR));
  assert.deepEqual(await probedDir(root), { at: path.join(real, 'var/lib/etcd', PROBE_SUBDIR), label: `/var/lib/etcd/${PROBE_SUBDIR}` });
});

test('the overlay\'s one writable mount is that subdirectory, at its place under /host', async (t) => {
  const kubectl = await requireLayerTool(t, 'kubectl');
  if (!kubectl) return;
  const writable = byKind(kustomize(kubectl, PROBE_OVERLAY), 'DaemonSet').flatMap(hostMounts).filter((m) => !m.readOnly);
  assert.deepEqual(writable.map((m) => [m.hostPath, m.mountPath]), [[`/var/lib/etcd/${PROBE_SUBDIR}`, `/host/var/lib/etcd/${PROBE_SUBDIR}`]]);
});
