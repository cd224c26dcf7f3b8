// containerd's config.toml as containerd reads it: parsed by a TOML 1.0 parser (smol-toml, loaded
// only when a config file is read), each file's CRI settings taken from where its config version
// keeps them (version 1 `plugins.cri`, version 2 `plugins."io.containerd.grpc.v1.cri"`, version 3
// `plugins.'io.containerd.cri.v1.images'` / `'io.containerd.cri.v1.runtime'`, the image keys of a
// version-2 file migrated as containerd 2.x migrates them), and the files of `imports` merged in
// load order, a later file's value winning (cmd/containerd/server/config/config.go LoadConfig).

export interface FileSettings {
  version: number;
  imports: string[];
  /** max_concurrent_downloads of the CRI images config (the local, client-side pull). */
  criDownloads?: number;
  /** plugins."io.containerd.transfer.v1.local".max_concurrent_downloads (containerd 2.1+'s pulls). */
  transferDownloads?: number;
  snapshotter?: string;
  defaultRuntime?: string;
  /** SystemdCgroup of each runtime's options, by runtime name. */
  systemdCgroup: Record<string, boolean>;
  useLocalImagePull?: boolean;
  disableSnapshotAnnotations?: boolean;
  discardUnpackedLayers?: boolean;
  imagePullWithSyncFs?: boolean;
  /** Registry sections of the CRI images config that hold entries (mirrors, configs, auths). */
  registrySections: string[];
}

export class TomlProblem extends Error {
  readonly line: number | undefined;
  constructor(message: string, line: number | undefined) {
    super(message);
    this.line = line;
  }
}

type Table = Record<string, unknown>;

const isTable = (value: unknown): value is Table => value !== null && typeof value === 'object' && !Array.isArray(value) && !(value instanceof Date);

function at(root: unknown, ...keys: string[]): unknown {
  let node: unknown = root;
  for (const key of keys) {
    if (!isTable(node)) return undefined;
    node = node[key];
  }
  return node;
}

const numberAt = (root: unknown, ...keys: string[]): number | undefined => {
  const value = at(root, ...keys);
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
};
const booleanAt = (root: unknown, ...keys: string[]): boolean | undefined => {
  const value = at(root, ...keys);
  return typeof value === 'boolean' ? value : undefined;
};
const stringAt = (root: unknown, ...keys: string[]): string | undefined => {
  const value = at(root, ...keys);
  return typeof value === 'string' ? value : undefined;
};

/** Parses one file (throws TomlProblem with the parser's line); the parser is loaded on first use. */
export async function parseToml(text: string): Promise<Table> {
  const { parse, TomlError } = await import('smol-toml');
  try {
    return parse(text) as Table;
  } catch (error) {
    if (error instanceof TomlError) {
      const first = error.message.split('\n')[0]?.replace(/^Invalid TOML document: /, '') ?? 'invalid';
      throw new TomlProblem(`line ${error.line}, column ${error.column}: ${first}`, error.line);
    }
    throw new TomlProblem((error as Error).message.split('\n')[0] ?? 'invalid', undefined);
  }
}

function runtimesOptions(runtimes: unknown): Record<string, boolean> {
  const out: Record<string, boolean> = {};
  if (!isTable(runtimes)) return out;
  for (const [name, runtime] of Object.entries(runtimes).slice(0, 64)) {
    const systemd = booleanAt(runtime, 'options', 'SystemdCgroup');
    if (systemd !== undefined) out[name] = systemd;
  }
  return out;
}

function registrySections(registry: unknown): string[] {
  return ['mirrors', 'configs', 'auths'].filter((name) => {
    const section = at(registry, name);
    return isTable(section) && Object.keys(section).length > 0;
  });
}

/** The CRI plugin's table for a version-1 or version-2 file (version 1 may name it plugins.cri: v1MigratePluginName). */
function legacyCri(doc: Table, version: number): unknown {
  const full = at(doc, 'plugins', 'io.containerd.grpc.v1.cri');
  return version < 2 && full === undefined ? at(doc, 'plugins', 'cri') : full;
}

/** The settings one file sets, each where its config version keeps it. */
export function fileSettings(doc: Table): FileSettings {
  const rawVersion = doc.version;
  const version = typeof rawVersion === 'number' && Number.isInteger(rawVersion) ? rawVersion : 1;
  const importsValue = doc.imports;
  const imports = Array.isArray(importsValue) ? importsValue.filter((i): i is string => typeof i === 'string').slice(0, 32) : [];
  const transferDownloads = numberAt(doc, 'plugins', 'io.containerd.transfer.v1.local', 'max_concurrent_downloads');
  const base = { version, imports, ...(transferDownloads === undefined ? {} : { transferDownloads }) };
  if (version >= 3) {
    const images = at(doc, 'plugins', 'io.containerd.cri.v1.images');
    const runtime = at(doc, 'plugins', 'io.containerd.cri.v1.runtime', 'containerd');
    return defined({
      ...base,
      criDownloads: numberAt(images, 'max_concurrent_downloads'),
      snapshotter: stringAt(images, 'snapshotter'),
      defaultRuntime: stringAt(runtime, 'default_runtime_name'),
      systemdCgroup: runtimesOptions(at(runtime, 'runtimes')),
      useLocalImagePull: booleanAt(images, 'use_local_image_pull'),
      disableSnapshotAnnotations: booleanAt(images, 'disable_snapshot_annotations'),
      discardUnpackedLayers: booleanAt(images, 'discard_unpacked_layers'),
      imagePullWithSyncFs: booleanAt(images, 'image_pull_with_sync_fs'),
      registrySections: registrySections(at(images, 'registry')),
    });
  }
  const cri = legacyCri(doc, version);
  const containerd = at(cri, 'containerd');
  return defined({
    ...base,
    criDownloads: numberAt(cri, 'max_concurrent_downloads'),
    snapshotter: stringAt(containerd, 'snapshotter'),
    defaultRuntime: stringAt(containerd, 'default_runtime_name'),
    systemdCgroup: runtimesOptions(at(containerd, 'runtimes')),
    disableSnapshotAnnotations: booleanAt(containerd, 'disable_snapshot_annotations'),
    discardUnpackedLayers: booleanAt(containerd, 'discard_unpacked_layers'),
    imagePullWithSyncFs: booleanAt(cri, 'image_pull_with_sync_fs'),
    registrySections: registrySections(at(cri, 'registry')),
  });
}

function defined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

/** Files in load order (the main config first): a later file's setting wins; maps are merged. */
export function mergeSettings(files: FileSettings[]): FileSettings {
  const merged: FileSettings = { version: files[0]?.version ?? 1, imports: [], systemdCgroup: {}, registrySections: [] };
  for (const file of files) {
    const { systemdCgroup, registrySections: sections, imports, version, ...scalars } = file;
    Object.assign(merged, defined(scalars));
    Object.assign(merged.systemdCgroup, systemdCgroup);
    merged.registrySections = [...new Set([...merged.registrySections, ...sections])];
    merged.imports.push(...imports);
    void version;
  }
  return merged;
}
