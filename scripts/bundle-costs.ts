// Reads esbuild's metafile of the bundle: what each package costs in bytes, which output file holds
// it, and what each command loads before it runs (the entry file and the command's chunk with their
// static imports; dynamic imports such as execa and systeminformation load only when called).
import path from 'node:path';
import type { Metafile } from 'esbuild';

const KiB = 1024;

/** The package an input belongs to: "yaml", "@kubernetes/client-node (gen)", "own code", "stubs". */
export function packageOf(input: string): string {
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)\/(.*)$/.exec(input);
  if (m) return m[1] === '@kubernetes/client-node' && m[2]?.startsWith('dist/gen/') ? `${m[1]} (gen)` : m[1] as string;
  if (input.startsWith('scripts/stubs/')) return 'stubs (scripts/stubs)';
  if (input.startsWith('builtin-shim:')) return 'built-in shims (scripts/bundle.ts)';
  if (input.startsWith('src/') || input.startsWith('bin/')) return 'own code';
  return input;
}

const outputName = (key: string) => path.basename(key);

function outputByName(meta: Metafile): Map<string, Metafile['outputs'][string] & { key: string }> {
  return new Map(Object.entries(meta.outputs).map(([key, out]) => [outputName(key), { ...out, key }]));
}

/** Output files loaded with `name` before anything runs: it and its static imports, transitively. */
export function staticClosure(meta: Metafile, name: string): string[] {
  const outputs = outputByName(meta);
  const seen = new Set<string>();
  const visit = (n: string) => {
    if (seen.has(n) || !outputs.has(n)) return;
    seen.add(n);
    for (const imp of outputs.get(n)?.imports ?? []) if (!imp.external && imp.kind === 'import-statement') visit(outputName(imp.path));
  };
  visit(name);
  return [...seen];
}

/** The output file whose entry point (or dynamic-import target) is `source` (e.g. src/cli/commands/scan.ts). */
export function outputOf(meta: Metafile, source: string): string | undefined {
  for (const [key, out] of Object.entries(meta.outputs)) if (out.entryPoint === source) return outputName(key);
  return undefined;
}

/** Bytes per package in the given output files. */
export function packageBytes(meta: Metafile, names: string[]): Map<string, number> {
  const outputs = outputByName(meta);
  const bytes = new Map<string, number>();
  for (const name of names) {
    for (const [input, { bytesInOutput }] of Object.entries(outputs.get(name)?.inputs ?? {})) {
      const pkg = packageOf(input);
      bytes.set(pkg, (bytes.get(pkg) ?? 0) + bytesInOutput);
    }
  }
  return bytes;
}

/** The packages a command loads before it runs: the main entry's closure plus its command chunk's. */
export function loadedBy(meta: Metafile, entry: string, commandSource?: string): { files: string[]; packages: Map<string, number> } {
  const chunk = commandSource ? outputOf(meta, commandSource) : undefined;
  if (commandSource && !chunk) throw new Error(`${commandSource} is not a chunk of its own: the command table must import it lazily`);
  const files = [...new Set([...staticClosure(meta, entry), ...(chunk ? staticClosure(meta, chunk) : [])])];
  return { files, packages: packageBytes(meta, files) };
}

function sizeOf(meta: Metafile, files: string[]): number {
  const outputs = outputByName(meta);
  return files.reduce((sum, f) => sum + (outputs.get(f)?.bytes ?? 0), 0);
}

const kib = (n: number) => `${(n / KiB).toFixed(0)} KiB`;

function listPackages(bytes: Map<string, number>, max = 8): string {
  const sorted = [...bytes].sort((a, b) => b[1] - a[1]);
  const shown = sorted.slice(0, max).map(([p, n]) => `${p} ${kib(n)}`);
  return shown.join(', ') + (sorted.length > max ? `, +${sorted.length - max} more` : '');
}

/** The bench's text: per package, per output file, per command. */
export function describeBundle(meta: Metafile, entry = 'node-tuning-advisor.mjs'): string {
  const all = Object.keys(meta.outputs).map(outputName).filter((n) => n.endsWith('.mjs') || n.endsWith('.js'));
  const lines = [`bundle (esbuild metafile): ${all.length} files, ${kib(sizeOf(meta, all))}`, '  bytes per package, and the files holding them:'];
  const outputs = outputByName(meta);
  const where = new Map<string, Set<string>>();
  for (const name of all) for (const input of Object.keys(outputs.get(name)?.inputs ?? {})) {
    where.set(packageOf(input), (where.get(packageOf(input)) ?? new Set()).add(name));
  }
  for (const [pkg, n] of [...packageBytes(meta, all)].sort((a, b) => b[1] - a[1])) {
    lines.push(`    ${kib(n).padStart(8)}  ${pkg.padEnd(34)} ${[...(where.get(pkg) ?? [])].join(', ')}`);
  }
  lines.push('  loaded before a command runs (entry + command chunk, static imports):');
  const commands = Object.values(meta.outputs).map((o) => o.entryPoint).filter((e): e is string => !!e && /^src\/cli\/commands\/[^/]+\.ts$/.test(e)).sort();
  const rows: [string, string | undefined][] = [['--version', undefined], ...commands.map((c): [string, string] => [path.basename(c, '.ts'), c])];
  for (const [label, source] of rows) {
    const { files, packages } = loadedBy(meta, entry, source);
    lines.push(`    ${label.padEnd(14)} ${kib(sizeOf(meta, files)).padStart(8)} in ${files.length} files: ${listPackages(packages)}`);
  }
  return lines.join('\n');
}
