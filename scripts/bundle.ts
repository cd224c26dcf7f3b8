// Bundles the CLI (and any worker-thread entry the sources start with `new Worker(new URL(...))`)
// into dist/bundle/ for the container image: no node_modules at run time.
// Sources find files next to themselves (`new URL('../../rules/', import.meta.url)`, package.json):
// in the bundle each of our modules gets the URL its source file would have under the app root
// (the bundle sits two directories below it), so those paths resolve as they do from src/.
// What keeps the agent small (bench/footprint.ts measures it; DEVELOPERS.md "Footprint"):
//  - code splitting: the entry holds the command table only; each command, and each module loaded
//    with import() (execa, systeminformation), is a chunk loaded when it runs;
//  - ASCII output: V8 holds an all-ASCII script one byte per character, any other as UTF-16;
//  - REPLACEMENTS (scripts/replacements.ts): modules a dependency imports for features we never call, stubbed, with checks
//    that fail the build when the importer or the replaced module changes;
//  - no WebAssembly anywhere (the agent runs under `node --lite-mode`): workers are bundled .mjs,
//    never .ts (type stripping needs WebAssembly), and npm undici is replaced.
import { build, type BuildOptions, type BuildResult, type Metafile, type Plugin } from 'esbuild';
import { mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { REPLACEMENTS, type Replacement } from './replacements.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const OUT_DIR = path.join(ROOT, 'dist', 'bundle');
export const BUNDLE = path.join(OUT_DIR, 'node-tuning-advisor.mjs');
const WORKER_URL = /new Worker\(\s*new URL\(\s*'\.\/([\w.-]+\.ts)'\s*,\s*import\.meta\.url\s*\)/g;

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * The names `text` imports from `specifier` (`import { a, b as c } from 'x'` → [a, b]), or a
 * problem when it takes more than named bindings (default, namespace, re-export, import()).
 */
export function namedImports(text: string, specifier: string): { names: string[] } | { problem: string } {
  const quoted = `['"]${escapeRegExp(specifier)}['"]`;
  if (new RegExp(`import\\s*\\(\\s*${quoted}`).test(text)) return { problem: `loads ${specifier} with import()` };
  if (new RegExp(`export\\s[^;]*?from\\s*${quoted}`).test(text)) return { problem: `re-exports from ${specifier}` };
  const statements = [...text.matchAll(new RegExp(`import\\s+([^;]*?)\\s*from\\s*${quoted}`, 'g'))];
  if (statements.length === 0) return { problem: `no longer imports ${specifier}` };
  const names: string[] = [];
  for (const [, clause] of statements) {
    const named = /^\{([^}]*)\}$/.exec((clause as string).trim());
    if (!named) return { problem: `imports ${specifier} as "${(clause as string).trim()}", not only named bindings` };
    names.push(...(named[1] as string).split(',').map((s) => s.trim().split(/\s+as\s+/)[0] as string).filter(Boolean));
  }
  return { names: [...new Set(names)].sort() };
}

/** Why a replacement no longer fits: the importer takes other names than the stub has, or the real module lost one. */
export function replacementProblems(r: Replacement, importerText: string, stubExports: string[], realExports: string[]): string[] {
  const where = `${r.importer} → ${r.specifier} (stub ${r.stub})`;
  const imported = namedImports(importerText, r.specifier);
  if ('problem' in imported) return [`${where}: the importer ${imported.problem}`];
  const problems: string[] = [];
  const stub = new Set(stubExports);
  const missing = imported.names.filter((n) => !stub.has(n));
  const unused = stubExports.filter((n) => !imported.names.includes(n));
  if (missing.length) problems.push(`${where}: the importer now imports ${missing.join(', ')}, which the stub lacks`);
  if (unused.length) problems.push(`${where}: the importer no longer imports ${unused.join(', ')}; shrink the stub`);
  const gone = stubExports.filter((n) => !realExports.includes(n));
  if (gone.length) problems.push(`${where}: the real module no longer exports ${gone.join(', ')}; re-check what the importer does with it`);
  return problems;
}

async function exportsOf(file: string): Promise<string[]> {
  return Object.keys(await import(pathToFileURL(file).href)).filter((n) => n !== 'default' && n !== 'module.exports');
}

/** Throws, naming each problem, unless every replacement still fits the installed dependencies. */
export async function checkReplacements(replacements = REPLACEMENTS): Promise<void> {
  const problems: string[] = [];
  for (const r of replacements) {
    const importer = path.join(ROOT, r.importer);
    const real = r.specifier.startsWith('.') ? path.resolve(path.dirname(importer), r.specifier) : createRequire(importer).resolve(r.specifier);
    problems.push(...replacementProblems(r, await readFile(importer, 'utf8'), await exportsOf(path.join(ROOT, r.stub)), await exportsOf(real)));
  }
  if (problems.length) throw new Error(`bundle: module replacements no longer fit (scripts/replacements.ts):\n  ${problems.join('\n  ')}`);
}

const rel = (file: string) => path.relative(ROOT, file).split(path.sep).join('/');

const replaceModules: Plugin = {
  name: 'replace-modules',
  setup(b) {
    for (const r of REPLACEMENTS) {
      b.onResolve({ filter: new RegExp(`^${escapeRegExp(r.specifier)}$`) }, (args) => (rel(args.importer) === r.importer ? { path: path.join(ROOT, r.stub) } : undefined));
    }
  },
};

/** Every replacement was applied: its stub is in the bundle and the real module is not (else the importer moved). */
function assertReplaced(meta: Metafile): void {
  const inputs = Object.keys(meta.inputs);
  for (const r of REPLACEMENTS) {
    if (!inputs.includes(r.importer)) continue;
    if (!inputs.includes(r.stub)) throw new Error(`bundle: ${r.importer} is bundled but its import of ${r.specifier} was not replaced by ${r.stub}`);
  }
  const undici = inputs.find((i) => i.startsWith('node_modules/undici/'));
  if (undici) throw new Error(`bundle: npm undici is in the bundle (${undici}); it needs WebAssembly, which node --lite-mode lacks`);
}

/**
 * Node's built-in modules whose ES-module facade costs more than the module: building the facade
 * reads every export, and node:http's WebSocket, CloseEvent and MessageEvent getters load Node's
 * internal undici (+15 MiB resident). `require()` and process.getBuiltinModule() read no getter.
 * An `import` of these becomes a module that takes the built-in with getBuiltinModule and
 * re-exports every other name (a default import gets the module object, getters intact).
 */
export const LAZY_GETTERS: Record<string, string[]> = { 'node:http': ['WebSocket', 'CloseEvent', 'MessageEvent'] };

/** The stand-in module for a built-in's ES import: its names but the costly getters, read once. */
export function builtinShim(name: string, mod: object, skip: string[]): string {
  const names = Object.keys(mod).filter((n) => !skip.includes(n) && /^[A-Za-z_$][\w$]*$/.test(n));
  return [
    `const m = process.getBuiltinModule(${JSON.stringify(name)});`,
    'export default m;',
    ...names.map((n) => `export const ${n} = m.${n};`),
    '',
  ].join('\n');
}

const builtinShims: Plugin = {
  name: 'builtin-shims',
  setup(b) {
    b.onResolve({ filter: /^(node:)?[a-z_/]+$/ }, (args) => {
      const name = args.path.startsWith('node:') ? args.path : `node:${args.path}`;
      if (!(name in LAZY_GETTERS) || (args.kind !== 'import-statement' && args.kind !== 'dynamic-import')) return undefined;
      return { path: name, namespace: 'builtin-shim' };
    });
    b.onLoad({ filter: /.*/, namespace: 'builtin-shim' }, (args) => {
      const mod = process.getBuiltinModule(args.path) as object;
      const missing = (LAZY_GETTERS[args.path] ?? []).filter((n) => !(n in mod));
      if (missing.length) console.warn(`bundle: ${args.path} no longer has ${missing.join(', ')} (LAZY_GETTERS in scripts/bundle.ts)`);
      return { contents: builtinShim(args.path, mod, LAZY_GETTERS[args.path] ?? []), loader: 'js' };
    });
  },
};

/**
 * Source modules the bundle replaces by code generated at build time from the same sources: the rule
 * file validator, compiled by ajv here (standalone output) instead of in every process that loads
 * rules. Importers get the same names; a name the generated module lacks fails the build.
 */
export async function ruleFileValidatorModule(): Promise<string> {
  const { compileRuleFileValidator } = await import('../src/rules/file-validator.ts');
  type Standalone = (ajv: unknown, validate: unknown) => string;
  const standalone = (await import('ajv/dist/standalone/index.js')) as unknown as { default: Standalone | { default: Standalone } };
  const standaloneCode = typeof standalone.default === 'function' ? standalone.default : standalone.default.default;
  const { ajv, validate } = compileRuleFileValidator(true);
  return `${standaloneCode(ajv, validate)}\nexport const validateRuleFile = validate;\n`;
}

/** The bundled rule files' texts and what the source loader makes of them (src/rules/known-rule-files.ts). */
export async function knownRuleFilesModule(): Promise<string> {
  const { parseRuleText } = await import('../src/rules/load.ts');
  const dir = path.join(ROOT, 'rules');
  const entries: [string, string][] = [];
  for (const name of (await readdir(dir)).filter((n) => /\.ya?ml$/.test(n)).sort()) {
    const text = await readFile(path.join(dir, name), 'utf8');
    entries.push([text, JSON.stringify(parseRuleText(text))]);
  }
  return [
    `const KNOWN = new Map(${JSON.stringify(entries)});`,
    'export function knownRuleFile(text) {',
    '  const json = KNOWN.get(text);',
    '  return json === undefined ? undefined : JSON.parse(json);',
    '}',
    '',
  ].join('\n');
}

const PRECOMPILED: Record<string, () => Promise<string>> = {
  'src/rules/file-validator.ts': ruleFileValidatorModule,
  'src/rules/known-rule-files.ts': knownRuleFilesModule,
};

const precompiled: Plugin = {
  name: 'precompiled',
  setup(b) {
    b.onLoad({ filter: /[\\/]src[\\/]rules[\\/][\w-]+\.ts$/ }, async (args) => {
      const generate = PRECOMPILED[rel(args.path)];
      return generate ? { contents: await generate(), loader: 'js', resolveDir: path.dirname(args.path) } : undefined;
    });
  },
};

async function sourceFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const nested = await Promise.all(entries.map((e) => {
    const full = path.join(dir, e.name);
    return e.isDirectory() ? sourceFiles(full) : Promise.resolve(e.name.endsWith('.ts') ? [full] : []);
  }));
  return nested.flat();
}

