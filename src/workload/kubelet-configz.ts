// The kubelet's /configz answer as plain data. Every component's /configz is a JSON object of its
// registered configs by name; the kubelet registers "kubeletconfig", its KubeletConfiguration
// converted to v1beta1 (cmd/kubelet/app/server.go setConfigz). Since 1.36 the object also names
// its apiVersion and kind (k/k #136044); before, it has neither. Only top-level scalars are kept
// (the fields the advisor reads are all scalars), at most MAX_FIELDS of them. The body is at most
// 256 KiB (agent/kubelet-metrics.ts CONFIGZ_MAX_BYTES): JSON.parse builds all of what it is given.

const MAX_FIELDS = 400;
const KEY = /^[A-Za-z][A-Za-z0-9]{0,63}$/;

export type ConfigzParse =
  | { ok: true; config: Record<string, number | boolean | string | null>; apiVersion?: string }
  | { ok: false; reason: string };

export function parseConfigz(text: string): ConfigzParse {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return { ok: false, reason: 'the kubelet\'s /configz answer is not JSON' };
  }
  const inner = doc !== null && typeof doc === 'object' && !Array.isArray(doc) ? (doc as Record<string, unknown>).kubeletconfig : undefined;
  if (inner === null || typeof inner !== 'object' || Array.isArray(inner)) {
    return { ok: false, reason: 'the kubelet\'s /configz answer holds no "kubeletconfig" object (a kubelet before 1.10 names it otherwise)' };
  }
  const fields = inner as Record<string, unknown>;
  const apiVersion = typeof fields.apiVersion === 'string' ? fields.apiVersion.slice(0, 64) : undefined;
  if (apiVersion !== undefined && apiVersion !== 'kubelet.config.k8s.io/v1beta1') {
    return { ok: false, reason: `the kubelet's /configz serves ${apiVersion}, not kubelet.config.k8s.io/v1beta1, whose fields the advisor reads` };
  }
  const config: Record<string, number | boolean | string | null> = {};
  let seen = 0;
  // for…in, not Object.entries(…).slice: no array of every entry before the cap.
  for (const key in fields) {
    if (++seen > MAX_FIELDS) break;
    if (!Object.hasOwn(fields, key) || !KEY.test(key) || key === 'apiVersion' || key === 'kind') continue;
    const value = fields[key];
    if (typeof value === 'number' && Number.isFinite(value)) config[key] = value;
    else if (typeof value === 'boolean' || value === null) config[key] = value;
    else if (typeof value === 'string') config[key] = value.slice(0, 256);
  }
  return { ok: true, config, ...(apiVersion ? { apiVersion } : {}) };
}
