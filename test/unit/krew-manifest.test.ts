// The krew plugin manifest (krew/node-tuning.yaml) against what krew checks before it installs one
// (sigs.k8s.io/krew internal/index/validation/validate.go: ValidatePlugin, validatePlatform,
// validateFiles, validateSelector), and against the package it installs: its `bin`, after the
// manifest's file moves, is the kubectl plugin entry package.json ships, and its version is the package's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';

const ROOT = path.resolve(import.meta.dirname, '../..');
const FILE = path.join(ROOT, 'krew/node-tuning.yaml');
const manifest = parse(readFileSync(FILE, 'utf8'));
const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { name: string; version: string; bin: Record<string, string>; files: string[] };

interface FileOperation { from?: string; to?: string }
interface Platform { uri?: string; sha256?: string; bin?: string; files?: FileOperation[]; selector?: { matchLabels?: Record<string, string>; matchExpressions?: { key: string; operator: string; values?: string[] }[] } }
const platforms = (manifest.spec?.platforms ?? []) as Platform[];

/** Where krew puts an archive path: the first file move whose `from` (a glob of one `*` at the end, as ours use) matches it. */
function installedPath(archivePath: string, files: FileOperation[]): string | undefined {
  for (const { from = '', to = '.' } of files) {
    const prefix = from.endsWith('*') ? from.slice(0, -1) : from;
    if (from.endsWith('*') ? archivePath.startsWith(prefix) : archivePath === from) return path.posix.normalize(path.posix.join(to, archivePath.slice(prefix.length)));
  }
  return undefined;
}

test('krew manifest: apiVersion, kind, a safe name equal to the file name, a one-line short description', () => {
  assert.equal(manifest.apiVersion, 'krew.googlecontainertools.github.com/v1alpha2');
  assert.equal(manifest.kind, 'Plugin');
  assert.equal(manifest.metadata?.name, path.basename(FILE, '.yaml'));
  assert.match(manifest.metadata.name, /^[\w-]+$/);
  assert.ok(manifest.spec.shortDescription, 'shortDescription');
  assert.doesNotMatch(manifest.spec.shortDescription, /[\r\n]/);
});

test('krew manifest: its version is package.json\'s, as krew spells a semver (v prefix)', () => {
  assert.equal(manifest.spec.version, `v${pkg.version}`);
  assert.match(manifest.spec.version, /^v\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/);
});

test('krew manifest: every platform has uri, a sha256 of 64 hex digits, bin, file moves with from/to, an os/arch selector', () => {
  assert.ok(platforms.length > 0, 'at least one platform');
  for (const p of platforms) {
    assert.ok(p.uri, 'uri');
    assert.match(p.sha256 ?? '', /^[a-f0-9]{64}$/);
    assert.ok(p.bin, 'bin');
    assert.ok(p.files === undefined || p.files.length > 0, 'files unset or non-empty');
    for (const op of p.files ?? []) assert.ok(op.from && op.to, `from and to: ${JSON.stringify(op)}`);
    const { matchLabels, matchExpressions } = p.selector ?? {};
    assert.ok(p.selector && (matchLabels || matchExpressions?.length), 'a non-empty selector');
    const keys = [...Object.keys(matchLabels ?? {}), ...(matchExpressions ?? []).map((e) => e.key)];
    assert.ok(keys.every((k) => k === 'os' || k === 'arch'), `selector keys: ${keys}`);
    // krew links bin as kubectl-node_tuning; on Windows it must be an .exe, which a Node script is not.
    const oses = [matchLabels?.os, ...(matchExpressions ?? []).filter((e) => e.key === 'os').flatMap((e) => e.values ?? [])];
    assert.ok(!oses.includes('windows'), 'no windows platform');
  }
});

test('krew manifest: the archive is the npm package, and bin is its kubectl plugin entry', () => {
  const entry = pkg.bin['kubectl-node_tuning'];
  assert.ok(entry, 'package.json ships a kubectl-node_tuning command');
  assert.equal(manifest.metadata.name.replaceAll('-', '_'), 'node_tuning', 'krew links kubectl-<name, - as _>: the same command');
  assert.ok(pkg.files.some((f) => entry.startsWith(f.replace(/\/$/, '') + '/') || entry === f), `${entry} is under package.json "files"`);
  for (const p of platforms) {
    assert.equal(path.posix.basename(new URL(p.uri as string).pathname), `${pkg.name}-${pkg.version}.tgz`, 'the file name `npm pack` writes');
    // npm pack puts every file under package/.
    assert.equal(installedPath(`package/${entry}`, p.files ?? [{ from: '*', to: '.' }]), p.bin);
    for (const shipped of ['package/package.json', 'package/rules/host.yaml']) assert.ok(installedPath(shipped, p.files ?? []), `${shipped} is moved in too (the bundle reads them two levels above it)`);
  }
});

test('the committed manifest keeps its placeholders; scripts/krew-manifest.ts changes only version, uri and sha256 (and the header)', async () => {
  const { releaseManifest } = await import('../../scripts/krew-manifest.ts');
  for (const p of platforms) {
    assert.equal(new URL(p.uri as string).hostname, 'release-host.invalid');
    assert.equal(p.sha256, '0'.repeat(64));
  }
  const release = { version: '9.8.7', url: 'https://downloads.example.com/v9.8.7/node-tuning-advisor-9.8.7.tgz', sha256: 'ab'.repeat(32) };
  const generated = parse(releaseManifest(readFileSync(FILE, 'utf8'), release));
  const expected = structuredClone(manifest);
  expected.spec.version = 'v9.8.7';
  for (const p of expected.spec.platforms) Object.assign(p, { uri: release.url, sha256: release.sha256 });
  assert.deepEqual(generated, expected);
});

test('npm run krew:manifest: a bad flag names itself and the fix, exit 2, no stack trace', async () => {
  const { execFile } = await import('node:child_process');
  const script = path.join(ROOT, 'scripts/krew-manifest.ts');
  const cases: [string[], RegExp][] = [
    [['--url', 'https://downloads.example.com/node-tuning-advisor-1.0.0.tgz'], /^krew:manifest: --version \(missing\): give the release's version/],
    [['--version', pkg.version], /^krew:manifest: --url is missing: .*node-tuning-advisor-\d+\.\d+\.\d+\.tgz/],
    [['--version', pkg.version, '--url', `http://downloads.example.com/node-tuning-advisor-${pkg.version}.tgz`], /^krew:manifest: --url .*: krew downloads over https/],
    [['--version', pkg.version, '--url', 'https://downloads.example.com/other.tgz'], /^krew:manifest: --url .* must end in node-tuning-advisor-/],
    [['--version', pkg.version, '--url', `https://downloads.example.com/node-tuning-advisor-${pkg.version}.tgz`, '--archive', FILE], /^krew:manifest: --archive .* is not an npm pack tarball/],
  ];
  for (const [args, message] of cases) {
    const result = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = execFile(process.execPath, [script, ...args], { encoding: 'utf8' }, (_err, _stdout, stderr) => resolve({ code: child.exitCode, stderr }));
    });
    assert.equal(result.code, 2, `${args.join(' ')}: ${result.stderr}`);
    assert.match(result.stderr, message);
    assert.doesNotMatch(result.stderr, /\n\s+at /, 'no stack trace');
  }
});
