// npm run bench [-- NAME...]: runs every bench/<name>.ts (each exports run()) or only the named ones.
import { readdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

const dir = fileURLToPath(new URL('.', import.meta.url));
const wanted = process.argv.slice(2);
const names = (await readdir(dir))
  .filter((file) => file.endsWith('.ts') && file !== 'run.ts' && !file.startsWith('_'))
  .map((file) => file.replace(/\.ts$/, ''))
  .filter((name) => wanted.length === 0 || wanted.includes(name))
  .sort();
for (const name of names) {
  console.log(`\n## bench: ${name}`);
  const module = (await import(`./${name}.ts`)) as { run: () => Promise<void> };
  await module.run();
}
