// Byte-exact text helpers: kubectl measures annotation lines in bytes (Go len), not characters.

export function byteLength(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

const ELLIPSIS = '…';

/** Cut `text` to at most `maxBytes` UTF-8 bytes on a character boundary, ending with "…" when cut. */
export function truncateBytes(text: string, maxBytes: number): string {
  if (byteLength(text) <= maxBytes) return text;
  const budget = maxBytes - byteLength(ELLIPSIS);
  let used = 0;
  let out = '';
  for (const char of text) {
    const size = byteLength(char);
    if (used + size > budget) break;
    out += char;
    used += size;
  }
  return out + ELLIPSIS;
}
