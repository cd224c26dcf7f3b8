#!/usr/bin/env node
// Entry point. Node 24 runs the TypeScript sources directly (type stripping);
// the container image runs a bundled build of the same module instead.
import { endQuietlyOnBrokenPipe } from '../src/cli/broken-pipe.ts';
import { main } from '../src/cli/main.ts';

// A reader that stops early (`… | head`) closes the pipe: end quietly, as other CLI tools do;
// a command with something to clean up (measure) is told first (src/cli/broken-pipe.ts).
endQuietlyOnBrokenPipe();

process.exitCode = await main(process.argv.slice(2));