/** Worker files the sources load by URL: they become entry points named as the sources expect. */
export async function workerEntries(): Promise<Record<string, string>> {
  const entries: Record<string, string> = {};
  for (const file of await sourceFiles(path.join(ROOT, 'src'))) {
    for (const match of (await readFile(file, 'utf8')).matchAll(WORKER_URL)) {
      const name = match[1] as string;
      const worker = path.join(path.dirname(file), name);
      if ((await stat(worker)).isFile()) entries[name] = worker;
    }
  }
  return entries;
}

/** Our own modules: import.meta.url → the URL of the source file as if it sat under the app root. */
const sourceUrls: Plugin = {
  name: 'source-urls',
  setup(b) {
    b.onLoad({ filter: /[\\/]src[\\/].*\.ts$/ }, async (args) => {
      const rel = path.relative(ROOT, args.path).split(path.sep).join('/');
      const text = (await readFile(args.path, 'utf8'))
        .replace(WORKER_URL, (whole) => whole.replace('import.meta.url', '__NTA_BUNDLE_URL__').replace(/\.ts'/, ".mjs'"))
        .replaceAll('import.meta.url', `new URL(${JSON.stringify(`../../${rel}`)}, import.meta.url).href`)
        .replaceAll('__NTA_BUNDLE_URL__', 'import.meta.url');
      return { contents: text, loader: 'ts' };
    });
  },
};

/** `kubectl node-tuning`: the same bundle through its kubectl-plugin command (package.json "bin"). */
const PLUGIN_FILE = 'kubectl-node_tuning.mjs';
const PLUGIN_ENTRY = "#!/usr/bin/env node\nprocess.argv.splice(2, 0, 'kubectl-plugin');\nawait import('./node-tuning-advisor.mjs');\n";

// Whitespace and syntax minified, identifiers kept (readable stack traces): about half the bytes,
// and less resident in the agent (bench/footprint.ts).
const BANNER = "import { createRequire as __ntaCreateRequire } from 'node:module'; const require = __ntaCreateRequire(import.meta.url);";

/**
 * esbuild's `charset: 'ascii'` escapes strings, templates and identifiers but leaves regular
 * expression literals as written (`/[a-z\u00b5\u03bc]+/` in the throttling patterns, a degree sign in
 * systeminformation): the rest is escaped here. `\uXXXX` means the same code unit in a string and in
 * a regular expression with or without the u flag; a character that follows a backslash (an
 * identity escape) would change meaning, so it stops the build instead.
 */
export function asciiOnly(text: string, file = 'output'): string {
  return text.replace(/[\u0080-\uffff]/g, (char, at: number) => {
    if (text[at - 1] === '\\') throw new Error(`bundle: ${file}: cannot escape "${char}" after a backslash (offset ${at})`);
    return `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`;
  });
}

const OPTIONS = {
  bundle: true, platform: 'node', format: 'esm', target: 'node24', splitting: true, charset: 'ascii',
  absWorkingDir: ROOT, metafile: true, write: false,
  outExtension: { '.js': '.mjs' }, banner: { js: BANNER }, legalComments: 'none', logLevel: 'warning', minifyWhitespace: true, minifySyntax: true,
} satisfies BuildOptions;

async function writeOutputs(result: BuildResult<typeof OPTIONS>, outdir: string): Promise<void> {
  await mkdir(outdir, { recursive: true });
  for (const out of result.outputFiles) {
    const entry = /^#!/.test(out.text);
    await writeFile(out.path, asciiOnly(out.text, path.basename(out.path)), { mode: entry ? 0o755 : 0o644 });
  }
}

async function bundle(entryPoints: Record<string, string>, outdir: string): Promise<Metafile> {
  const result = await build({ ...OPTIONS, entryPoints, outdir, plugins: [builtinShims, replaceModules, precompiled, sourceUrls] });
  assertReplaced(result.metafile);
  await writeOutputs(result, outdir);
  return result.metafile;
}

/**
 * One ES module's text, resolved from the project root, bundled alone into outdir/snippet.mjs the way
 * the CLI is (replacements off: as the packages are): what bench/imports.ts measures an import with.
 */
export async function bundleSnippet(contents: string, outdir: string, replace = true): Promise<string> {
  const result = await build({
    ...OPTIONS, stdin: { contents, resolveDir: ROOT, sourcefile: 'snippet.ts', loader: 'ts' }, outdir,
    plugins: replace ? [builtinShims, replaceModules, precompiled, sourceUrls] : [sourceUrls], entryNames: 'snippet',
  });
  await writeOutputs(result, outdir);
  return path.join(outdir, 'snippet.mjs');
}

/**
 * Writes the bundle, its chunks and its workers into outDir (emptied first: chunk names change with
 * their content), which must sit two levels below an app root. The metafile covers the main bundle.
 */
export async function bundleTo(outDir: string): Promise<{ file: string; workers: string[]; metafile: Metafile }> {
  await checkReplacements();
  await rm(outDir, { recursive: true, force: true });
  const metafile = await bundle({ 'node-tuning-advisor': path.join(ROOT, 'bin', 'node-tuning-advisor.js') }, outDir);
  const workers = await workerEntries();
  // A worker the sources load as './x.ts' is loaded as './x.mjs' from the bundle: type stripping
  // needs WebAssembly (absent under --lite-mode), and Node refuses it under node_modules, where an
  // installed package lives.
  for (const [name, file] of Object.entries(workers)) await bundle({ [name.replace(/\.ts$/, '')]: file }, outDir);
  await writeFile(path.join(outDir, PLUGIN_FILE), PLUGIN_ENTRY, { mode: 0o755 });
  return { file: path.join(outDir, path.basename(BUNDLE)), workers: Object.keys(workers), metafile };
}

export async function main(): Promise<void> {
  const { workers, metafile } = await bundleTo(OUT_DIR);
  const { size } = await stat(BUNDLE);
  const chunks = Object.keys(metafile.outputs).filter((f) => f.endsWith('.mjs')).length - 1;
  process.stdout.write(`bundle: ${path.relative(ROOT, BUNDLE)} ${(size / 1024).toFixed(0)} KiB and ${chunks} chunks` +
    `${workers.length ? `, workers: ${workers.join(', ')}` : ''}\n`);
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
