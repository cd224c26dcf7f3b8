// Which host files and processes may steer what the advisor does as root (where it probes, which URL
// it fetches). A file counts when root — or the user running the advisor, who could edit the advisor
// itself — owns it and nobody else may write it. A process counts when root (or that user) runs it
// and its /proc/<pid>/exe, which the kernel keeps and `exec -a` cannot fake, is the named binary.
import path from 'node:path';
import type { HostRoot } from './host-root.ts';
import { ownerModeProblem, pathAndAncestors, trustedUids, type OwnerModePolicy } from './owner-mode.ts';

/** `missing`: untrusted only because the file is not there (nothing to vouch for, nothing to distrust). */
export type Trust = { trusted: true; why: string } | { trusted: false; why: string; missing?: boolean };

const owner = (uid: number): string => (uid === 0 ? 'root' : `uid ${uid}`);

const FILE_POLICY: OwnerModePolicy = { ownUid: 'real', rootGroupMayWrite: true, sticky: false };

/** Owned by a trusted uid; not writable by others, nor by a group other than root's. */
export async function fileTrust(host: HostRoot, hostPath: string): Promise<Trust> {
  const found = await host.stat(hostPath);
  if (!found.ok) return { trusted: false, why: found.reason, ...(found.code === 'ENOENT' ? { missing: true } : {}) };
  try {
    const { info } = found;
    const problem = ownerModeProblem(info, FILE_POLICY);
    if (problem?.kind === 'owner') return { trusted: false, why: `${hostPath} is owned by ${owner(info.uid)}, not root` };
    if (problem?.by === 'everyone') return { trusted: false, why: `${hostPath} is writable by every user` };
    if (problem?.by === 'group') return { trusted: false, why: `${hostPath} is writable by group ${info.gid}` };
    return { trusted: true, why: `${hostPath} owned by ${owner(info.uid)}` };
  } catch (error) {
    return { trusted: false, why: `${hostPath} cannot be checked: ${(error as Error).message}` };
  }
}

/** Every file trusted, or the first reason one is not. */
export async function filesTrust(host: HostRoot, files: string[]): Promise<Trust> {
  for (const file of files) {
    const trust = await fileTrust(host, file);
    if (!trust.trusted) return trust;
  }
  return { trusted: true, why: files.length > 0 ? `${files.join(', ')} owned by root` : 'no files' };
}

/** The file and every directory above it owned by root (or the advisor's user), none writable by others. */
export async function pathChainTrust(host: HostRoot, file: string): Promise<Trust> {
  for (const current of pathAndAncestors(file).reverse()) {
    const trust = await fileTrust(host, current);
    if (!trust.trusted) return trust;
  }
  return { trusted: true, why: `${file} and its directories are root's` };
}

/** Real and effective uid from /proc/<pid>/status (readable by every user, unlike exe and environ). */
export async function processUids(host: HostRoot, pid: number): Promise<{ real: number; effective: number } | undefined> {
  const status = await host.readText(`/proc/${pid}/status`, { maxBytes: 16 * 1024 });
  const uids = status.ok ? /^Uid:\s+(\d+)\s+(\d+)/m.exec(status.text) : null;
  return uids ? { real: Number(uids[1]), effective: Number(uids[2]) } : undefined;
}

/**
 * The binary the kernel runs for the process, or why it cannot be read (no CAP_SYS_PTRACE, another user).
 * `deleted`: the kernel says the file it started from is gone from that path (replaced by a package
 * upgrade, or removed): the process still runs the old binary, whatever the path holds now.
 */
export async function processExe(host: HostRoot, pid: number): Promise<{ path: string; deleted: boolean } | { unreadable: string }> {
  const link = await host.readLink(`/proc/${pid}/exe`);
  if (!link.ok || link.text === '') return { unreadable: link.ok ? `/proc/${pid}/exe is empty` : link.reason };
  const deleted = link.text.endsWith(' (deleted)');
  return { path: deleted ? link.text.slice(0, -' (deleted)'.length) : link.text, deleted };
}

export async function processRunsBinary(host: HostRoot, pid: number, binary: string): Promise<Trust> {
  const uids = await processUids(host, pid);
  if (!uids) return { trusted: false, why: `/proc/${pid}/status has no Uid line: its owner is unknown` };
  if (!trustedUids().includes(uids.real) || !trustedUids().includes(uids.effective)) {
    return { trusted: false, why: `PID ${pid} runs as ${owner(uids.effective)}` };
  }
  const exe = await processExe(host, pid);
  if ('unreadable' in exe) return { trusted: false, why: `${exe.unreadable} (reading another process's binary needs CAP_SYS_PTRACE)` };
  if (path.posix.basename(exe.path) !== binary) return { trusted: false, why: `PID ${pid} runs ${exe.path}, not ${binary}` };
  return { trusted: true, why: `PID ${pid} is ${owner(uids.effective)}'s ${exe.path}` };
}

/**
 * The system service a process runs in, from /proc/<pid>/cgroup (v2 "0::/system.slice/etcd.service",
 * v1 "1:name=systemd:/…"). Only root (systemd) can place a process there; units under user.slice
 * (user@<uid>.service) belong to that user and are ignored.
 */
export function systemServiceOf(cgroupText: string): string | undefined {
  for (const line of cgroupText.split('\n')) {
    const cgroupPath = /^\d+:(?:|name=systemd):(\/.*)$/.exec(line.trim())?.[1];
    if (!cgroupPath) continue;
    const parts = cgroupPath.split('/').filter(Boolean);
    if (parts.includes('user.slice') || parts.some((part) => /^user@\d+\.service$/.test(part))) return undefined;
    const service = parts.filter((part) => part.endsWith('.service')).at(-1);
    if (service && /^[A-Za-z0-9:_.@\\-]+\.service$/.test(service)) return service;
  }
  return undefined;
}
