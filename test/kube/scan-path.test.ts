// `scan` never talks to Kubernetes, so it must not load the Kubernetes client (nor client-node):
// a module-resolution hook in the CLI process lists what was loaded. `agent --help` is the control:
// there the hook must see the client load.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../../bin/node-tuning-advisor.js', import.meta.url));
const HOST = fileURLToPath(new URL('../fixtures/hosts/kubeadm-1.30', import.meta.url));
const HOOK = `data:text/javascript,${encodeURIComponent(`
import { registerHooks } from 'node:module';
registerHooks({ resolve(specifier, context, next) {
  const found = next(specifier, context);
  if (/\\/src\\/kube\\/|@kubernetes\\/client-node/.test(found.url)) process.stderr.write('LOADED ' + found.url + '\\n');
  return found;
} });`)}`;

function loaded(args: string[]): { code: number | null; modules: string[] } {
  const run = spawnSync(process.execPath, ['--import', HOOK, BIN, ...args], { encoding: 'utf8', env: { ...process.env, NODE_NAME: '' } });
  return { code: run.status, modules: run.stderr.split('\n').filter((l) => l.startsWith('LOADED ')) };
}

test('scan loads neither the Kubernetes client nor client-node; agent does', () => {
  const scan = loaded(['scan', '--host-root', HOST, '--output', 'json']);
  assert.ok(scan.code === 0 || scan.code === 1, `scan ran (exit ${scan.code})`);
  assert.deepEqual(scan.modules, []);
  const agent = loaded(['agent', '--help']);
  assert.equal(agent.code, 0);
  assert.ok(agent.modules.some((m) => m.includes('/src/kube/client.ts')), agent.modules.join('\n'));
  assert.ok(agent.modules.some((m) => m.includes('@kubernetes/client-node/dist/config.js')), agent.modules.join('\n'));
  assert.ok(!agent.modules.some((m) => /client-node\/dist\/index\.js/.test(m)), 'never the package index');
});
