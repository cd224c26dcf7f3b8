// The one sanitizer for text bound for a terminal. Host data (process arguments, /etc/hostname, file
// contents), rule files, API objects and server messages may carry escape sequences that move the
// cursor, rewrite earlier lines, set the window title or reorder text: every view the CLI prints
// (scan and --verbose, markdown, explain, facts, probe, report, describe, measure, errors, the
// agent's log) passes its data through here first. JSON and YAML keep the data exact, escaped
// (terminalJson here, terminalYaml in terminal-yaml.ts).
import { escapeControls, stripControls } from './controls.ts';

export { stripControls };

/** A deep copy with every string (values and keys) stripped of the control table, tab and newline kept. */
export function terminalSafe<T>(value: T): T {
  if (typeof value === 'string') return stripControls(value) as T;
  if (Array.isArray(value)) return value.map((item) => terminalSafe(item)) as T;
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [stripControls(key), terminalSafe(item)])) as T;
  }
  return value;
}

/** JSON.stringify, with the table's characters above C0 (which JSON leaves raw) escaped as \uXXXX: the same data. */
export function terminalJson(value: unknown, indent = 2): string {
  return escapeControls(JSON.stringify(value, null, indent) ?? 'null', 'json');
}
