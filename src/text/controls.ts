// The one table of characters that must not reach a reader as they are: host data (process
// arguments, /etc/hostname, tuned profile names), API objects and server messages may carry them to
// a terminal, a Node annotation, an Event or a metric label. Every place that cleans text uses this
// table through the functions below (test/unit/text-controls.test.ts checks each range).

/**
 * - C0 (U+0000–U+001F: ESC starts every escape sequence, BEL ends OSC, CR/BS rewrite a line), DEL;
 * - C1 (U+0080–U+009F: U+009B is CSI and U+009D OSC on terminals that read 8-bit controls);
 * - bidi controls, which reorder what is shown ("Trojan Source"): ALM U+061C, LRM/RLM U+200E–U+200F,
 *   embeddings and overrides U+202A–U+202E, isolates U+2066–U+2069;
 * - invisible format characters that hide or join text: U+00AD soft hyphen, U+180E, zero-width
 *   U+200B–U+200D, word joiner and invisible operators U+2060–U+2064, deprecated U+206A–U+206F,
 *   U+FEFF, interlinear annotation U+FFF9–U+FFFB, tags U+E0000–U+E007F;
 * - line and paragraph separators U+2028–U+2029 (a line break to some readers, none to others).
 */
export const CONTROL_RANGES: readonly (readonly [number, number])[] = [
  [0x0000, 0x001f], [0x007f, 0x009f], [0x00ad, 0x00ad], [0x061c, 0x061c], [0x180e, 0x180e],
  [0x200b, 0x200f], [0x2028, 0x202e], [0x2060, 0x2064], [0x2066, 0x206f], [0xfeff, 0xfeff],
  [0xfff9, 0xfffb], [0xe0000, 0xe007f],
];

const CLASS = CONTROL_RANGES.map(([from, to]) => (from === to ? hex(from) : `${hex(from)}-${hex(to)}`)).join('');

function hex(code: number): string {
  return `\\u{${code.toString(16)}}`;
}

/** Every character of the table (global, Unicode). */
export const CONTROLS = new RegExp(`[${CLASS}]`, 'gu');
/** The table without tab and newline: what multi-line terminal text may keep. */
const CONTROLS_BUT_LAYOUT = new RegExp(`(?![\\t\\n])[${CLASS}]`, 'gu');
const CONTROL_RUNS = new RegExp(`[${CLASS}]+`, 'gu');

export function isControl(char: string): boolean {
  const code = char.codePointAt(0) ?? -1;
  return CONTROL_RANGES.some(([from, to]) => code >= from && code <= to);
}

/** Removes every character of the table except tab and newline (text laid out in lines). */
export function stripControls(text: string): string {
  return text.replace(CONTROLS_BUT_LAYOUT, '');
}

/** One line of text: each run of table characters (newlines and tabs too) becomes one space, spaces collapsed, trimmed. */
export function oneLine(text: string): string {
  return text.replace(CONTROL_RUNS, ' ').replace(/ {2,}/g, ' ').trim();
}

const ABOVE_C0 = new RegExp(`(?![\\u{0}-\\u{1f}])[${CLASS}]`, 'gu');

/** Whether `text` holds a character of the table from DEL up (what JSON and YAML serializers leave raw). */
export function hasControlAboveC0(text: string): boolean {
  ABOVE_C0.lastIndex = 0;
  return ABOVE_C0.test(text);
}

/**
 * Each character of the table from DEL up as an escape ("\u009b", "\u{e0001}" as JSON's surrogate
 * pair or YAML's "\U000e0001"), for the text of a JSON document or of YAML double quotes: their
 * serializers escape C0 themselves, and a raw C0 character in their output is layout.
 */
export function escapeControls(text: string, form: 'json' | 'yaml'): string {
  return text.replace(ABOVE_C0, (char) => {
    const code = char.codePointAt(0) as number;
    if (code <= 0xffff) return `\\u${code.toString(16).padStart(4, '0')}`;
    if (form === 'yaml') return `\\U${code.toString(16).padStart(8, '0')}`;
    return `\\u${char.charCodeAt(0).toString(16)}\\u${char.charCodeAt(1).toString(16)}`;
  });
}
