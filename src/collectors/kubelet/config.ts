// The kubelet's effective client and image-pull settings: defaults of its version, overridden by the
// --config file, then the --config-dir drop-ins in name order, then command-line flags — the kubelet's
// own merge order. Pure functions; the collector does the reading.
import { parse as parseYaml } from 'yaml';
import type { FlagMap } from '../../host/processes.ts';

export type KubeletField =
  | 'kubeAPIQPS' | 'kubeAPIBurst' | 'eventRecordQPS' | 'eventBurst' | 'registryPullQPS' | 'registryBurst'
  | 'serializeImagePulls' | 'maxParallelImagePulls' | 'maxPods' | 'cgroupDriver' | 'failCgroupV1';

export const KUBELET_FIELDS: readonly KubeletField[] = [
  'kubeAPIQPS', 'kubeAPIBurst', 'eventRecordQPS', 'eventBurst', 'registryPullQPS', 'registryBurst',
  'serializeImagePulls', 'maxParallelImagePulls', 'maxPods', 'cgroupDriver', 'failCgroupV1',
];

/** The fields that take true/false, in a file and as a flag. */
const BOOLEAN_FIELDS: ReadonlySet<KubeletField> = new Set(['serializeImagePulls', 'failCgroupV1']);

/** Config-file field → the kubelet flag that sets it (maxParallelImagePulls has no flag). */
export const FLAG_OF: Partial<Record<KubeletField, string>> = {
  kubeAPIQPS: 'kube-api-qps',
  kubeAPIBurst: 'kube-api-burst',
  eventRecordQPS: 'event-qps',
  eventBurst: 'event-burst',
  registryPullQPS: 'registry-qps',
  registryBurst: 'registry-burst',
  serializeImagePulls: 'serialize-image-pulls',
  maxPods: 'max-pods',
  cgroupDriver: 'cgroup-driver',
  failCgroupV1: 'fail-cgroupv1',
};

/** Kubelet flags that never take the following argument as their value. */
export const KUBELET_BOOLEAN_FLAGS: ReadonlySet<string> = new Set([
  'serialize-image-pulls', 'fail-swap-on', 'register-node', 'rotate-certificates', 'rotate-server-certificates',
  'anonymous-auth', 'enable-controller-attach-detach', 'cgroups-per-qos', 'allow-privileged', 'logtostderr',
  'alsologtostderr', 'enable-server', 'enable-debugging-handlers', 'protect-kernel-defaults', 'make-iptables-util-chains',
  'exit-on-lock-contention', 'keep-terminated-pod-volumes', 'register-schedulable', 'help', 'version', 'skip-headers',
  'hairpin-mode-promiscuous', 'read-only-port-enabled', 'enable-load-reader', 'local-storage-capacity-isolation',
  'fail-cgroupv1',
]);

export type Setting = number | boolean | string | null;

const CGROUP_DRIVERS = ['systemd', 'cgroupfs'];

export interface Effective {
  value: Setting;
  /** "default", a config or drop-in path, or "flag:--kube-api-qps (origin)". */
  source: string;
  detail: string;
  /** For a flag: where the argument was read ("/etc/default/kubelet (KUBELET_EXTRA_ARGS)"). */
  origin?: string;
}

export interface ConfigLayer {
  path: string;
  kind: 'config' | 'drop-in';
  values: Partial<Record<KubeletField, Setting>>;
}

/** The version era that decides defaults: exact minor when known, or a lower bound. */
export interface VersionHint {
  minor?: number;
  atLeastMinor?: number;
  why: string;
}

/** Reads our fields from a KubeletConfiguration document (YAML or JSON); throws on malformed YAML. */
export function configLayerFrom(path: string, kind: ConfigLayer['kind'], text: string): ConfigLayer {
  const doc: unknown = parseYaml(text, { logLevel: 'error' });
  const values: ConfigLayer['values'] = {};
  if (doc !== null && typeof doc === 'object' && !Array.isArray(doc)) {
    const record = doc as Record<string, unknown>;
    for (const field of KUBELET_FIELDS) {
      const raw = record[field];
      if (field === 'cgroupDriver') {
        if (typeof raw === 'string' && CGROUP_DRIVERS.includes(raw)) values[field] = raw;
      } else if (typeof raw === 'number' || typeof raw === 'boolean') values[field] = raw;
      else if (raw === null && field === 'maxParallelImagePulls') values[field] = null;
    }
  }
  return { path, kind, values };
}

/**
 * failCgroupV1 (KEP-4569, 1.31) defaults to false up to 1.34 and to true from 1.35 (KEP-5573,
 * kubernetes/kubernetes #134298); before 1.31 there is no such check, so false.
 */
