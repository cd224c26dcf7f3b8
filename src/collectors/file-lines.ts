// Line numbers for remediation text: "edit line 12 of …" beats "somewhere in …".
import type { HostRoot } from '../host/host-root.ts';

/** The 1-based number of the first line of `file` matching `pattern`, or undefined. */
export async function lineIn(host: HostRoot, file: string, pattern: RegExp): Promise<number | undefined> {
  const text = await host.readText(file);
  if (!text.ok) return undefined;
  const index = text.text.split('\n').findIndex((line) => pattern.test(line));
  return index >= 0 ? index + 1 : undefined;
}

/** "file (VAR)" or "file" → the file part, when it is a host path. */
export function fileOf(origin: string): string | undefined {
  const file = origin.replace(/ \(.*\)$/, '');
  return file.startsWith('/') && !file.startsWith('/proc/') ? file : undefined;
}

/** Adds " line N" (or another label: "after line N") after the first mention of `file` in `text`. */
export function withLine(text: string, file: string, line: number | undefined, label = 'line'): string {
  if (line === undefined) return text;
  const at = text.indexOf(file);
  if (at < 0) return text;
  const end = at + file.length;
  return `${text.slice(0, end)} ${label} ${line}${text.slice(end)}`;
}
