// Rebuilds the command line systemd would start for a unit from its files: the unit, its drop-ins,
// Environment= and EnvironmentFile= (kubeadm-flags.env, /etc/default/kubelet, kubelet.env), and
// ExecStart= with $VAR / ${VAR} expanded. Used for snapshots of a host, where no process is running.
import path from 'node:path';
import type { HostRoot } from './host-root.ts';
import type { SourcedArg } from './processes.ts';

/** Highest precedence first, as systemd searches them. */
export const UNIT_DIRS = ['/etc/systemd/system', '/run/systemd/system', '/usr/local/lib/systemd/system', '/usr/lib/systemd/system', '/lib/systemd/system'];

export interface UnitCommand {
  /** The files read, in the order applied. */
  files: string[];
  args: SourcedArg[];
  workingDirectory: string;
  /** Environment= and EnvironmentFile= variables, as the service's process gets them. */
  environment: Map<string, EnvValue>;
  /** EnvironmentFile= entries that could not be read (a required one stops the unit from starting). */
  unreadableEnvironmentFiles: { path: string; optional: boolean; code: string; reason: string }[];
  /** User= of the service (undefined: root, systemd's default). */
  user?: string;
}

interface Assignment {
  key: string;
  value: string;
  file: string;
}

export interface EnvValue {
  value: string;
  origin: string;
}

/** `Key=value` lines of the [Service] section, continuation lines joined. */
export function serviceAssignments(text: string, file: string): Assignment[] {
  const assignments: Assignment[] = [];
  let section = '';
  for (const line of joinContinuations(text)) {
    const trimmed = line.trim();
    if (trimmed === '' || trimmed.startsWith('#') || trimmed.startsWith(';')) continue;
    const header = /^\[(.+)\]$/.exec(trimmed);
    if (header) {
      section = header[1] as string;
      continue;
    }
    const eq = trimmed.indexOf('=');
    if (section !== 'Service' || eq < 0) continue;
    assignments.push({ key: trimmed.slice(0, eq).trim(), value: trimmed.slice(eq + 1).trim(), file });
  }
  return assignments;
}

function joinContinuations(text: string): string[] {
  const lines: string[] = [];
  let pending = '';
  for (const raw of text.split(/\r?\n/)) {
    if (raw.endsWith('\\')) {
      pending += raw.slice(0, -1) + ' ';
      continue;
    }
    lines.push(pending + raw);
    pending = '';
  }
  if (pending !== '') lines.push(pending);
  return lines;
}

/** Splits a line into words the way systemd does for ExecStart= and Environment=: quotes group, backslash escapes. */
export function splitWords(text: string): string[] {
  const words: string[] = [];
  let current: string | undefined;
  let quote: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i] as string;
    if (quote) {
      if (ch === quote) quote = undefined;
      else if (ch === '\\' && quote === '"' && i + 1 < text.length) current = (current ?? '') + (text[++i] as string);
      else current += ch;
    } else if (ch === '"' || ch === "'") {
      quote = ch;
      current ??= '';
    } else if (/\s/.test(ch)) {
      if (current !== undefined) words.push(current);
      current = undefined;
    } else if (ch === '\\' && i + 1 < text.length) {
      current = (current ?? '') + text[++i];
    } else {
      current = (current ?? '') + ch;
    }
  }
  if (current !== undefined) words.push(current);
  return words;
}

/** An EnvironmentFile: KEY=value lines, quoted values may span lines, `#` starts a comment line. */
export function parseEnvironmentFile(text: string): Map<string, string> {
  const env = new Map<string, string>();
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    let line = (lines[i] as string).trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    while (line.endsWith('\\') && i + 1 < lines.length) line = line.slice(0, -1) + ' ' + (lines[++i] as string).trim();
    const match = /^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*([\s\S]*)$/.exec(line);
    if (!match) continue;
    let value = match[2] as string;
    const quote = value[0];
    if (quote === '"' || quote === "'") {
      while (!closesQuote(value, quote) && i + 1 < lines.length) value += '\n' + lines[++i];
      value = value.slice(1, value.lastIndexOf(quote) > 0 ? value.lastIndexOf(quote) : undefined);
      if (quote === '"') value = value.replace(/\\\n/g, ' ').replace(/\\(["\\$`])/g, '$1');
    }
    env.set(match[1] as string, value.trim());
  }
  return env;
}

function closesQuote(value: string, quote: string): boolean {
  for (let i = 1; i < value.length; i++) {
    if (value[i] === '\\' && quote === '"') i++;
    else if (value[i] === quote) return true;
  }
  return false;
}

/** `$VAR` alone becomes several words; `${VAR}` is pasted into its word. Unset variables expand to nothing. */
export function expandExecStart(line: string, env: Map<string, EnvValue>, unitFile: string): SourcedArg[] {
  const args: SourcedArg[] = [];
  const words = splitWords(line.replace(/^[-@:+!]+/, ''));
  for (const word of words) {
    const whole = /^\$([A-Za-z_][A-Za-z0-9_]*)$/.exec(word);
    if (whole) {
      const found = env.get(whole[1] as string);
      if (found) for (const part of splitWords(found.value)) args.push({ text: part, origin: found.origin });
      continue;
    }
    let origin = unitFile;
    const text = word.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_all, name: string) => {
      const found = env.get(name);
      if (found) origin = found.origin;
      return found?.value ?? '';
    });
    args.push({ text, origin });
  }
  return args;
}

