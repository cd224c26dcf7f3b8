// Preloaded into every test process by `npm test` (`node --import ./test/helpers/replaced-modules.ts
// --test …`): the module replacements the bundle makes (scripts/replacements.ts) made here too, with
// a resolve hook, so src/ runs under test on the module graph it ships with. client-node's config.js
// otherwise loads its generated API and every model (~1 400 modules, ~0.8 s of CPU in each test
// process that imports src/kube/) and npm undici, neither of which src/ calls: in the bundle they are
// stubs that throw when called, and so they are here. The build's checks (scripts/bundle.ts
// checkReplacements, test/unit/bundle.test.ts) still read the real modules: only an import by the
// named importer is redirected. Processes the tests start (the CLI, the agent) are not affected.
import { registerHooks } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { REPLACEMENTS } from '../../scripts/replacements.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const url = (file: string) => pathToFileURL(path.join(ROOT, file)).href;
const stubs = new Map(REPLACEMENTS.map((r) => [`${url(r.importer)}\0${r.specifier}`, url(r.stub)]));

registerHooks({
  resolve(specifier, context, nextResolve) {
    const stub = stubs.get(`${context.parentURL}\0${specifier}`);
    return stub ? { url: stub, shortCircuit: true } : nextResolve(specifier, context);
  },
});
