// When a process started, in ms since the epoch, from what any user may read: its /proc/<pid>/stat
// starttime (clock ticks after boot, USER_HZ = 100 on every Linux architecture) and the boot time
// in /proc/stat (btime). No ptrace capability is needed, so the DaemonSet can read it too.
import type { HostRoot } from './host-root.ts';

const USER_HZ = 100;

export async function processStartedAt(host: HostRoot, pid: number): Promise<number | undefined> {
  const stat = await host.readText(`/proc/${pid}/stat`, { maxBytes: 4096 });
  const boot = await host.readText('/proc/stat', { maxBytes: 256 * 1024 });
  if (!stat.ok || !boot.ok) return undefined;
  // Fields after the command name (which may hold spaces and parentheses): state is field 3, starttime field 22.
  const fields = stat.text.slice(stat.text.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[19]);
  const btime = Number(/^btime (\d+)$/m.exec(boot.text)?.[1]);
  if (!Number.isSafeInteger(ticks) || ticks < 0 || !Number.isSafeInteger(btime) || btime <= 0) return undefined;
  return btime * 1000 + (ticks * 1000) / USER_HZ;
}
