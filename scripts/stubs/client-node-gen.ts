// Stands in, in the bundle only, for @kubernetes/client-node/dist/gen/index.js as imported by its
// config.js: the generated API classes and every model (~600 KiB, ~8 MiB resident) are needed only
// by KubeConfig.makeApiClient, which this project never calls (src/kube/ speaks HTTP itself).
// scripts/bundle.ts checks that config.js imports exactly these names and that the real module
// still exports them; calling one is a bug and says so.
function notBundled(name: string): never {
  throw new Error(`${name} from @kubernetes/client-node/dist/gen is not in this build (scripts/stubs/client-node-gen.ts): use src/kube/`);
}

export function createConfiguration(): never {
  return notBundled('createConfiguration');
}

export class ServerConfiguration {
  constructor() {
    notBundled('ServerConfiguration');
  }
}
