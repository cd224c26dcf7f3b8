import { PassThrough } from 'node:stream';
import { main } from '../../src/cli/main.ts';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the CLI in-process with captured output; env defaults to none (no NODE_NAME, no colour). */
export async function runCli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  stdout.on('data', (chunk: Buffer) => out.push(chunk));
  stderr.on('data', (chunk: Buffer) => err.push(chunk));
  const code = await main(args, { stdout, stderr, env });
  return { code, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') };
}
