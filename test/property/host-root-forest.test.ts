// Issue 17 item 3: HostRoot (then its name resolver, now realPath and the descriptor walk) keeps every path inside the root, whatever the symlinks say.
// Random forests of directories, files and symlinks (absolute, relative, through missing components,
// with "..") are built in a temp root next to decoy files outside it. Two properties:
//  1. containment: no read returns a decoy, every resolved path lies inside the root;
//  2. the kernel agrees: each query opened by a shell chroot-ed into the root (real kernel path walk,
//     ".." clamped at the root) gives the same file, or fails where HostRoot fails.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFile, link, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { existsSync, realpathSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { HostRoot } from '../../src/host/host-root.ts';
import { requireTool } from '../helpers/tools.ts';

const NAMES = ['a', 'b', 'c'];
const DECOY = 'OUTSIDE';
/** coreutils' readlink, copied into each root with the shell. */
const READLINK = realpathSync('/usr/bin/readlink');
const component = fc.constantFrom(...NAMES, '..', '.', 'nope');
const relative = fc.array(component, { minLength: 1, maxLength: 5 }).map((parts) => parts.join('/'));
const linkTarget = fc.tuple(fc.boolean(), relative, fc.boolean())
  .map(([absolute, rel, trailing]) => `${absolute ? '/' : ''}${rel}${trailing ? '/' : ''}`);
const entryPath = fc.array(fc.constantFrom(...NAMES), { minLength: 1, maxLength: 3 }).map((parts) => parts.join('/'));
const entry = fc.oneof(
  fc.record({ kind: fc.constant('dir' as const), at: entryPath }),
  fc.record({ kind: fc.constant('file' as const), at: entryPath }),
  fc.record({ kind: fc.constant('link' as const), at: entryPath, target: linkTarget }),
);
type Entry = { kind: 'dir'; at: string } | { kind: 'file'; at: string } | { kind: 'link'; at: string; target: string };
const forest = fc.array(entry, { minLength: 1, maxLength: 14 });
const queries = fc.array(fc.tuple(relative, fc.boolean()).map(([rel, trailing]) => `/${rel}${trailing ? '/' : ''}`), { minLength: 1, maxLength: 12 });

/** Creates what it can of the forest: an entry whose parent is not a directory is skipped. */
async function materialize(root: string, entries: Entry[]): Promise<void> {
  const kinds = new Map<string, Entry['kind']>();
  for (const e of [...entries].sort((x, y) => x.at.split('/').length - y.at.split('/').length)) {
    if (kinds.has(e.at)) continue;
    const parents = e.at.split('/').slice(0, -1).map((_, i, all) => all.slice(0, i + 1).join('/'));
    if (parents.some((p) => kinds.has(p) && kinds.get(p) !== 'dir')) continue;
    for (const p of parents) if (!kinds.has(p)) { kinds.set(p, 'dir'); await mkdir(path.join(root, p), { recursive: true }); }
    const local = path.join(root, e.at);
    if (e.kind === 'dir') await mkdir(local, { recursive: true });
    else if (e.kind === 'file') await writeFile(local, `file:${e.at}\n`);
    else await symlink(e.target, local);
    kinds.set(e.at, e.kind);
  }
}

async function decoys(base: string): Promise<void> {
  for (const name of [...NAMES, 'nope']) {
    await writeFile(path.join(base, name), `${DECOY}\n`);
    await mkdir(path.join(base, `${name}-dir`), { recursive: true });
  }
}

async function ourAnswers(root: string, paths: string[]): Promise<string[]> {
  const host = new HostRoot(root);
  const answers: string[] = [];
  for (const p of paths) {
    const where = await host.realPath(p);
    if (where.ok) {
      const local = path.resolve(root, `.${where.path}`);
      assert.equal(realpathSync(local), local, `${p} resolved to ${where.path}, which is not a real path inside ${root}`);
    }
    const info = await host.stat(p);
    answers.push(where.ok && info.ok && info.info.isDirectory() ? `dir ${where.path}` : 'fail');
    const read = await host.readText(p);
    assert.ok(!(read.ok && read.text.includes(DECOY)), `${p} read a file outside the root`);
    answers.push(read.ok && read.text.endsWith('\n') && !read.text.slice(0, -1).includes('\n') ? `ok ${read.text.slice(0, -1)}` : 'fail');
    const link = await host.readLink(p);
    answers.push(link.ok ? `link ${link.text}` : 'fail');
  }
  return answers;
}

