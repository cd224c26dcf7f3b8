// Reads a Dockerfile into stages of plain instructions (ARG defaults substituted), and replays a
// stage's WORKDIR/ENV/COPY/RUN on the local filesystem: each stage gets its own directory standing
// for "/", so a test can run the image's build steps without a container engine.
import { execFile } from 'node:child_process';
import { cp, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { DockerfileParser } from 'dockerfile-ast';

export interface Step { keyword: string; args: string[]; from?: string; line: number }
export interface Stage { name: string | undefined; image: string; steps: Step[] }

function substitute(text: string, vars: Record<string, string>): string {
  return text.replace(/\$\{(\w+)\}|\$(\w+)/g, (whole, a?: string, b?: string) => vars[(a ?? b) as string] ?? whole);
}

export function parseDockerfile(content: string): { args: Record<string, string>; stages: Stage[] } {
  const args: Record<string, string> = {};
  const stages: Stage[] = [];
  for (const instruction of DockerfileParser.parse(content).getInstructions()) {
    const keyword = instruction.getKeyword();
    const raw = instruction.getArguments().map((a) => a.getValue());
    const line = instruction.getRange().start.line + 1;
    const stage = stages.at(-1);
    if (keyword === 'ARG' && !stage) {
      const [name, value] = (raw[0] ?? '').split('=');
      if (name && value !== undefined) args[name] = value;
    } else if (keyword === 'FROM') {
      const as = raw.findIndex((a) => a.toUpperCase() === 'AS');
      stages.push({ name: as >= 0 ? raw[as + 1] : undefined, image: substitute(raw[0] ?? '', args), steps: [] });
    } else if (stage) {
      const fromFlag = 'getFromFlag' in instruction
        ? (instruction as unknown as { getFromFlag(): { getValue(): string | null } | null }).getFromFlag() : null;
      const from = fromFlag?.getValue() ?? undefined;
      const rest = raw.filter((a) => !a.startsWith('--'));
      const jsonArgs = 'getJSONStrings' in instruction
        ? (instruction as unknown as { getJSONStrings(): { getJSONValue(): string }[] }).getJSONStrings().map((s) => s.getJSONValue())
        : [];
      const shell = keyword === 'RUN' ? [instruction.getArgumentsContent() ?? ''] : rest;
      stage.steps.push({ keyword, args: jsonArgs.length ? jsonArgs : shell, ...(from ? { from } : {}), line });
    }
  }
  return { args, stages };
}

export interface StageRun {
  root: string;
  workdir: string;
  env: Record<string, string>;
  runs: { command: string; ms: number }[];
}

/** Absolute image paths land under `root`; relative ones under the current WORKDIR. */
export function hostPath(run: StageRun, p: string): string {
  return path.isAbsolute(p) ? path.join(run.root, p) : path.join(run.root, run.workdir, p);
}

async function copy(sources: string[], dest: string, fromDir: (p: string) => string, target: string): Promise<void> {
  const toDir = dest.endsWith('/') || sources.length > 1;
  for (const src of sources) {
    const to = toDir ? path.join(target, path.basename(src)) : target;
    await mkdir(path.dirname(to), { recursive: true });
    await cp(fromDir(src), to, { recursive: true });
  }
}

/** Replays one stage. `context` is the build context; `stages` maps earlier stage names to their runs. */
export async function replayStage(
  stage: Stage, root: string, context: string, stages: Record<string, StageRun>, env: Record<string, string>,
): Promise<StageRun> {
  const run: StageRun = { root, workdir: '/', env: {}, runs: [] };
  for (const step of stage.steps) {
    if (step.keyword === 'WORKDIR') {
      run.workdir = path.posix.resolve(run.workdir, step.args[0] ?? '/');
      await mkdir(hostPath(run, '.'), { recursive: true });
    } else if (step.keyword === 'ENV') {
      for (const pair of step.args) { const [k, v] = pair.split('='); if (k && v !== undefined) run.env[k] = v; }
    } else if (step.keyword === 'COPY') {
      const sources = step.args.slice(0, -1);
      const dest = step.args.at(-1) as string;
      const other = step.from === undefined ? undefined : stages[step.from];
      if (step.from !== undefined && !other) throw new Error(`line ${step.line}: COPY --from=${step.from}: no such stage`);
      const fromDir = (p: string): string => (other ? hostPath({ ...other, workdir: '/' }, p) : path.join(context, p));
      await copy(sources, dest, fromDir, hostPath(run, dest));
    } else if (step.keyword === 'RUN') {
      const started = performance.now();
      const command = step.args[0] ?? '';
      await promisify(execFile)('sh', ['-c', command], {
        cwd: hostPath(run, '.'), env: { ...process.env, ...env, ...run.env }, maxBuffer: 16 * 1024 * 1024, timeout: 120_000,
      }).catch((error: Error & { stderr?: string }) => {
        throw new Error(`line ${step.line}: RUN ${command} failed: ${error.message}\n${error.stderr ?? ''}`);
      });
      run.runs.push({ command, ms: performance.now() - started });
    }
  }
  return run;
}
