// Reads our annotation lines out of `kubectl describe node` output, as kubectl lays them out:
// keys at one column, each line of a multi-line value two columns further, a bare "key:" above it.
import assert from 'node:assert/strict';

export interface AdvisorLines {
  /** Lines that carry advisor content: "key: value" lines and the lines of multi-line values. */
  content: string[];
  /** The bare "key:" lines kubectl prints above a multi-line value. */
  bareKeys: string[];
}

/** Our annotation lines in `kubectl describe node` output, by kubectl's layout (keys at one column, values 2 further). */
export function advisorLines(describeOutput: string): AdvisorLines {
  const lines = describeOutput.split('\n');
  const start = lines.findIndex((l) => l.startsWith('Annotations:'));
  assert.ok(start >= 0, describeOutput);
  const head = lines[start] as string;
  const keyColumn = 'Annotations:'.length + head.slice('Annotations:'.length).search(/\S/);
  const result: AdvisorLines = { content: [], bareKeys: [] };
  let ours = false;
  for (const line of lines.slice(start)) {
    const indentOk = line.slice(0, keyColumn).trim() === '' || line.startsWith('Annotations:');
    if (!indentOk) break; // the next field (CreationTimestamp:, …)
    const atKey = line[keyColumn] !== ' ' && line.length > keyColumn;
    if (atKey) {
      ours = line.slice(keyColumn).startsWith('node-tuning-advisor.io/');
      if (!ours) continue;
      if (/:\s*$/.test(line)) result.bareKeys.push(line);
      else result.content.push(line);
    } else if (ours && line.trim() !== '') result.content.push(line);
  }
  return result;
}
