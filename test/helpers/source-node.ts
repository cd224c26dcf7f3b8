// `node` as the tests run src/ in the processes they start (the CLI, the agent from source): with the
// preloads `npm test` gives the test processes themselves (package.json "test"): the compile cache
// (test/helpers/compile-cache.ts) and the bundle's module replacements (test/helpers/replaced-modules.ts),
// so each such process loads src/ on the module graph it ships with, and only once compiles what an
// earlier process already compiled. Only for src/: the agent as the image runs it is the bundle
// (test/helpers/bundled-agent.ts), started with the image's node flags and nothing else.
import { fileURLToPath } from 'node:url';

const preload = (name: string) => ['--import', fileURLToPath(new URL(`./${name}`, import.meta.url))];

/** Node flags for a process that runs src/ (put before the script). */
export const SOURCE_NODE_FLAGS: readonly string[] = [...preload('compile-cache.ts'), ...preload('replaced-modules.ts')];
