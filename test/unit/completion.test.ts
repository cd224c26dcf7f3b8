// `completion bash|zsh` sourced into the real shells (issue 24), and "did you mean" for commands,
// flags, subcommands and rule ids.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { runCli } from '../helpers/cli.ts';
import { requireTool } from '../helpers/tools.ts';

const run = promisify(execFile);

async function script(t: import('node:test').TestContext, shell: 'bash' | 'zsh'): Promise<string> {
  const out = await runCli(['completion', shell]);
  assert.equal(out.code, 0, out.stderr);
  const dir = await mkdtemp(path.join(tmpdir(), `nta-completion-${shell}-`));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const file = path.join(dir, `completion.${shell}`);
  await writeFile(file, out.stdout);
  return file;
}

test('bash: commands, subcommands, flags, --output formats and rule ids complete', async (t) => {
  const bash = requireTool(t, 'bash', 'bash');
  if (!bash) return;
  const file = await script(t, 'bash');
  const complete = async (...words: string[]): Promise<string[]> => {
    const quoted = words.map((w) => `'${w}'`).join(' ');
    const { stdout } = await run(bash, ['-c', `source '${file}'; COMP_WORDS=(node-tuning-advisor ${quoted}); COMP_CWORD=${words.length}; _node_tuning_advisor; printf '%s\\n' "\${COMPREPLY[@]}"; complete -p node-tuning-advisor`]);
    return stdout.trim().split('\n');
  };
  const first = await complete('sc');
  assert.deepEqual(first, ['scan', 'complete -F _node_tuning_advisor node-tuning-advisor']);
  assert.deepEqual((await complete('scan', '--ou')).slice(0, -1), ['--output']);
  assert.deepEqual((await complete('scan', '--output', '')).slice(0, -1), ['table', 'json', 'yaml', 'markdown']);
  assert.deepEqual((await complete('explain', '--output', '')).slice(0, -1), ['table', 'text', 'json', 'yaml']);
  assert.deepEqual((await complete('explain', 'kernel-t')).slice(0, -1), ['kernel-tick-rate']);
  assert.deepEqual((await complete('scan', '--only', 'etcd-f')).slice(0, -1), ['etcd-fsync-latency']);
  assert.deepEqual((await complete('rules', 'l')).slice(0, -1), ['lint', 'list']);
  assert.deepEqual((await complete('measure', '')).slice(0, -1), ['pod-startup', 'show']);
  assert.deepEqual((await complete('report', '--output', '')).slice(0, -1), ['table', 'json', 'yaml', 'markdown', 'html']);
  assert.ok((await complete('report', '--')).includes('--kubeconfig'));
  assert.ok((await complete('agent', '--')).includes('--probe-interval'));
});

test('zsh: the script loads after compinit, registers itself and offers the same words', async (t) => {
  const zsh = requireTool(t, 'zsh', 'zsh');
  if (!zsh) return;
  const file = await script(t, 'zsh');
  const home = path.dirname(file);
  const complete = async (...words: string[]): Promise<string[]> => {
    const quoted = words.map((w) => `'${w}'`).join(' ');
    // compadd is stubbed to print its candidates (the real one needs the line editor); the shell's own syntax and logic run.
    const { stdout } = await run(zsh, ['-f', '-c', `autoload -U compinit; compinit -u -D; source '${file}'; print -r -- "registered \${_comps[node-tuning-advisor]}"; `
      + `compadd() { [[ $1 == -- ]] && shift; print -l -- "$@" }; _files() { print FILES }; words=(node-tuning-advisor ${quoted}); CURRENT=${words.length + 1}; _node_tuning_advisor`], { env: { HOME: home, PATH: process.env.PATH } });
    const lines = stdout.trim().split('\n');
    assert.equal(lines[0], 'registered _node_tuning_advisor');
    return lines.slice(1);
  };
  assert.ok((await complete('')).includes('completion'));
  assert.deepEqual(await complete('scan', '--output', ''), ['table', 'json', 'yaml', 'markdown']);
  assert.ok((await complete('explain', '')).includes('kernel-tick-rate'));
  assert.deepEqual(await complete('scan', '--host-root', ''), ['FILES']);
  assert.deepEqual(await complete('probe', ''), ['fsync']);
  assert.ok((await complete('probe', 'fsync', '--')).includes('--block-size'));
});

test('did you mean: commands, flags, subcommands, rule ids; a shell without completion exits 2', async () => {
  const command = await runCli(['sacn']);
  assert.equal(command.code, 2);
  assert.match(command.stderr, /^node-tuning-advisor: unknown command "sacn" \(did you mean "scan"\?\)\n/);
  const flag = await runCli(['scan', '--outptu', 'json']);
  assert.equal(flag.code, 2);
  assert.match(flag.stderr, /Unknown option '--outptu' \(did you mean "--output"\?\)/);
  assert.doesNotMatch((await runCli(['scan', '--zzz'])).stderr, /did you mean/, 'nothing close: no guess');
  assert.match((await runCli(['rules', 'lsit'])).stderr, /unknown rules subcommand "lsit" \(did you mean "list"\?\)/);
  assert.match((await runCli(['explain', 'kernel-tick-rat'])).stderr, /no rule "kernel-tick-rat" \(did you mean "kernel-tick-rate"\?\)/);
  assert.match((await runCli(['explain', 'governor'])).stderr, /no rule "governor" \(did you mean "cpu-governor"\?\)/, 'a part of one id');
  assert.match((await runCli(['explain', 'etcd'])).stderr, /no rule "etcd" \(did you mean one of: etcd-[a-z-]+, etcd-[a-z-]+, etcd-[a-z-]+, … \d+ more\?\)/, 'a part of many ids');
  assert.doesNotMatch((await runCli(['explain', 'et'])).stderr, /did you mean/, 'two letters: no guess');
  assert.match((await runCli(['scan', '--only', 'cpu-govrnor'])).stderr, /--only names unknown rule ids: cpu-govrnor \(did you mean "cpu-governor"\?\)/);
  const fish = await runCli(['completion', 'fish']);
  assert.equal(fish.code, 2);
  assert.match(fish.stderr, /no completion for "fish": use bash or zsh/);
});
