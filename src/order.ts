// Sorting names and timestamps by code point: stable across hosts and locales, and free. The first
// localeCompare of a process builds an ICU collator, ~10 ms of a CLI run that sorts a few ids.

export function byCodePoint(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** For what people read (reasons, names): case does not split the list, then code point. */
export function byText(a: string, b: string): number {
  return byCodePoint(a.toLowerCase(), b.toLowerCase()) || byCodePoint(a, b);
}
