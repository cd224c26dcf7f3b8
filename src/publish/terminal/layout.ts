// Text layout for the terminal: clipping to a number of lines, columns that wrap, commands. Word wrap
// with a hanging indent: text/wrap.ts (here too, for the views); widths: text/columns.ts.
import { displayWidth } from '../../text/columns.ts';
import { hang, wrap } from '../../text/wrap.ts';

export { hang, wrap };

export function padEnd(text: string, columns: number): string {
  return text + ' '.repeat(Math.max(0, columns - displayWidth(text)));
}

/** At most `max` lines; the last one kept ends in "…" when lines were dropped. */
export function clip(lines: string[], max: number, width: number): string[] {
  if (lines.length <= max) return lines;
  const kept = lines.slice(0, max);
  let last = kept[max - 1] as string;
  while (displayWidth(`${last}…`) > width && last.includes(' ')) last = last.slice(0, last.lastIndexOf(' '));
  kept[max - 1] = `${last}…`;
  return kept;
}

/**
 * One row of columns, each cell wrapped inside its width; the last column takes what is left.
 * Returns as many lines as the tallest cell needs.
 */
export function row(cells: string[], widths: number[], width: number, gap = 2): string[] {
  const lastStart = widths.slice(0, cells.length - 1).reduce((sum, w) => sum + w + gap, 0);
  const lastWidth = Math.max(8, width - lastStart);
  const wrapped = cells.map((cell, i) => wrap(cell, i === cells.length - 1 ? lastWidth : (widths[i] as number)));
  const height = Math.max(1, ...wrapped.map((lines) => lines.length));
  const lines: string[] = [];
  for (let n = 0; n < height; n++) {
    let line = '';
    wrapped.forEach((cellLines, i) => {
      const text = cellLines[n] ?? '';
      line = i === cells.length - 1 ? line + text : line + padEnd(text, (widths[i] as number) + gap);
    });
    lines.push(line.trimEnd());
  }
  return lines;
}

/**
 * A shell command within `width`. Too long: a trailing "# comment" goes on its own line under it,
 * and a command still too long breaks at spaces outside quotes with " \" so it still pastes.
 */
export function commandLines(command: string, width: number, prompt = '$ '): string[] {
  if (displayWidth(prompt + command) <= width) return [prompt + command];
  const comment = /^(.*?)\s{2,}(#.*)$/.exec(command);
  const body = comment ? (comment[1] as string) : command;
  const below = comment ? hang('  # ', (comment[2] as string).replace(/^#\s*/, ''), width) : [];
  const lines: string[] = [];
  let current = prompt;
  let empty = true;
  for (const word of splitUnquoted(body)) {
    const candidate = empty ? current + word : `${current} ${word}`;
    // Room for the trailing backslash a further break would need.
    if (!empty && displayWidth(candidate) + 2 > width) {
      lines.push(`${current} \\`);
      current = `    ${word}`;
    } else current = candidate;
    empty = false;
  }
  lines.push(current, ...below);
  // A single word wider than the line (a long path) still has to break somewhere.
  return lines.flatMap((line) => (displayWidth(line) > width ? hang(/^ */.exec(line)?.[0] ?? '', line.trimStart(), width) : [line]));
}

/** Words split at spaces outside single and double quotes. */
function splitUnquoted(text: string): string[] {
  const words: string[] = [];
  let current = '';
  let quote: string | undefined;
  for (const char of text) {
    if (quote) {
      if (char === quote) quote = undefined;
      current += char;
    } else if (char === '"' || char === "'") {
      quote = char;
      current += char;
    } else if (char === ' ') {
      if (current) words.push(current);
      current = '';
    } else current += char;
  }
  if (current) words.push(current);
  return words;
}
