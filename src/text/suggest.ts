// "Did you mean …?" for a mistyped command, flag, key or rule id: the closest known word within a
// small edit distance (Levenshtein with swaps of neighbours), never the word itself.

/** Edits (insert, delete, substitute, swap two neighbours) from a to b: "lsit" is 1 from "list". */
export function editDistance(a: string, b: string): number {
  let before: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      let best = Math.min((previous[j] as number) + 1, (current[j - 1] as number) + 1, (previous[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, (before[j - 2] as number) + 1);
      current[j] = best;
    }
    before = previous;
    previous = current;
  }
  return previous[b.length] as number;
}

/** The closest candidate within `maxDistance` (default: 1 for words up to 4 letters, else a third of the word, at least 2), or undefined. */
export function closest(word: string, candidates: readonly string[], maxDistance = word.length <= 4 ? 1 : Math.max(2, Math.floor(word.length / 3))): string | undefined {
  let best: { candidate: string; distance: number } | undefined;
  for (const candidate of candidates) {
    if (candidate === word) continue;
    const distance = editDistance(word.toLowerCase(), candidate.toLowerCase());
    if (distance <= maxDistance && (best === undefined || distance < best.distance)) best = { candidate, distance };
  }
  return best?.candidate;
}

/** ` (did you mean "x"?)` or ''. */
export function didYouMean(word: string, candidates: readonly string[], maxDistance?: number): string {
  const match = closest(word, candidates, maxDistance);
  return match === undefined ? '' : ` (did you mean "${match}"?)`;
}

/** Candidates that contain the word ("governor" → cpu-governor), for a name typed in part. */
export function containing(word: string, candidates: readonly string[]): string[] {
  const needle = word.toLowerCase();
  if (needle.length < 3) return [];
  return candidates.filter((candidate) => candidate !== word && candidate.toLowerCase().includes(needle));
}

/** ` (did you mean "x"?)`, else ` (did you mean one of: a, b?)` from the names containing it, else ''. */
export function didYouMeanName(word: string, candidates: readonly string[]): string {
  const close = didYouMean(word, candidates);
  if (close !== '') return close;
  const partial = containing(word, candidates);
  if (partial.length === 1) return ` (did you mean "${partial[0]}"?)`;
  if (partial.length === 0) return '';
  const shown = partial.slice(0, 3).join(', ');
  return ` (did you mean one of: ${shown}${partial.length > 3 ? `, … ${partial.length - 3} more` : ''}?)`;
}