/** etcd@m1.service falls back to the template etcd@.service, as systemd does. */
function templateOf(unit: string): string | undefined {
  const match = /^([^@]+)@[^.]+(\.\w+)$/.exec(unit);
  return match ? `${match[1]}@${match[2]}` : undefined;
}

async function unitFiles(host: HostRoot, unit: string): Promise<string[]> {
  let main: string | undefined;
  for (const name of [unit, templateOf(unit)]) {
    for (const dir of name ? UNIT_DIRS : []) {
      if (!main && (await host.exists(`${dir}/${name}`))) main = `${dir}/${name}`;
    }
  }
  const dropIns = new Map<string, string>();
  for (const dir of [...UNIT_DIRS].reverse()) {
    const listing = await host.listDir(`${dir}/${unit}.d`);
    for (const entry of listing.ok ? listing.entries : []) {
      if (entry.endsWith('.conf')) dropIns.set(entry, `${dir}/${unit}.d/${entry}`);
    }
  }
  const sortedDropIns = [...dropIns.keys()].sort().map((name) => dropIns.get(name) as string);
  return main ? [main, ...sortedDropIns] : sortedDropIns;
}

/** The unit's ExecStart as arguments with their origins, or undefined when the unit has no files or no ExecStart. */
export async function reconstructUnitCommand(host: HostRoot, unit: string): Promise<UnitCommand | undefined> {
  const files = await unitFiles(host, unit);
  if (files.length === 0) return undefined;
  const specifiers = await specifiersOf(host, unit);
  const assignments: Assignment[] = [];
  for (const file of files) {
    const text = await host.readText(file);
    if (text.ok) assignments.push(...serviceAssignments(text.text, file).map((a) => ({ ...a, value: expandSpecifiers(a.value, specifiers) })));
  }
  const env = new Map<string, EnvValue>();
  let envFiles: { path: string; optional: boolean }[] = [];
  let execStart: Assignment | undefined;
  let workingDirectory = '/';
  let user: string | undefined;
  for (const assignment of assignments) {
    if (assignment.key === 'User') user = assignment.value === '' ? undefined : assignment.value;
    if (assignment.key === 'Environment') {
      for (const pair of splitWords(assignment.value)) {
        const eq = pair.indexOf('=');
        if (eq > 0) env.set(pair.slice(0, eq), { value: pair.slice(eq + 1), origin: `${assignment.file} (${pair.slice(0, eq)})` });
      }
    } else if (assignment.key === 'EnvironmentFile') {
      if (assignment.value === '') envFiles = [];
      else envFiles.push({ path: assignment.value.replace(/^-/, ''), optional: assignment.value.startsWith('-') });
    } else if (assignment.key === 'ExecStart') {
      execStart = assignment.value === '' ? undefined : assignment;
    } else if (assignment.key === 'WorkingDirectory' && path.posix.isAbsolute(assignment.value.replace(/^-/, ''))) {
      workingDirectory = assignment.value.replace(/^-/, '');
    }
  }
  const used = [...files];
  const unreadableEnvironmentFiles: UnitCommand['unreadableEnvironmentFiles'] = [];
  for (const envFile of envFiles) {
    const text = await host.readText(envFile.path);
    if (!text.ok) {
      unreadableEnvironmentFiles.push({ ...envFile, code: text.code, reason: text.reason });
      continue;
    }
    used.push(envFile.path);
    for (const [key, value] of parseEnvironmentFile(text.text)) env.set(key, { value, origin: `${envFile.path} (${key})` });
  }
  if (!execStart) return undefined;
  return { files: used, args: expandExecStart(execStart.value, env, execStart.file), workingDirectory, environment: env, unreadableEnvironmentFiles, ...(user ? { user } : {}) };
}

/** The unit specifiers unit files use for paths and names (systemd.unit(5) "Specifiers"). */
async function specifiersOf(host: HostRoot, unit: string): Promise<Record<string, string>> {
  const name = unit.replace(/\.\w+$/, '');
  const [prefix, instance] = name.includes('@') ? (name.split('@', 2) as [string, string]) : [name, ''];
  const hostname = await host.readValue('/etc/hostname');
  return { n: unit, N: name, p: prefix, i: instance, I: instance, H: hostname.ok ? hostname.text : '%H', '%': '%' };
}

function expandSpecifiers(value: string, specifiers: Record<string, string>): string {
  return value.replace(/%([nNpiIH%])/g, (all, letter: string) => specifiers[letter] ?? all);
}

/** Replaces /proc/<pid>/cmdline origins by the unit file or environment file that holds the same argument. */
export function attributeOrigins(args: SourcedArg[], unitArgs: SourcedArg[]): SourcedArg[] {
  const known = new Map(unitArgs.map((arg) => [arg.text, arg.origin]));
  return args.map((arg) => ({ text: arg.text, origin: known.get(arg.text) ?? arg.origin }));
}
