// Word wrap with a hanging indent, never mid-word unless one word is wider than the line. Its own
// small module so that a command that only wraps (probe) does not load the views' layout.
import { displayWidth, takeColumns } from './columns.ts';

/** A word wider than the line breaks after a "/", ",", "=", "&", "-", "_" or ":" where one fits, else at the width. */
function breakWord(word: string, columns: number): string[] {
  const pieces: string[] = [];
  let rest = word;
  while (displayWidth(rest) > columns) {
    const head = takeColumns(rest, columns);
    const at = Math.max(...['/', ',', '=', '&', '-', '_', ':'].map((c) => head.lastIndexOf(c)));
    const cut = at >= columns / 3 ? at + 1 : head.length;
    pieces.push(rest.slice(0, cut));
    rest = rest.slice(cut);
  }
  if (rest) pieces.push(rest);
  return pieces;
}

/** Words of `text` in lines of at most `columns`. */
export function wrap(text: string, columns: number): string[] {
  const width = Math.max(1, columns);
  const lines: string[] = [];
  let current = '';
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (displayWidth(word) > width) {
      // Its own lines: the pieces of one word must not be joined by spaces.
      if (current) lines.push(current);
      const pieces = breakWord(word, width);
      lines.push(...pieces.slice(0, -1));
      current = pieces.at(-1) as string;
    } else if (current && displayWidth(current) + 1 + displayWidth(word) > width) {
      lines.push(current);
      current = word;
    } else current = current ? `${current} ${word}` : word;
  }
  if (current) lines.push(current);
  return lines;
}

/** `prefix` then `text` wrapped to `width`, continuation lines indented to the prefix's width. */
export function hang(prefix: string, text: string, width: number, indent = displayWidth(prefix)): string[] {
  const lines = wrap(text, width - indent);
  if (lines.length === 0) return [prefix.trimEnd()];
  return lines.map((line, i) => (i === 0 ? prefix : ' '.repeat(indent)) + line);
}

