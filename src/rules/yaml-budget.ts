// What a rule file may cost to parse, checked before it is parsed. The YAML parser builds a token
// list, a syntax tree and a document of ~300-400 heap bytes per token: measured with the agent's
// own flags (`node --lite-mode`, the DaemonSet's --max-old-space-size=64), 786 KB of valid
// overrides or 256 KiB of "0," ran the heap out, and 128 KiB of "[" did too (64 KiB of it overflowed
// the parser's stack). Bytes do not bound that; tokens and flow nesting do. The lexer alone walks
// the text token by token and keeps nothing, so it counts them for the cost of a scan of the text.
import { CST, Lexer } from 'yaml';

/**
 * Tokens (scalars, indicators, spaces, newlines, comments) per file: the largest bundled file has
 * ~1 800, all of them together ~8 600. 20 000 parses within a few MiB of heap in the agent.
 */
export const MAX_RULE_FILE_TOKENS = 20_000;
/**
 * Every file parsed for one load (one at a time, but their rules are kept until the scan ends): ~11
 * times the bundled rules. The bundled files and the ConfigMap's copies of them are not parsed
 * (scripts/bundle.ts, PRECOMPILED) and do not count.
 */
export const MAX_RULE_TOKENS_TOTAL = 100_000;
/** Flow collections ([…], {…}) nested: rule files use 2. */
export const MAX_FLOW_DEPTH = 32;
/** YAML documents per file (--- separated): each is a document object of its own. */
export const MAX_DOCUMENTS = 64;

export type YamlCost = { ok: true; tokens: number } | { ok: false; message: string };

/** The file's tokens, or why it is refused before parsing (`budget`: tokens it may still use). */
export function yamlCost(text: string, budget = MAX_RULE_FILE_TOKENS): YamlCost {
  let tokens = 0;
  let depth = 0;
  let documents = 0;
  for (const token of new Lexer().lex(text)) {
    if (++tokens > budget) {
      return { ok: false, message: budget < MAX_RULE_FILE_TOKENS
        ? `is beyond what the rule files loaded together may hold (${MAX_RULE_TOKENS_TOTAL} YAML tokens); merge or remove rule files`
        : `holds more than ${MAX_RULE_FILE_TOKENS} YAML tokens, more than the agent's heap parses safely (the bundled files have ~1 800 each); split it` };
    }
    const type = CST.tokenType(token);
    if (type === 'flow-seq-start' || type === 'flow-map-start') {
      if (++depth > MAX_FLOW_DEPTH) return { ok: false, message: `nests [ ] and { } more than ${MAX_FLOW_DEPTH} deep; a rule file needs 2 or 3` };
    } else if (type === 'flow-seq-end' || type === 'flow-map-end') {
      depth = Math.max(0, depth - 1);
    } else if (type === 'doc-start' && ++documents > MAX_DOCUMENTS) {
      return { ok: false, message: `holds more than ${MAX_DOCUMENTS} YAML documents; put the rules of one file in one document` };
    }
  }
  return { ok: true, tokens };
}
