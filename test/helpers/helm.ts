// The chart rendered by Helm's template engine pieces (test/helm/: Go's text/template, Sprig v3,
// sigs.k8s.io/yaml, as Helm v3's pkg/engine uses them; gojsonschema for values.schema.json), since no
// Helm binary can be installed here. The harness is built once per content of test/helm/*.go, Go and
// library version, into a temp dir shared by the test files (rename into place: two builds at once
// both succeed).
import { execFile, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { mkdir, mkdtemp, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TestContext } from 'node:test';
import { isDeepStrictEqual, promisify } from 'node:util';
import { parseAllDocuments } from 'yaml';
import type { K8sObject } from './manifests.ts';
import { REPO } from './manifests.ts';
import { toolPath } from './tools.ts';

export const CHART = path.join(REPO, 'charts/node-tuning-advisor');
const HARNESS_DIR = path.join(REPO, 'test/helm');
const GOPATH = '/usr/share/gocode';
/** The Debian packages of the Go libraries, with a file each installs. */
const LIBRARIES: [string, string][] = [
  ['golang-github-masterminds-sprig-dev', 'src/github.com/Masterminds/sprig/functions.go'],
  ['golang-k8s-sigs-yaml-dev', 'src/sigs.k8s.io/yaml/yaml.go'],
  ['golang-github-xeipuuv-gojsonschema-dev', 'src/github.com/xeipuuv/gojsonschema/validation.go'],
];
const run = promisify(execFile);

export interface Rendered {
  /** Every object of every rendered manifest (NOTES.txt and empty files left out). */
  objects: K8sObject[];
  /** The rendered NOTES.txt. */
  notes: string;
  /** template file name -> rendered text */
  files: Record<string, string>;
}

/** `helm template`'s --name, --namespace, --kube-version, --set (each argument) and -f (values files). */
export interface RenderOptions { namespace?: string; name?: string; kubeVersion?: string; set?: string[]; values?: string[] }

export type Render = (options?: RenderOptions) => Promise<Rendered>;

/** What is missing to build the harness (Go, a library), with the packages to install; undefined when nothing is. */
export function harnessMissing(): string | undefined {
  if (!toolPath('go')) return 'go not found: install it with "apt-get install golang-go" (.ci/run does this)';
  const missing = LIBRARIES.filter(([, file]) => !existsSync(path.join(GOPATH, file))).map(([pkg]) => pkg);
  if (missing.length > 0) return `Go libraries not found in ${GOPATH}: install them with "apt-get install ${missing.join(' ')}" (.ci/run does this)`;
  return undefined;
}

/** For `describe(name, helmTier(), …)`: skips locally with what to install; under CI=true a missing piece is an error. */
export function helmTier(): { skip?: string } {
  const missing = harnessMissing();
  if (!missing) return {};
  if (process.env.CI === 'true') throw new Error(missing);
  return { skip: missing };
}

/** The renderer, or undefined after skipping the test (locally) / throws (CI=true) when Go or a library is missing. */
export async function helmRenderer(t?: TestContext): Promise<Render | undefined> {
  const missing = harnessMissing();
  if (missing) {
    if (process.env.CI === 'true' || !t) throw new Error(missing);
    t.skip(missing);
    return undefined;
  }
  const binary = await buildHarness(toolPath('go') as string);
  return async (options = {}) => parseRendered(await renderRaw(binary, options));
}

/** The harness's raw answer: its JSON on success, else its stderr as the error's message. */
export async function renderRaw(binary: string, options: RenderOptions = {}): Promise<Record<string, string>> {
  const args = [CHART, '--name', options.name ?? 'node-tuning-advisor', '--namespace', options.namespace ?? 'node-tuning-advisor'];
  if (options.kubeVersion) args.push('--kube-version', options.kubeVersion);
  for (const file of options.values ?? []) args.push('-f', file);
  for (const s of options.set ?? []) args.push('--set', s);
  try {
    const { stdout } = await run(binary, args, { maxBuffer: 64 * 1024 * 1024 });
    return JSON.parse(stdout);
  } catch (e) {
    const err = e as { stderr?: string; message: string };
    throw new Error((err.stderr ?? '').trim() || err.message);
  }
}

function parseRendered(files: Record<string, string>): Rendered {
  const objects: K8sObject[] = [];
  let notes = '';
  for (const [name, text] of Object.entries(files).sort(([a], [b]) => (a < b ? -1 : 1))) {
    if (name.endsWith('/NOTES.txt')) { notes = text; continue; }
    for (const doc of parseAllDocuments(text)) {
      if (doc.errors.length > 0) throw new Error(`${name}: ${doc.errors[0]!.message}\n${text}`);
      const object = doc.toJS();
      if (object) objects.push(object as K8sObject);
    }
  }
  return { objects, notes, files };
}

/** The harness's Go files (test/helm/*.go), in a stable order. */
function harnessSources(): string[] {
  return readdirSync(HARNESS_DIR).filter((f) => f.endsWith('.go')).sort();
}

async function buildHarness(go: string): Promise<string> {
  const version = execFileSync(go, ['version'], { encoding: 'utf8' });
  // New harness sources, Go or library packages build anew.
  const libraries = LIBRARIES.map(([, file]) => `${file}@${statSync(path.join(GOPATH, file)).mtimeMs}`).join(',');
  const hash = createHash('sha256');
  for (const file of harnessSources()) hash.update(file).update(readFileSync(path.join(HARNESS_DIR, file)));
  const key = hash.update(version).update(libraries).digest('hex').slice(0, 16);
  const dir = path.join(tmpdir(), `nta-helm-render-${key}`);
  const binary = path.join(dir, 'render');
  if (existsSync(binary)) return binary;
  await mkdir(dir, { recursive: true });
  const work = await mkdtemp(path.join(dir, 'build-'));
  try {
    const env = { ...process.env, GO111MODULE: 'off', GOPATH, GOCACHE: path.join(dir, 'gocache'), GOFLAGS: '' };
    await run(go, ['build', '-o', path.join(work, 'render'), '.'], { env, cwd: HARNESS_DIR });
    await rename(path.join(work, 'render'), binary);
  } catch (e) {
    throw new Error(`building ${path.relative(REPO, HARNESS_DIR)}: ${(e as { stderr?: string }).stderr ?? e}`);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
  return binary;
}

/** Objects in a stable order, for deepEqual. */
export function sortedObjects(objects: K8sObject[]): K8sObject[] {
  const key = (o: K8sObject) => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;
  return [...objects].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}

/** Every leaf path below `at` where `x` and `y` differ (dotted, list indexes as numbers). */
export function leafDifferences(x: unknown, y: unknown, at = ''): string[] {
  if (isDeepStrictEqual(x, y)) return [];
  if (x && y && typeof x === 'object' && typeof y === 'object' && Array.isArray(x) === Array.isArray(y)) {
    return [...new Set([...Object.keys(x), ...Object.keys(y)])].flatMap((k) => leafDifferences((x as never)[k], (y as never)[k], at ? `${at}.${k}` : k));
  }
  return [at];
}

/** Every leaf path where the objects differ, e.g. `DaemonSet/node-tuning-advisor.spec.template…image`, or a whole object's key. */
export function objectDifferences(a: K8sObject[], b: K8sObject[]): string[] {
  const key = (o: K8sObject) => `${o.kind}/${o.metadata.name}`;
  const bs = new Map(b.map((o) => [key(o), o]));
  const out = a.flatMap((o) => leafDifferences(o, bs.get(key(o)), key(o)));
  for (const o of b) if (!a.some((x) => key(x) === key(o))) out.push(key(o));
  return out.sort();
}
