// Whether the host root's /proc is the kernel's own (procfs) or a copy in a snapshot tree. Counters
// read twice from a copy never move, so measurements over time only make sense on a live procfs:
// `/` itself, or the host's /proc mounted into the DaemonSet at /host/proc.
import { statfs } from 'node:fs/promises';
import type { HostRoot } from './host-root.ts';

const PROC_SUPER_MAGIC = 0x9fa0;

export async function isLiveProcfs(host: HostRoot): Promise<boolean> {
  const proc = await host.holdDirectory('/proc');
  if (!proc.ok) return false;
  try {
    return (await statfs(proc.name)).type === PROC_SUPER_MAGIC;
  } catch {
    return false;
  } finally {
    proc.close();
  }
}