function failCgroupV1Default(hint: VersionHint): { value: Setting; era: string } | undefined {
  const known = hint.minor ?? (hint.atLeastMinor !== undefined && hint.atLeastMinor >= 35 ? hint.atLeastMinor : undefined);
  if (known === undefined) return undefined;
  if (known >= 35) return { value: true, era: '1.35 and later' };
  return { value: false, era: known >= 31 ? '1.31 to 1.34' : 'before 1.31 (no such check)' };
}

/** Modern (≥ 1.27) or legacy defaults, or undefined when the version is not known well enough. */
function defaultFor(field: KubeletField, hint: VersionHint): { value: Setting; era: string } | undefined {
  if (field === 'failCgroupV1') return failCgroupV1Default(hint);
  const fixed: Partial<Record<KubeletField, Setting>> = {
    registryPullQPS: 5, registryBurst: 10, maxPods: 110, maxParallelImagePulls: null, serializeImagePulls: true, cgroupDriver: 'cgroupfs',
  };
  if (field in fixed) return { value: fixed[field] as Setting, era: 'all versions' };
  const modern = (hint.minor ?? hint.atLeastMinor ?? 0) >= 27;
  const legacy = hint.minor !== undefined && hint.minor < 27;
  if (!modern && !legacy) return undefined;
  const table: Partial<Record<KubeletField, [number, number]>> = {
    kubeAPIQPS: [5, 50], kubeAPIBurst: [10, 100], eventRecordQPS: [5, 50], eventBurst: [10, 100],
  };
  const [old, now] = table[field] as [number, number];
  return modern ? { value: now, era: '1.27 and later' } : { value: old, era: 'up to 1.26' };
}

/** Go's strconv.ParseBool, which the kubelet's boolean flags use. */
function parseGoBool(raw: string): boolean | undefined {
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(raw)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(raw)) return false;
  return undefined;
}

function flagSetting(field: KubeletField, raw: string): Setting | undefined {
  if (BOOLEAN_FIELDS.has(field)) return parseGoBool(raw.trim());
  if (field === 'cgroupDriver') return CGROUP_DRIVERS.includes(raw.trim()) ? raw.trim() : undefined;
  const value = Number(raw.trim());
  return raw.trim() !== '' && Number.isFinite(value) ? value : undefined;
}

export interface MergeResult {
  effective: Map<KubeletField, Effective>;
  /** Why a field could not be decided. */
  undecided: Map<KubeletField, string>;
}

/**
 * Plain int32 fields of KubeletConfiguration v1beta1 whose defaulting (SetDefaults_KubeletConfiguration)
 * tests `== 0`: the --config file's decoder runs defaulting, so a 0 there becomes the version default.
 * QPS fields are pointers (nil → default), so their explicit 0 survives and reaches client-go.
 * Drop-ins are JSON-merged after that defaulting and flags re-parsed over it: their 0 is kept.
 */
const DEFAULTED_WHEN_ZERO: ReadonlySet<KubeletField> = new Set(['kubeAPIBurst', 'eventBurst', 'registryBurst', 'maxPods']);

/** The last config/drop-in layer that sets the field; a 0 the config file's defaulting replaces is reported apart. */
function fromLayers(field: KubeletField, layers: ConfigLayer[]): { chosen?: Effective; defaultedZeroIn?: string } {
  let chosen: Effective | undefined;
  let defaultedZeroIn: string | undefined;
  for (const layer of layers) {
    const value = layer.values[field];
    if (value === undefined) continue;
    if (value === 0 && layer.kind === 'config' && DEFAULTED_WHEN_ZERO.has(field)) {
      defaultedZeroIn = layer.path;
      continue;
    }
    chosen = { value, source: layer.path, detail: `${field} in ${layer.kind === 'config' ? 'the --config file' : 'a --config-dir drop-in'}` };
  }
  return { ...(chosen ? { chosen } : {}), ...(defaultedZeroIn && !chosen ? { defaultedZeroIn } : {}) };
}

