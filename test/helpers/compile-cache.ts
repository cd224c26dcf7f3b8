// Preloaded into every test process by `npm test` (`node --import ./test/helpers/compile-cache.ts
// --test …`): Node's on-disk compile cache (the V8 code cache of each module, type-stripped
// TypeScript included), under $NODE_COMPILE_CACHE or else os.tmpdir()/node-compile-cache. The ~130
// test processes, and the CLI and npm processes they start from src/ with the test's environment,
// load largely the same modules: the first to load one writes its entry, the others skip stripping
// and compiling it. Entries are checked against the source's hash (an edited file is compiled anew);
// two suites at once share the directory safely; NODE_DISABLE_COMPILE_CACHE=1 turns it off.
// The agent as the image runs it (test/helpers/bundled-agent.ts) gets a container's bare environment,
// so it runs without the cache, as in the image.
import { enableCompileCache } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';

process.env.NODE_COMPILE_CACHE ??= path.join(tmpdir(), 'node-compile-cache');
enableCompileCache();
