// Ideas that once were written several times have one home each; this reads src/ for a second copy.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const SRC = path.resolve(import.meta.dirname, '../../src');
const FILES = readdirSync(SRC, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
const TEXT = new Map(FILES.map((f) => [f.split(path.sep).join('/'), readFileSync(path.join(SRC, f), 'utf8')]));

/** The files whose text matches, minus the one home. */
function copies(pattern: RegExp, home: string): string[] {
  return [...TEXT].filter(([file, text]) => file !== home && pattern.test(text)).map(([file]) => file);
}

const HOMES: [string, RegExp, string][] = [
  ['the loose API-object type', /Record<string,\s*any>/, 'kube/objects.ts'],
  ['plural[.group]', /\.plural\}\.\$\{/, 'kube/resources.ts'],
  ['the {{…}} placeholder grammar', /\\\{\\\{\\s\*/, 'rules/template.ts'],
  ['the in-place status line (erase to end of line)', /\\u001b\[K/, 'text/status-line.ts'],
  ['display columns of wide characters', /\\u1100-\\u115F/, 'text/columns.ts'],
  ['the control-character table', /\\u\{?0*2066|0x2066/, 'text/controls.ts'],
  ['an EnvironmentFile parser (KEY=value lines, `export` allowed)', /\(\?:export\\s\+\)\?\(\[A-Za-z_\]/, 'host/systemd-unit.ts'],
  ['a static pod manifest read from YAML', /from 'yaml';[\s\S]*spec\?\.containers/, 'collectors/static-pod.ts'],
  ['escaping text for HTML', /&amp;|&lt;/, 'text/html.ts'],
];

for (const [what, pattern, home] of HOMES) {
  test(`${what}: only in src/${home}`, () => {
    assert.ok(pattern.test(TEXT.get(home) ?? ''), `the pattern finds the home itself (${home})`);
    assert.deepEqual(copies(pattern, home), []);
  });
}
