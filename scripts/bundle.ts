// Bundles the CLI (and any worker-thread entry the sources start with `new Worker(new URL(...))`)
// into dist/bundle/ for the container image: one file, no node_modules at run time.
// Sources find files next to themselves (`new URL('../../rules/', import.meta.url)`, package.json):
// in the bundle each of our modules gets the URL its source file would have under the app root
// (the bundle sits two directories below it), so those paths resolve as they do from src/.
import { build, type Plugin } from 'esbuild';
import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const OUT_DIR = path.join(ROOT, 'dist', 'bundle');
export const BUNDLE = path.join(OUT_DIR, 'node-tuning-advisor.mjs');
const WORKER_URL = /new Worker\(\s*new URL\(\s*'\.\/([\w.-]+\.ts)'\s*,\s*import\.meta\.url\s*\)/g;

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

// Whitespace and syntax minified, identifiers kept (readable stack traces): 3.9 MiB instead of
// 7.3 MiB, and ~22 MiB less resident in the agent (bench/footprint.ts).
const BANNER = "import { createRequire as __ntaCreateRequire } from 'node:module'; const require = __ntaCreateRequire(import.meta.url);";

async function bundle(entryPoints: Record<string, string>, outExtension: string, outdir: string): Promise<void> {
  await build({
    entryPoints, outdir, bundle: true, platform: 'node', format: 'esm', target: 'node24',
    outExtension: { '.js': outExtension }, banner: { js: BANNER }, legalComments: 'none', logLevel: 'warning', minifyWhitespace: true, minifySyntax: true,
    plugins: [sourceUrls],
  });
}

/** Writes the bundle (and its workers) into outDir, which must sit two levels below an app root. */
export async function bundleTo(outDir: string): Promise<{ file: string; workers: string[] }> {
  await bundle({ 'node-tuning-advisor': path.join(ROOT, 'bin', 'node-tuning-advisor.js') }, '.mjs', outDir);
  const workers = await workerEntries();
  // A worker the sources load as './x.ts' is loaded as './x.mjs' from the bundle: Node refuses to
  // strip types from a .ts file under node_modules, where an installed package lives.
  for (const [name, file] of Object.entries(workers)) await bundle({ [name.replace(/\.ts$/, '')]: file }, '.mjs', outDir);
  await writeFile(path.join(outDir, PLUGIN_FILE), PLUGIN_ENTRY, { mode: 0o755 });
  return { file: path.join(outDir, path.basename(BUNDLE)), workers: Object.keys(workers) };
}

export async function main(): Promise<void> {
  const { workers } = await bundleTo(OUT_DIR);
  const { size } = await stat(BUNDLE);
  process.stdout.write(`bundle: ${path.relative(ROOT, BUNDLE)} ${(size / 1024 / 1024).toFixed(2)} MiB` +
    `${workers.length ? `, workers: ${workers.join(', ')}` : ''}\n`);
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
