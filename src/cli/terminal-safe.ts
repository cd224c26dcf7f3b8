// Text read from the API server reaches terminals: a Node's annotations (anyone allowed to patch
// Nodes writes them), other objects' fields, the server's error messages. Control characters in it
// could move the cursor, rewrite earlier lines, set the window title or reorder text (bidi controls).
// They are removed at one boundary: where API data is handed to the CLI's output (and in errors).

// C0 except tab and newline, DEL, C1, and the Unicode bidi/line controls.
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

export function stripControls(text: string): string {
  return text.replace(CONTROL, '');
}

/** A deep copy with every string (values and keys) stripped of control characters. */
export function terminalSafe<T>(value: T): T {
  if (typeof value === 'string') return stripControls(value) as T;
  if (Array.isArray(value)) return value.map((item) => terminalSafe(item)) as T;
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [stripControls(key), terminalSafe(item)])) as T;
  }
  return value;
}
