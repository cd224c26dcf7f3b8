// Display columns of terminal text: East Asian wide characters and emoji take two, combining marks
// and zero-width characters none. Apart from width.ts (the width rule every command loads at start).

const WIDE = /[\u1100-\u115F\u2E80-\u303E\u3041-\u33FF\u3400-\u4DBF\u4E00-\u9FFF\uA000-\uA4CF\uAC00-\uD7A3\uF900-\uFAFF\uFE30-\uFE4F\uFF00-\uFF60\uFFE0-\uFFE6\u{1F300}-\u{1F64F}\u{1F900}-\u{1F9FF}\u{20000}-\u{3FFFD}]/u;
const ZERO_WIDTH = /[\p{Mn}\p{Me}\u200B-\u200F]/u;

export function displayWidth(text: string): number {
  let columns = 0;
  for (const char of text) columns += ZERO_WIDTH.test(char) ? 0 : WIDE.test(char) ? 2 : 1;
  return columns;
}

/** The first characters of `text` that fit in `columns`. */
export function takeColumns(text: string, columns: number): string {
  let out = '';
  let used = 0;
  for (const char of text) {
    const w = displayWidth(char);
    if (used + w > columns) break;
    out += char;
    used += w;
  }
  return out;
}

/** `text` if it fits in `columns`, else its first columns and "…" in the last one. */
export function fitColumns(text: string, columns: number): string {
  return displayWidth(text) <= columns ? text : `${takeColumns(text, Math.max(0, columns - 1))}…`;
}
