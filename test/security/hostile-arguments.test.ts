// Issue 22 item 2: any local user or tenant can start a process named kube-scheduler with a long
// `--kube-api-qps=x (a)(a)…` argument. Its value reached shortReason (src/publish/finding-line.ts),
// whose parenthesis regex took cubic time: 4 000 groups, 69 s without an answer on /healthz. Now
// host values are bounded where they enter a reason (facts, quoted arguments) and shortening
// scans the text without backtracking. Both tests cap the time of code that used to block its
// thread: the property test in a worker, the real process's scan as a child process.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import fc from 'fast-check';
import { REPO } from '../helpers/manifests.ts';
import { requireTool } from '../helpers/tools.ts';

const NOBODY = 65534;
const CAP_MS = 20_000;
const PIECES = [' (a)', '(a)', '(', ')', ' (', ') ', ' ', ', ', '; ', ': ', 'a', '.', 'é', '\n', '(/proc/1/cmdline)'];

function capped<T>(run: (worker: Worker) => Promise<T>): Promise<T> {
  const worker = new Worker(path.join(import.meta.dirname, '../helpers/short-reason-worker.ts'));
  const timer = new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`not done within ${CAP_MS / 1000} s: super-linear`)), CAP_MS).unref());
  worker.unref(); // a worker stuck in a regex must not keep the test process alive
  return Promise.race([run(worker), timer]).finally(() => { void worker.terminate(); });
}

test('shortReason on long hostile strings: bounded output, done within the cap', async () => {
  const texts = fc.sample(fc.array(fc.constantFrom(...PIECES), { minLength: 2000, maxLength: 30_000 }).map((parts) =>
    `Cannot decide: scheduler.kubeAPIQPS is unknown: --kube-api-qps=x${parts.join('')} (/proc/42/cmdline) is not a number.`), { numRuns: 40, seed: 22 });
  texts.push(`--kube-api-qps=x ${'(a)'.repeat(40_000)}`, `--kube-api-qps=x${' (a)'.repeat(30_000)} (/proc/42/cmdline)`);
  const results = await capped((worker) => new Promise<{ reason: string; line: string; whole: number }[]>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
    worker.postMessage(texts);
  }));
  for (const r of results) {
    assert.ok(Buffer.byteLength(r.reason) <= 100, r.reason);
    assert.ok(Buffer.byteLength(r.line) <= 138, r.line);
    assert.ok(r.whole <= 2048, `the unshortened reason is bounded too: ${r.whole}`);
  }
});

// In a PID namespace of its own (with its own /proc) the attacker's kube-scheduler is the only one:
// the real ones of other control planes on the machine cannot win the lookup. $1 is the value, $2
// the user: a nobody's process is refused as a component (issue 22 item 9), so only root's (bash,
// root's binary under another name) reaches the text the value would blow up.
const IN_NAMESPACE = `
as=""; [ "$2" = nobody ] && as="setpriv --reuid ${NOBODY} --regid ${NOBODY} --clear-groups --"
$as bash -c 'exec -a kube-scheduler bash -c "sleep 120; :" "$0" "$1"' "--kube-api-qps=$1" "--kube-api-burst=$1" &
until grep -qs -- --kube-api-qps /proc/[0-9]*/cmdline; do sleep 0.05; done
shift 2
exec "$@"`;

for (const user of ['nobody', 'root'] as const) {
  test(`a root scan with ${user}'s kube-scheduler --kube-api-qps=x (a) (a)… ends${user === 'root' ? ', and quotes a bounded value' : ' (the process is refused)'}`, { timeout: 90_000 }, async (t) => {
    const setpriv = requireTool(t, 'setpriv', 'util-linux');
    const unshare = requireTool(t, 'unshare', 'util-linux');
    if (!setpriv || !unshare) return;
    if (process.getuid?.() !== 0) return t.skip('needs root: a PID namespace with its own /proc, and a root scan');
    const value = `x${' (a)'.repeat(12_000)}`;
    const scan = spawn(unshare, ['--pid', '--fork', '--kill-child', '--mount-proc', '--', 'bash', '-c', IN_NAMESPACE, 'attack', value, user,
      process.execPath, path.join(REPO, 'bin/node-tuning-advisor.js'), 'scan', '--fail-on', 'never'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    scan.stdout.on('data', (d: Buffer) => { out += d.toString(); });
    scan.stderr.on('data', (d: Buffer) => { out += d.toString(); });
    const timer = setTimeout(() => scan.kill('SIGKILL'), CAP_MS * 2);
    const code = await new Promise<number | null>((resolve) => scan.once('exit', (c) => resolve(c)));
    clearTimeout(timer);
    assert.equal(code, 0, `the scan did not end by itself within ${CAP_MS * 2 / 1000} s (killed) or failed:\n${out.slice(-2000)}`);
    if (user === 'root') assert.match(out, /kube-api-qps=x \(a/, `the scan saw the argument and said so:\n${out}`);
    assert.doesNotMatch(out, /( \(a\)){40}/, 'no more of the value than a bounded quote');
  });
}
