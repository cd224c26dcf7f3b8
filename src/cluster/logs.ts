// Client-side throttling lines in a container's log tail, with the node-side matchers (all four
// client-go formats), and a component's --kube-api-qps/--kube-api-burst from its container args.
import { collectHits, newTally, type ThrottleTally } from '../collectors/log-scan.ts';
import type { Obj } from '../kube/objects.ts';
import { DEFAULT_LOG_BOUNDS } from './api.ts';

/** The server was asked for at most tailLines lines; a kubelet that sends more is read no further. */
export function tallyLog(text: string): ThrottleTally {
  const tally = newTally();
  const window = { startMs: -Infinity, endMs: Infinity, referenceYear: new Date().getUTCFullYear() };
  collectHits(text, window, () => true, tally, DEFAULT_LOG_BOUNDS.tailLines);
  return tally;
}

/** The value of `-name`/`--name` in args: "--name=v", "-name=v" or "--name v". */
export function flagValue(args: string[], name: string): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const m = new RegExp(`^--?${name}(?:=(.*))?$`).exec(args[i] as string);
    if (m) return m[1] ?? args[i + 1];
  }
  return undefined;
}

export function containerArgs(container: Obj): string[] {
  return [...(container.command ?? []), ...(container.args ?? [])].map(String);
}

/** "registry.example/sig-storage/csi-provisioner:v5.0.1@sha256:…" → { name: "csi-provisioner", tag: "v5.0.1" }. */
export function imageParts(image: string): { name: string; tag: string } {
  const noDigest = image.split('@')[0] as string;
  const last = noDigest.slice(noDigest.lastIndexOf('/') + 1);
  const colon = last.indexOf(':');
  return colon < 0 ? { name: last, tag: 'latest' } : { name: last.slice(0, colon), tag: last.slice(colon + 1) };
}

export function describeWait(ms: number): string {
  return ms >= 1000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms)} ms`;
}
