#!/usr/bin/env node
// Entry point. Node 24 runs the TypeScript sources directly (type stripping);
// the container image runs a bundled build of the same module instead.
import { main } from '../src/cli/main.ts';

process.exitCode = await main(process.argv.slice(2));