/** Defaults ← config file ← drop-ins (already sorted) ← flags, then client-go's treatment of 0. */
export function mergeKubeletSettings(layers: ConfigLayer[], flags: FlagMap, hint: VersionHint): MergeResult {
  const effective = new Map<KubeletField, Effective>();
  const undecided = new Map<KubeletField, string>();
  for (const field of KUBELET_FIELDS) {
    const fromFiles = fromLayers(field, layers);
    let chosen = fromFiles.chosen;
    const zeroNote = fromFiles.defaultedZeroIn
      ? `${field}: 0 in ${fromFiles.defaultedZeroIn}, which the kubelet's config decoder replaces with its default (a plain integer: 0 means unset)`
      : undefined;
    const flagName = FLAG_OF[field];
    const flag = flagName ? flags.get(flagName) : undefined;
    if (flag && flagName) {
      const value = flagSetting(field, flag.value);
      if (value === undefined) {
        undecided.set(field, `--${flagName}=${flag.value.slice(0, 40)} (${flag.origin}) is not a valid value; the kubelet would refuse to start with it`);
        continue;
      }
      chosen = { value, source: `flag:--${flagName}`, detail: `set in ${flag.origin}`, origin: flag.origin };
    }
    if (!chosen) {
      const fallback = defaultFor(field, hint);
      if (!fallback) {
        const what = zeroNote ?? `${field} is not set`;
        const defaults = field === 'failCgroupV1' ? 'false up to 1.34, true from 1.35' : '5/10 up to 1.26, 50/100 from 1.27';
        undecided.set(field, `${what}, and its default depends on the kubelet version (${defaults}), which is unknown: ${hint.why}`);
        continue;
      }
      chosen = zeroNote && fromFiles.defaultedZeroIn
        ? { value: fallback.value, source: fromFiles.defaultedZeroIn, detail: `${zeroNote}: the default for ${fallback.era} (${hint.why})` }
        : { value: fallback.value, source: 'default', detail: `not set anywhere; the kubelet default for ${fallback.era} (${hint.why})` };
    }
    effective.set(field, applyClientGoZero(field, chosen));
  }
  deriveSerializeImagePulls(effective, layers, flags);
  return { effective, undecided };
}

/** client-go turns QPS 0 into 5 and Burst 0 into 10: an explicit 0 throttles, it does not unlimit. */
export function applyClientGoZero(field: KubeletField, chosen: Effective): Effective {
  if (chosen.value !== 0) return chosen;
  if (field === 'kubeAPIQPS') return { ...chosen, value: 5, detail: `${chosen.detail}; set to 0, which client-go replaces with its default 5` };
  if (field === 'kubeAPIBurst') return { ...chosen, value: 10, detail: `${chosen.detail}; set to 0, which client-go replaces with its default 10` };
  if (field === 'eventRecordQPS') return { ...chosen, detail: `${chosen.detail}; 0 is ambiguous: the config API documents "no limit", the flag help "use the default"` };
  return chosen;
}

/** serializeImagePulls defaults to false when maxParallelImagePulls ≥ 2 is set and serialize is not. */
function deriveSerializeImagePulls(effective: Map<KubeletField, Effective>, layers: ConfigLayer[], flags: FlagMap): void {
  const explicit = layers.some((l) => l.values.serializeImagePulls !== undefined) || flags.has('serialize-image-pulls');
  const parallel = effective.get('maxParallelImagePulls');
  if (!explicit && typeof parallel?.value === 'number' && parallel.value >= 2) {
    effective.set('serializeImagePulls', { value: false, source: 'default', detail: `not set; false because maxParallelImagePulls is ${parallel.value} (${parallel.source})` });
  }
}

/** "v1.30.2", "Kubernetes v1.30.2", "1.30.2-1.1", "v1.30.4+k3s1" → 30 (major 1 only). */
export function minorOf(version: string): number | undefined {
  const match = /v?1\.(\d+)(?:\.\d+)?/.exec(version);
  return match ? Number(match[1]) : undefined;
}

/** QPS/burst for a node that may receive maxPods pods at once (seed 000: 150/200 for 100 pods). */
export function suggestedLimits(maxPods: number): { qps: number; burst: number } {
  const pods = Number.isFinite(maxPods) && maxPods > 0 ? maxPods : 110;
  return { qps: Math.max(50, Math.ceil((pods * 1.5) / 10) * 10), burst: Math.max(100, Math.ceil((pods * 2) / 10) * 10) };
}

/**
 * failCgroupV1 as a 1.35 or later kubelet would read these files and flags: what they set, else
 * true (the default from 1.35). A kubelet of any version started from them after an upgrade.
 */
export function failCgroupV1From135(merged: MergeResult): { value: boolean; source: string; detail: string } | { unknown: string } {
  const set = merged.effective.get('failCgroupV1');
  if (!set) return { unknown: merged.undecided.get('failCgroupV1') ?? 'failCgroupV1 could not be decided' };
  if (set.source !== 'default') return { value: set.value === true, source: set.source, detail: `set in the kubelet's ${set.source.startsWith('flag:') ? `flags (${set.origin ?? set.source})` : `files (${set.source})`}: kept across an upgrade` };
  return { value: true, source: 'default', detail: 'not set in the kubelet\'s config file, drop-ins or flags: from 1.35 the kubelet defaults to true (KEP-5573)' };
}
