// Issue 17 item 1: a root `scan` must never execute a path taken from the process table. An
// unprivileged user runs `exec -a /tmp/x/kubelet sleep 120`; the planted /tmp/x/kubelet would write a
// marker file if anything ran it. The scan must find the "kubelet" and still not run it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, chown, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { runCli } from '../helpers/cli.ts';
import { requireTool } from '../helpers/tools.ts';

const NOBODY = 65534;

async function processWithArgv0(argv0: string, timeoutMs = 10_000): Promise<number | undefined> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    for (const pid of await readdir('/proc')) {
      if (!/^\d+$/.test(pid)) continue;
      const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
      if (cmdline.split('\0')[0] === argv0) return Number(pid);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return undefined;
}

test('a process named kubelet by an unprivileged user is not executed by a root scan', async (t) => {
  const setpriv = requireTool(t, 'setpriv', 'util-linux');
  if (!setpriv) return;
  if (process.getuid?.() !== 0) return t.skip('needs root: the attack is a root scan running a file chosen by nobody');
  const dir = await mkdtemp(path.join(os.tmpdir(), 'nta-planted-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  await chmod(dir, 0o777);
  const marker = path.join(dir, 'ran-as-root');
  const planted = path.join(dir, 'kubelet');
  await writeFile(planted, `#!/bin/sh\nid -u > ${marker}\necho "Kubernetes v1.99.0"\n`);
  await chmod(planted, 0o755);
  await chown(planted, NOBODY, NOBODY);

  const attacker = spawn(setpriv, ['--reuid', String(NOBODY), '--regid', String(NOBODY), '--clear-groups', '--', 'bash', '-c', `exec -a ${planted} sleep 120`], { stdio: 'ignore' });
  t.after(() => { attacker.kill('SIGKILL'); });
  const attackerPid = await processWithArgv0(planted);
  assert.ok(attackerPid, 'the attacker process shows up in /proc with argv[0] = the planted path');

  const scan = await runCli(['scan', '-o', 'json', '--fail-on', 'never']);
  assert.equal(scan.code, 0, scan.stderr);
  assert.equal(existsSync(marker), false, `the scan executed ${planted} (as uid ${existsSync(marker) ? (await readFile(marker, 'utf8')).trim() : '?'})`);
  const facts = JSON.parse(scan.stdout).facts;
  // nobody's process named kubelet runs /usr/bin/sleep: it is refused (issue 22 item 9), never read as the kubelet.
  assert.notEqual(facts['kubelet.commandSource']?.value, `/proc/${attackerPid}/cmdline`);
  assert.notEqual(facts['kubelet.version']?.value, '1.99.0');
  assert.doesNotMatch(JSON.stringify(facts['kubelet.version'] ?? null), /command:/);
});
