// host/owner-mode.ts holds the one owner/mode check (trust.ts builds on it); host commands, trusted host files and the fsync
// probe's directory differ only in its policy (own uid, root's group, sticky directories). Checked on
// real files whose modes the test sets, and by reading src/ for mode bits tested anywhere else.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmod, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ownerModeProblem, pathAndAncestors, type OwnerModePolicy } from '../../src/host/owner-mode.ts';

const COMMAND: OwnerModePolicy = { ownUid: 'none', rootGroupMayWrite: false, sticky: false };
const FILE: OwnerModePolicy = { ownUid: 'real', rootGroupMayWrite: true, sticky: false };
const PROBE_DIR: OwnerModePolicy = { ownUid: 'effective', rootGroupMayWrite: true, sticky: true };

test('one check, three policies, over real modes', async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'owner-mode-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'f');
  await writeFile(file, '');
  const withMode = async (mode: number) => { await chmod(file, mode); return stat(file); };
  const own = process.getuid!();

  const plain = await withMode(0o644);
  assert.equal(ownerModeProblem(plain, FILE), undefined);
  assert.deepEqual(ownerModeProblem(plain, COMMAND), own === 0 ? undefined : { kind: 'owner', uid: own });

  const everyone = await withMode(0o646);
  assert.deepEqual(ownerModeProblem(everyone, FILE), { kind: 'writable', by: 'everyone', gid: everyone.gid, mode: everyone.mode });

  const group = await withMode(0o664);
  const rootGroup = group.gid === 0;
  // A root-group-writable file: trusted as a host file, never as a command root runs.
  assert.equal(ownerModeProblem(group, FILE) === undefined, rootGroup);
  if (own === 0) assert.equal(ownerModeProblem(group, COMMAND)?.kind, 'writable');

  const sticky = await withMode(0o1777);
  assert.equal(ownerModeProblem(sticky, PROBE_DIR), undefined, 'others may add entries to a sticky directory, not replace ours');
  assert.equal(ownerModeProblem(sticky, FILE)?.kind, 'writable');
});

test('a path and its directories, from the root down', () => {
  assert.deepEqual(pathAndAncestors('/usr/bin/tool'), ['/', '/usr', '/usr/bin', '/usr/bin/tool']);
  assert.deepEqual(pathAndAncestors('/'), ['/']);
  assert.deepEqual(pathAndAncestors('/etc//etcd.env'), ['/', '/etc', '/etc/etcd.env']);
});

test('no other module of src/ tests owner or mode bits', async () => {
  const src = path.resolve(import.meta.dirname, '../../src');
  const files = (await readdir(src, { recursive: true })).filter((f) => f.endsWith('.ts') && f !== path.join('host', 'owner-mode.ts'));
  const found: string[] = [];
  for (const file of files) {
    const text = await readFile(path.join(src, file), 'utf8');
    if (/mode\s*&\s*0o(?:0*2|0*20|0*22|1000)\b|geteuid\(|\.uid\s*(?:!==|===)\s*0\b/.test(text)) found.push(file);
  }
  assert.deepEqual(found, []);
});
