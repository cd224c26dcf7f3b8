// Live processes in the host's /proc (a DaemonSet sees them with hostPID; a fake tree holds
// proc/<pid>/{comm,cmdline,cwd}), and the Go-style (pflag) command lines Kubernetes binaries take.
import path from 'node:path';
import type { HostRoot } from './host-root.ts';
import { oncePerScan } from './per-scan.ts';

export interface HostProcess {
  pid: number;
  comm: string;
  argv: string[];
}

/** One argument and where it came from: "/proc/42/cmdline", "/var/lib/kubelet/kubeadm-flags.env (KUBELET_KUBEADM_ARGS)", … */
export interface SourcedArg {
  text: string;
  origin: string;
}

export interface FlagValue {
  value: string;
  /** Where the argument was read. */
  origin: string;
}

/** Flag name (without dashes) → its last value on the line, which is the one pflag keeps. */
export type FlagMap = Map<string, FlagValue>;

const MAX_CMDLINE_BYTES = 256 * 1024;

/** A NUL-separated /proc/<pid>/cmdline; a process that rewrote its title to one string is split on spaces. */
export function splitCmdline(raw: string): string[] {
  const parts = raw.split('\0');
  if (parts.at(-1) === '') parts.pop();
  if (parts.length === 1 && (parts[0] as string).includes(' ')) return (parts[0] as string).split(/ +/).filter(Boolean);
  return parts;
}

export interface ProcessTable {
  /** False when the host's /proc cannot be listed: "no such process" cannot be concluded then. */
  readable: boolean;
  processes: HostProcess[];
}

// One walk of /proc per scan: several collectors (kubelet, control plane, etcd, tuned, volumes) look for processes.
export const readProcessTable: (host: HostRoot) => Promise<ProcessTable> = oncePerScan(walkProc);

export async function listProcesses(host: HostRoot): Promise<HostProcess[]> {
  return (await readProcessTable(host)).processes;
}

async function walkProc(host: HostRoot): Promise<ProcessTable> {
  const listing = await host.listDir('/proc');
  if (!listing.ok) return { readable: false, processes: [] };
  const processes: HostProcess[] = [];
  for (const entry of listing.entries) {
    if (!/^\d+$/.test(entry)) continue;
    const cmdline = await host.readText(`/proc/${entry}/cmdline`, { maxBytes: MAX_CMDLINE_BYTES });
    if (!cmdline.ok || cmdline.text === '') continue; // kernel threads have an empty cmdline
    const comm = await host.readValue(`/proc/${entry}/comm`);
    processes.push({ pid: Number(entry), comm: comm.ok ? comm.text : '', argv: splitCmdline(cmdline.text) });
  }
  return { readable: true, processes };
}

/** Processes whose comm or argv[0] file name is one of `names`. */
export function findProcesses(processes: HostProcess[], names: string[]): HostProcess[] {
  return processes.filter((p) => names.includes(p.comm) || names.includes(path.posix.basename(p.argv[0] ?? '')));
}

/** The process's working directory as a host path, for resolving relative paths it was given. */
export async function processCwd(host: HostRoot, pid: number): Promise<string | undefined> {
  const link = await host.readLink(`/proc/${pid}/cwd`);
  if (!link.ok || link.text === '') return undefined;
  // The kernel's link is absolute; a fake tree may hold a relative one (kept inside the tree).
  return path.posix.resolve(`/proc/${pid}`, link.text);
}

/**
 * Parses pflag-style arguments: `--flag=value`, `--flag value`, `-v=2`, `-v 2`, and boolean flags
 * (`--flag` alone, or `--flag=false`). A boolean flag never takes the next argument, as in pflag;
 * any other flag followed by a non-flag argument takes it as its value. After `--`, nothing is a flag.
 */
export function parseFlags(args: SourcedArg[], booleanFlags: ReadonlySet<string> = new Set()): FlagMap {
  const flags: FlagMap = new Map();
  for (let i = 0; i < args.length; i++) {
    const { text, origin } = args[i] as SourcedArg;
    if (text === '--') break;
    const match = /^--?([A-Za-z0-9][A-Za-z0-9._-]*)(?:=([\s\S]*))?$/.exec(text);
    if (!match) continue;
    const name = match[1] as string;
    if (match[2] !== undefined) {
      flags.set(name, { value: match[2], origin });
      continue;
    }
    const next = args[i + 1];
    if (!booleanFlags.has(name) && next !== undefined && !next.text.startsWith('-')) {
      flags.set(name, { value: next.text, origin });
      i++;
    } else {
      flags.set(name, { value: 'true', origin });
    }
  }
  return flags;
}

export function argsFrom(argv: string[], origin: string): SourcedArg[] {
  return argv.map((text) => ({ text, origin }));
}

/** No number a flag takes is longer; a longer value is not read as one. */
const MAX_NUMBER_CHARS = 64;
const MAX_QUOTED_ARG = 40;

/** An argument (anyone may start a process with any) as messages quote it: at most 40 characters. */
export function quotedArg(text: string): string {
  return text.length <= MAX_QUOTED_ARG ? text : `${text.slice(0, MAX_QUOTED_ARG)}… (${text.length} characters)`;
}

/** A flag's value as a finite number, or undefined when absent or not numeric (`invalid`: the value as messages quote it). */
export function numericFlag(flags: FlagMap, name: string): { value: number; origin: string } | { invalid: string; origin: string } | undefined {
  const flag = flags.get(name);
  if (!flag) return undefined;
  const text = flag.value.length > MAX_NUMBER_CHARS ? '' : flag.value.trim();
  const value = Number(text);
  if (text === '' || !Number.isFinite(value)) return { invalid: quotedArg(flag.value), origin: flag.origin };
  return { value, origin: flag.origin };
}
