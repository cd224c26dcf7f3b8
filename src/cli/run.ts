// The CLI as the entry point runs it, once the Node version is known to do (src/cli/node-version.ts).
import { endQuietlyOnBrokenPipe } from './broken-pipe.ts';
import { main } from './main.ts';

export async function runCli(): Promise<void> {
  // A reader that stops early (`… | head`) closes the pipe: end quietly, as other CLI tools do;
  // a command with something to clean up (measure) is told first (src/cli/broken-pipe.ts).
  endQuietlyOnBrokenPipe();
  process.exitCode = await main(process.argv.slice(2));
}
