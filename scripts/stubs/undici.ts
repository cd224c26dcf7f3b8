// Stands in, in the bundle only, for the npm undici package as imported by client-node's config.js:
// a second HTTP stack (~950 KiB with a WebAssembly parser, which `node --lite-mode` cannot run) used
// only by KubeConfig.applyToFetchOptions / createDispatcher. This project applies credentials with
// applyToHTTPSOptions and sends requests over node:https (src/kube/http.ts). scripts/bundle.ts checks
// that config.js imports exactly these names and that undici still exports them.
function notBundled(name: string): never {
  throw new Error(`undici's ${name} is not in this build (scripts/stubs/undici.ts): requests go through node:https (src/kube/)`);
}

export class Agent {
  constructor() {
    notBundled('Agent');
  }
}

export class ProxyAgent {
  constructor() {
    notBundled('ProxyAgent');
  }
}
