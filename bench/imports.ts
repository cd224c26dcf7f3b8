// What each import costs in resident memory, alone: a module that imports it (and keeps it alive)
// bundled as the CLI is, run next to an empty one, steady RSS = median of the last samples. Once with
// plain `node`, once with the agent's shipped node flags and environment (the Dockerfile's
// ENTRYPOINT, the DaemonSet's NODE_OPTIONS and malloc tunables).
// NTA_BENCH_IMPORTS_SECONDS sets how long each runs (default 8).
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { bundleSnippet } from '../scripts/bundle.ts';
import { shippedAgentCommand } from '../test/helpers/shipped-agent.ts';
import { median, sampleProcess, sleep } from './_process.ts';

const SECONDS = Number(process.env.NTA_BENCH_IMPORTS_SECONDS ?? 8);

interface Row { label: string; code: string; replace?: boolean }

const keep = (spec: string, what = '*') => `import ${what === '*' ? '* as m' : `{ ${what} as m }`} from '${spec}'; globalThis.kept = m;`;

export const ROWS: Row[] = [
  { label: 'nothing (empty bundle)', code: '' },
  { label: '@kubernetes/client-node (index)', code: keep('@kubernetes/client-node'), replace: false },
  { label: 'KubeConfig (dist/config.js) as published', code: keep('@kubernetes/client-node/dist/config.js', 'KubeConfig'), replace: false },
  { label: 'KubeConfig with gen/ and undici stubbed (shipped)', code: keep('@kubernetes/client-node/dist/config.js', 'KubeConfig') },
  { label: 'npm undici alone', code: keep('undici') },
  { label: 'src/kube (KubeClient, Informer)', code: "import { KubeClient } from './src/kube/client.ts'; import { Informer } from './src/kube/informer.ts'; globalThis.kept = [KubeClient, Informer];" },
  { label: 'prom-client', code: keep('prom-client') },
  { label: 'execa', code: keep('execa') },
  { label: 'systeminformation', code: keep('systeminformation') },
  { label: 'yaml', code: keep('yaml') },
  { label: 'ajv', code: keep('ajv') },
  { label: 'the scan command (src/cli/commands/scan.ts)', code: keep('./src/cli/commands/scan.ts') },
  { label: 'the agent command (src/cli/commands/agent.ts)', code: keep('./src/cli/commands/agent.ts') },
];

async function steadyRss(file: string, nodeFlags: string[], env: Record<string, string>): Promise<number> {
  const child = spawn(process.execPath, [...nodeFlags, file], { stdio: 'ignore', env: { PATH: process.env.PATH ?? '', ...env } });
  try {
    const samples: number[] = [];
    for (let i = 0; i < SECONDS * 2; i++) {
      await sleep(500);
      if (child.exitCode !== null) return NaN;
      samples.push((await sampleProcess(child.pid as number)).rssMiB);
    }
    return median(samples.slice(-SECONDS));
  } finally {
    child.kill('SIGKILL');
  }
}

export async function run(): Promise<void> {
  const tmp = await mkdtemp(path.join(tmpdir(), 'nta-imports-'));
  const shipped = await shippedAgentCommand();
  try {
    const configs = [
      { name: 'node', nodeFlags: [] as string[], env: {} as Record<string, string> },
      { name: `node ${shipped.nodeFlags.join(' ')} + DaemonSet env`, nodeFlags: shipped.nodeFlags, env: shipped.env },
    ];
    console.log(`each import alone, bundled, steady RSS (median of the last ${SECONDS / 2} s) in MiB; + = above the empty bundle`);
    console.log(`  ${'imported'.padEnd(52)} ${configs.map((c) => c.name.padStart(22)).join(' ')}`);
    const base: number[] = [];
    for (const [i, row] of ROWS.entries()) {
      const file = await bundleSnippet(`${row.code}\nsetInterval(() => {}, 1000);\n`, path.join(tmp, String(i)), row.replace ?? true);
      const cells: string[] = [];
      for (const [j, c] of configs.entries()) {
        const rss = await steadyRss(file, c.nodeFlags, c.env);
        if (i === 0) base[j] = rss;
        const text = Number.isNaN(rss) ? 'exits' : `${rss.toFixed(1)}${i === 0 ? '' : ` (+${(rss - (base[j] as number)).toFixed(1)})`}`;
        cells.push(text.padStart(22));
      }
      console.log(`  ${row.label.padEnd(52)} ${cells.join(' ')}`);
    }
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}
