#!/usr/bin/env node
// Entry point. Node 24 runs the TypeScript sources directly (type stripping); the container image
// and the npm package run a bundled build of the same module instead. The Node version is checked
// first and the CLI loaded only after it (a dynamic import): an older Node never parses code it cannot
// run, and says so in one line (src/cli/node-version.ts).
import { refuseUnsupportedNode } from '../src/cli/node-version.ts';

refuseUnsupportedNode();
const { runCli } = await import('../src/cli/run.ts');
await runCli();
