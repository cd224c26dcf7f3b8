// What several collectors of one scan read alike (the process table, a mount table, the k3s/rke2
// install, the kubelet's command line): worked out once per HostRoot, and each scan opens its own.
// Results are shared between collectors: treat them as read-only.
import type { HostRoot } from './host-root.ts';

export function oncePerScan<T>(compute: (host: HostRoot) => Promise<T>): (host: HostRoot) => Promise<T> {
  const results = new WeakMap<HostRoot, Promise<T>>();
  return (host) => {
    let result = results.get(host);
    if (!result) {
      result = compute(host);
      results.set(host, result);
    }
    return result;
  };
}

/** Per HostRoot and key (a path): a handful of keys per scan. */
export function oncePerScanAndKey<T>(compute: (host: HostRoot, key: string) => Promise<T>): (host: HostRoot, key: string) => Promise<T> {
  const results = new WeakMap<HostRoot, Map<string, Promise<T>>>();
  return (host, key) => {
    let forHost = results.get(host);
    if (!forHost) {
      forHost = new Map();
      results.set(host, forHost);
    }
    let result = forHost.get(key);
    if (!result) {
      result = compute(host, key);
      forHost.set(key, result);
    }
    return result;
  };
}
