// Runs the CLI in a real pseudo-terminal of a given width: util-linux `script` allocates the pty,
// `stty cols N` sizes it, so the CLI sees isTTY and columns exactly as in an operator's terminal.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { TestContext } from 'node:test';
import { requireTool } from './tools.ts';
import { SOURCE_NODE_FLAGS } from './source-node.ts';

const BIN = fileURLToPath(new URL('../../bin/node-tuning-advisor.js', import.meta.url));
const quote = (arg: string) => `'${arg.replaceAll("'", "'\\''")}'`;

export interface TerminalRun {
  code: number;
  /** Everything the terminal received (stdout and stderr), "\r\n" turned into "\n". */
  raw: string;
  /** The screen's lines without colour codes, each as last drawn (after its last carriage return). */
  lines: string[];
}

const ANSI = /\u001b\[[0-9;?]*[A-Za-z]/g;

export function stripAnsi(text: string): string {
  return text.replace(ANSI, '');
}

/** Display columns of a plain line (our output has no wide characters; every code point is one column). */
export function columnsOf(line: string): number {
  return [...line].length;
}

/**
 * Replies to each `prompt` the screen shows: `input` to the one whose text since the previous
 * prompt matches `about`, `otherwise` to any other (a second leftover, say, that a concurrent test
 * left). Matched against the screen without colour codes, line breaks and wrapping indentation.
 */
export interface TerminalAnswer {
  prompt: string;
  about: RegExp;
  input: string;
  otherwise: string;
}

/** What a prompt matcher sees: the text without escapes, carriage returns, or where the terminal width wrapped it. */
export function flatScreen(text: string): string {
  return stripAnsi(text).replace(/\r/g, '').replace(/\s*\n\s*/g, ' ');
}

/** A CLI run in a terminal that outlives this is killed and reported with its screen, not waited for. */
const DEADLINE_MS = 120_000;

/** Undefined after skipping the test (locally) when `script` is missing; under CI=true that fails. */
export async function cliInTerminal(t: TestContext, args: string[], columns: number, env: NodeJS.ProcessEnv = {}, answer?: TerminalAnswer): Promise<TerminalRun | undefined> {
  const script = requireTool(t, 'script', 'bsdutils');
  if (!script) return undefined;
  const command = `stty cols ${columns} rows 200; exec ${[process.execPath, ...SOURCE_NODE_FLAGS, BIN, ...args].map(quote).join(' ')}`;
  const child = spawn(script, ['-q', '-e', '-c', command, '/dev/null'], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, TERM: 'xterm-256color', ...env },
    stdio: [answer ? 'pipe' : 'ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const chunks: Buffer[] = [];
  let prompts = 0;
  let answered = false;
  child.stdout?.on('data', (c: Buffer) => {
    chunks.push(c);
    if (!answer) return;
    const asked = flatScreen(Buffer.concat(chunks).toString('utf8')).split(answer.prompt);
    for (; prompts < asked.length - 1; prompts += 1) {
      const mine = answer.about.test(asked[prompts] as string);
      answered ||= mine;
      child.stdin?.write(mine ? answer.input : answer.otherwise);
    }
  });
  child.stderr?.on('data', (c: Buffer) => chunks.push(c));
  let timedOut = false;
  const deadline = setTimeout(() => {
    timedOut = true;
    try { process.kill(-(child.pid as number), 'SIGKILL'); } catch { /* already gone */ }
  }, DEADLINE_MS);
  const code = await new Promise<number>((resolve) => child.on('close', (c) => resolve(c ?? 1)));
  clearTimeout(deadline);
  const raw = Buffer.concat(chunks).toString('utf8').replaceAll('\r\n', '\n');
  if (timedOut) {
    const waiting = answer && !answered ? `; it never asked "${answer.prompt}" about ${answer.about} (flattened screen: ${JSON.stringify(flatScreen(raw).slice(-600))})` : '';
    throw new Error(`${args.join(' ')} still ran after ${DEADLINE_MS / 1000} s in the terminal, killed${waiting}\n${raw}`);
  }
  // A carriage return redraws its line in place (progress lines): the screen keeps what came last.
  const lines = stripAnsi(raw).split('\n').map((line) => line.slice(line.lastIndexOf('\r') + 1));
  if (lines.at(-1) === '') lines.pop();
  return { code, raw, lines };
}
