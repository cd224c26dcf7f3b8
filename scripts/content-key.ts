// A key for "these files, as they are now": sha256 over the relative path and content of every file
// under the inputs (directories walked in name order), plus any extra text (a version, a recipe).
import { createHash } from 'node:crypto';
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';

export async function filesUnder(entry: string): Promise<string[]> {
  const info = await stat(entry);
  if (!info.isDirectory()) return [entry];
  const names = (await readdir(entry)).sort();
  return (await Promise.all(names.map((name) => filesUnder(path.join(entry, name))))).flat();
}

export async function contentKey(root: string, inputs: string[], extra: string[] = []): Promise<string> {
  const hash = createHash('sha256');
  for (const text of extra) hash.update(`${text}\0`);
  for (const file of (await Promise.all(inputs.map((i) => filesUnder(path.join(root, i))))).flat()) {
    hash.update(`${path.relative(root, file)}\0`);
    hash.update(await readFile(file));
    hash.update('\0');
  }
  return hash.digest('hex').slice(0, 32);
}