/** The shell and the libraries it needs, at their own paths (names the forest never uses). */
function shellFiles(shell: string): string[] {
  return [shell, ...[...execFileSync('ldd', [shell], { encoding: 'utf8' }).matchAll(/(\/\S+) \(0x/g)].map((m) => m[1] as string)];
}

/** Copied once next to the roots, then hard-linked into each root. */
async function installShell(store: string, root: string, files: string[]): Promise<void> {
  for (const file of files) {
    const copy = path.join(store, file);
    if (!existsSync(copy)) {
      await mkdir(path.dirname(copy), { recursive: true });
      await copyFile(file, copy);
    }
    await mkdir(path.join(root, path.dirname(file)), { recursive: true });
    await link(copy, path.join(root, file));
  }
}

// Three lines per query: "dir <path>" when the kernel changed into it as a directory (cd -P: chdir(2),
// then getcwd(3)), else "fail"; "ok <first line>" when the kernel opened a regular file and read its
// line, else "fail"; "link <target>" when readlink(1) (which follows no last component) read a
// link, else "fail". (`readlink -e` is no oracle: coreutils 9.1 never ends on /a -> /a/nope.)
const ORACLE = `for p in "$@"; do
  if real=$(cd -P -- "$p" && pwd -P); then echo "dir $real"; else echo fail; fi
  if [ -f "$p" ] && IFS= read -r line < "$p"; then echo "ok $line"; else echo fail; fi
  if target=$(${READLINK} -- "$p"); then echo "link $target"; else echo fail; fi
done`;

function kernelAnswers(chroot: string, root: string, shell: string, paths: string[]): string[] {
  const run = spawnSync(chroot, [root, shell, '-c', ORACLE, 'oracle', ...paths], { encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  return run.stdout.trimEnd().split('\n');
}

async function tempBase(t: TestContext): Promise<string> {
  const base = await mkdtemp(path.join(os.tmpdir(), 'nta-forest-'));
  t.after(() => rm(base, { recursive: true, force: true }));
  return base;
}

test('random symlink forests: HostRoot never reads or resolves outside the root', async (t) => {
  const base = await tempBase(t);
  await decoys(base);
  let n = 0;
  await fc.assert(fc.asyncProperty(forest, queries, async (entries, paths) => {
    const root = path.join(base, `root${n++}`);
    await mkdir(root);
    try {
      await materialize(root, entries);
      await ourAnswers(root, paths);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  }), { numRuns: 200 });
});

test('random symlink forests: HostRoot opens what the kernel opens in a chroot at the root', async (t) => {
  const chroot = requireTool(t, 'chroot', 'coreutils');
  if (!chroot) return;
  if (process.getuid?.() !== 0) return t.skip('chroot(2) needs root; run the suite as root (CI does) to compare with the kernel');
  const base = await tempBase(t);
  await decoys(base);
  const shell = realpathSync('/bin/sh');
  const files = [...new Set([...shellFiles(shell), ...shellFiles(READLINK)])];
  let n = 0;
  await fc.assert(fc.asyncProperty(forest, queries, async (entries, paths) => {
    const root = path.join(base, `root${n++}`);
    await mkdir(root);
    try {
      await installShell(path.join(base, 'store'), root, files);
      await materialize(root, entries);
      assert.deepEqual(await ourAnswers(root, paths), kernelAnswers(chroot, root, shell, paths), `forest ${JSON.stringify(entries)}, paths ${JSON.stringify(paths)}`);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  }), { numRuns: 150 });
});
