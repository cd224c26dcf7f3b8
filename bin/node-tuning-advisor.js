#!/usr/bin/env node
// Entry point. Node 24 runs the TypeScript sources directly (type stripping);
// the container image runs a bundled build of the same module instead.
import { main } from '../src/cli/main.ts';

// A reader that stops early (`… | head`) closes the pipe: end quietly, as other CLI tools do.
process.stdout.on('error', (error) => {
  if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw error;
});

process.exitCode = await main(process.argv.slice(2));
