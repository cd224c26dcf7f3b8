// The one owner/mode check: who may own a file and who may write it, by policy. Host commands
// (exec.ts), trusted host files (trust.ts) and the fsync probe's directory differ only in their
// policy. No imports: the probe and the command runner load it without the rest of trust.ts.
import path from 'node:path';

/** Root, and the advisor's own user (`real`: getuid, `effective`: geteuid), who could edit the advisor itself. */
export function trustedUids(own: 'none' | 'real' | 'effective' = 'real'): number[] {
  const uid = own === 'none' ? undefined : own === 'real' ? process.getuid?.() : process.geteuid?.();
  return uid === undefined || uid === 0 ? [0] : [0, uid];
}

/** What an owner/mode check accepts besides a root-owned file nobody else may write. */
export interface OwnerModePolicy {
  /** The advisor's own user may own it too: `none` (commands root runs), `real` (files), `effective` (the probe's directory). */
  ownUid: 'none' | 'real' | 'effective';
  /** Root's group may write it (a group-writable file of gid 0). */
  rootGroupMayWrite: boolean;
  /** A directory with the sticky bit may be writable by others: they can add entries, not replace root's. */
  sticky: boolean;
}

export type OwnerModeProblem =
  | { kind: 'owner'; uid: number }
  | { kind: 'writable'; by: 'everyone' | 'group'; gid: number; mode: number };

/** The one owner/mode check: why someone other than root (or the advisor's user) could change this file, or undefined. */
export function ownerModeProblem(info: { uid: number; gid: number; mode: number }, policy: OwnerModePolicy): OwnerModeProblem | undefined {
  if (!trustedUids(policy.ownUid).includes(info.uid)) return { kind: 'owner', uid: info.uid };
  if (policy.sticky && (info.mode & 0o1000) !== 0) return undefined;
  if (info.mode & 0o002) return { kind: 'writable', by: 'everyone', gid: info.gid, mode: info.mode };
  if (info.mode & 0o020 && (!policy.rootGroupMayWrite || info.gid !== 0)) return { kind: 'writable', by: 'group', gid: info.gid, mode: info.mode };
  return undefined;
}

/** `/a/b/c` → `/`, `/a`, `/a/b`, `/a/b/c`: a file and every directory above it, from the root down. */
export function pathAndAncestors(file: string): string[] {
  const parts = path.posix.normalize(file).split('/').filter(Boolean);
  return ['/', ...parts.map((_, i) => `/${parts.slice(0, i + 1).join('/')}`)];
}
