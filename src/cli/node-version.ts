// The Node.js the CLI needs: package.json "engines" (>=24; test/unit/node-version.test.ts keeps them
// equal). The entry point checks it before it loads anything else, so an older Node (an `npm install
// -g` on a machine with Node 20) gets one line saying what to do, not a syntax error or a stack trace
// from code it cannot run. Exit 2: the input (here, the runtime) is wrong, not a finding.
export const MINIMUM_NODE_MAJOR = 24;

/** The line to print when `version` (process.version) is older than the minimum; undefined when it will do. */
export function unsupportedNode(version: string, command: string): string | undefined {
  const major = Number(/^v?(\d+)\./.exec(version)?.[1]);
  if (major >= MINIMUM_NODE_MAJOR) return undefined;
  return `${command}: needs Node.js ${MINIMUM_NODE_MAJOR} or later, this is Node.js ${version}: install Node.js ${MINIMUM_NODE_MAJOR} (or run the container image)`;
}

/** For the entry point: exits 2 with that line on an older Node. */
export function refuseUnsupportedNode(argv = process.argv, version = process.version): void {
  const line = unsupportedNode(version, argv[2] === 'kubectl-plugin' ? 'kubectl node-tuning' : 'node-tuning-advisor');
  if (!line) return;
  process.stderr.write(`${line}\n`);
  process.exit(2);
}
