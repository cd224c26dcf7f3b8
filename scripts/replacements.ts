// The modules a dependency imports for features this project never calls, and the stand-ins that
// replace them: in the bundle (scripts/bundle.ts, which checks at every build that each still fits)
// and in the test processes (test/helpers/replaced-modules.ts), so src/ runs under test on the
// module graph it ships with. No imports: the tests' preload reads it.

export interface Replacement {
  /** The importing file, relative to the project root. */
  importer: string;
  /** The specifier as written in the importer. */
  specifier: string;
  /** The stand-in, relative to the project root: exports exactly the names the importer imports. */
  stub: string;
}

/** Modules a dependency imports for features this project never calls. */
export const REPLACEMENTS: Replacement[] = [
  // The generated API client and all models: only KubeConfig.makeApiClient uses them.
  { importer: 'node_modules/@kubernetes/client-node/dist/config.js', specifier: './gen/index.js', stub: 'scripts/stubs/client-node-gen.ts' },
  // A second HTTP stack with a WebAssembly parser: only KubeConfig.applyToFetchOptions uses it.
  { importer: 'node_modules/@kubernetes/client-node/dist/config.js', specifier: 'undici', stub: 'scripts/stubs/undici.ts' },
];
