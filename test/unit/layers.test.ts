// The layers of src/ as a test: every folder (and every file directly in src/) has a rank, and a
// module may import only modules of a strictly lower rank or of its own folder. Folders of one rank
// are siblings that know nothing of each other. No exception list: an import that breaks a rank is
// fixed by moving the shared code down (src/wire/, src/text/), never by listing it here. Every import
// counts, `import type` too (a type is a dependency of the reader), and no two files import each
// other, directly or around a circle.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const SRC = path.resolve(import.meta.dirname, '../../src');

/** Rank of each folder of src/ (and each file directly in it); the reason is the rank's rule. */
export const RANKS: Record<string, number> = {
  // 0: leaves every layer shares; they import nothing from src/.
  'text': 0, // text safety: control characters, terminal sanitizing, width and byte truncation
  'order.ts': 0, // code-point ordering (no ICU), for anyone who sorts
  'input-error.ts': 0, // the one "bad input, exit 2" error class
  // 1: the way to the node, and the vocabulary of what was found.
  'host': 1, // every host read (HostRoot), checked opens, host commands, local HTTP; knows nothing above it
  'facts': 1, // FactSet, the keys collectors write and rules read; no layer logic
  // 2: the way to the API server, and plain data built on 1.
  'kube': 2, // the one Kubernetes client; reads its kubeconfig and credential files through host's checked open
  'probe': 2, // measurements that write (fsync), through host's trusted commands
  'report': 2, // Report / Finding types and the score: what rules produce and publishers read
  // 3: what crosses the wire, and the agent's bounded cluster state.
  'wire': 3, // annotation keys, finding-line grammar, fact tokens, byte budgets: render and parse
  'workload': 3, // the agent's watched pods/Node/CSI folded to plain data (no API calls)
  // 4: the two halves of a scan; siblings, so rules know no collector and collectors no rule.
  'collectors': 4, // one fact family per file, and the runner that orders them
  'rules': 4, // rule files as data and the engine over fact keys
  // 5: what runs a scan or reads the cluster, each producing data for publishers.
  'scan.ts': 5, // one node scan: collect, evaluate, score
  'cluster': 5, // report's paged reads and folds over the fleet
  'measure': 5, // measure pod-startup: the run, its result and comparison
  // 6: renderers of every result (node report, cluster report, measurement); they know no rule.
  'publish': 6,
  // 7: the DaemonSet loop, which scans and publishes.
  'agent': 7,
  // 8: the command line, which may start anything.
  'cli': 8,
};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

/** The folder of src/ a file belongs to, or its own name when it sits directly in src/. */
function unitOf(file: string): string {
  return path.relative(SRC, file).split(path.sep)[0]!;
}

interface Edge { from: string; to: string }

/** Every relative import, re-export and dynamic import() of each file, resolved to a path. */
function importGraph(files: readonly string[]): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    const targets = importedFiles
      .map((i) => i.fileName)
      .filter((spec) => spec.startsWith('.'))
      .map((spec) => path.resolve(path.dirname(file), spec));
    graph.set(file, [...new Set(targets)]);
  }
  return graph;
}

const rel = (file: string) => path.relative(path.dirname(SRC), file);

export function upwardImports(graph: Map<string, string[]>): string[] {
  const problems: string[] = [];
  for (const [from, targets] of graph) {
    for (const to of targets) {
      const a = unitOf(from), b = unitOf(to);
      if (a === b) continue;
      const ra = RANKS[a], rb = RANKS[b];
      if (ra === undefined || rb === undefined) continue; // reported by the unranked test
      if (rb >= ra) problems.push(`${rel(from)} (${a}, rank ${ra}) imports ${rel(to)} (${b}, rank ${rb})`);
    }
  }
  return problems.sort();
}

/** Circles of files (Tarjan's strongly connected components with more than one file, or a self-import). */
export function importCycles(graph: Map<string, string[]>): string[][] {
  let index = 0;
  const indices = new Map<string, number>(), low = new Map<string, number>();
  const stack: string[] = [], onStack = new Set<string>(), cycles: string[][] = [];
  const visit = (node: string) => {
    indices.set(node, index); low.set(node, index); index++;
    stack.push(node); onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!graph.has(next)) continue;
      if (!indices.has(next)) { visit(next); low.set(node, Math.min(low.get(node)!, low.get(next)!)); }
      else if (onStack.has(next)) low.set(node, Math.min(low.get(node)!, indices.get(next)!));
    }
    if (low.get(node) !== indices.get(node)) return;
    const component: string[] = [];
    let member: string;
    do { member = stack.pop()!; onStack.delete(member); component.push(member); } while (member !== node);
    if (component.length > 1 || graph.get(node)!.includes(node)) cycles.push(component.map(rel).sort());
  };
  for (const node of graph.keys()) if (!indices.has(node)) visit(node);
  return cycles;
}

const files = sourceFiles(SRC);
const graph = importGraph(files);

test('every folder of src/ (and every file directly in it) has a rank', () => {
  const unranked = [...new Set(files.map(unitOf))].filter((unit) => RANKS[unit] === undefined).sort();
  assert.deepEqual(unranked, [], 'give each new folder a rank in RANKS, with one line of why');
});

test('the import graph was read (imports of every kind are seen)', () => {
  const cli = graph.get(path.join(SRC, 'cli/main.ts'))!;
  assert.ok(cli.some((t) => t.startsWith(path.join(SRC, 'cli/commands'))), 'dynamic import() of a command module');
  const edges: Edge[] = [...graph].flatMap(([from, to]) => to.map((t) => ({ from, to: t })));
  assert.ok(edges.length > files.length, `${edges.length} imports over ${files.length} files`);
});

test('no module imports a layer of its own rank or above', () => {
  const problems = upwardImports(graph);
  assert.deepEqual(problems, [], `${problems.length} upward imports:\n${problems.join('\n')}`);
});

test('no two files import each other, directly or around a circle', () => {
  const cycles = importCycles(graph);
  assert.deepEqual(cycles, [], `${cycles.length} circles:\n${cycles.map((c) => c.join(' ↔ ')).join('\n')}`);
});

test('the checks can fail: an upward import and a circle are found', () => {
  const a = path.join(SRC, 'host/a.ts'), b = path.join(SRC, 'cli/b.ts'), c = path.join(SRC, 'host/c.ts');
  const fake = new Map([[a, [b, c]], [b, [a]], [c, [a]]]);
  assert.deepEqual(upwardImports(fake), ['src/host/a.ts (host, rank 1) imports src/cli/b.ts (cli, rank 8)']);
  assert.deepEqual(importCycles(fake), [['src/cli/b.ts', 'src/host/a.ts', 'src/host/c.ts']]);
});
