// YAML that is safe to print on a terminal and still says exactly what the data says: characters of
// the control table (controls.ts) are written as escapes, never raw (JSON: terminalJson in terminal.ts).
import { Document, isScalar, visit } from 'yaml';
import { escapeControls, hasControlAboveC0 } from './controls.ts';

/** YAML where every string holding a table character from DEL up is double-quoted, with those characters escaped (yaml escapes C0 itself). */
export function terminalYaml(value: unknown): string {
  const doc = new Document(value);
  visit(doc, {
    Scalar(_key, node) {
      if (typeof node.value === 'string' && hasControlAboveC0(node.value)) node.type = 'QUOTE_DOUBLE';
    },
    Pair(_key, pair) {
      if (isScalar(pair.key) && typeof pair.key.value === 'string' && hasControlAboveC0(pair.key.value)) pair.key.type = 'QUOTE_DOUBLE';
    },
  });
  return escapeControls(doc.toString({ lineWidth: 0 }), 'yaml');
}
