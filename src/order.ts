// Sorting names and timestamps by code point: stable across hosts and locales, and free. The first
// localeCompare of a process builds an ICU collator, ~10 ms of a CLI run that sorts a few ids.

export function byCodePoint(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** For what people read (reasons, names): case does not split the list, then code point. */
export function byText(a: string, b: string): number {
  return byCodePoint(a.toLowerCase(), b.toLowerCase()) || byCodePoint(a, b);
}

const DIGIT_RUN = /\d+|\D+/g;

/**
 * "policy10" after "policy9", "cpu2" before "cpu10": runs of digits compare as numbers, the rest by
 * code point. Readers that must follow a program's own order (systemd drop-ins) sort again. Not
 * Intl.Collator: building one loads ICU's collation data, 10 ms of every CLI run.
 */
export function naturalCompare(a: string, b: string): number {
  const left = a.match(DIGIT_RUN) ?? [];
  const right = b.match(DIGIT_RUN) ?? [];
  for (let i = 0; i < Math.min(left.length, right.length); i += 1) {
    const x = left[i] as string;
    const y = right[i] as string;
    if (x === y) continue;
    const numeric = /^\d/.test(x) && /^\d/.test(y);
    if (numeric) {
      const [px, py] = [x.replace(/^0+(?=\d)/, ''), y.replace(/^0+(?=\d)/, '')];
      if (px.length !== py.length) return px.length - py.length;
      if (px !== py) return px < py ? -1 : 1;
      if (x.length !== y.length) return x.length - y.length;
      continue;
    }
    return x < y ? -1 : 1;
  }
  return left.length - right.length || (a < b ? -1 : a > b ? 1 : 0);
}
