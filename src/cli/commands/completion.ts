// `completion bash|zsh`: a shell completion script for the commands, their subcommands and flags,
// the --output formats each takes, and the bundled rule ids (explain, --only). The flags are read
// from each command's own --help text, so the script cannot drift from what the commands accept.
import { PassThrough } from 'node:stream';
import { loadRuleSet } from '../../rules/rule-set.ts';
import { EXIT_OK, UsageError, type Io } from '../io.ts';
import { didYouMean } from '../../text/suggest.ts';

export const COMPLETION_USAGE = `Usage: node-tuning-advisor completion bash|zsh

Prints a completion script for the shell: commands, subcommands, flags, --output formats and rule ids.
  bash:  source <(node-tuning-advisor completion bash)      (or save it under /etc/bash_completion.d/)
  zsh:   source <(node-tuning-advisor completion zsh)       (after compinit; or save it as _node-tuning-advisor in $fpath)
`;

/** Command → subcommands whose help lists the flags (the command's own help otherwise). */
const SUBCOMMANDS: Record<string, string[]> = { rules: ['lint', 'list'], probe: ['fsync'], measure: ['pod-startup', 'show'] };
const FORMATS = ['table', 'text', 'json', 'yaml', 'markdown', 'html'];
/** Flags whose value is a path: the shell completes file names. */
const PATH_FLAGS = ['--host-root', '--rules', '--dir', '--kubeconfig', '--save', '--compare', '--html'];

export interface CompletionModel {
  commands: string[];
  subcommands: Record<string, string[]>;
  flags: Record<string, string[]>;
  formats: Record<string, string[]>;
  ruleIds: string[];
}

type Main = (argv: string[], io: Io) => Promise<number>;

async function helpOf(main: Main, argv: string[]): Promise<string> {
  const stdout = new PassThrough();
  const chunks: Buffer[] = [];
  stdout.on('data', (c: Buffer) => chunks.push(c));
  await main(argv, { stdout, stderr: new PassThrough(), env: {} });
  return Buffer.concat(chunks).toString('utf8');
}

/** "  -o, --output FORMAT   table (default), json, yaml" → ['-o', '--output'], and the formats named. */
export function flagsIn(help: string): { flags: string[]; formats: string[] } {
  const flags = new Set<string>();
  let formats: string[] = [];
  const lines = help.split('\n');
  lines.forEach((line, i) => {
    const m = /^\s{2,}(?:(-[a-zA-Z]), )?(--[a-z][a-z0-9-]*)/.exec(line);
    if (!m) return;
    if (m[1]) flags.add(m[1]);
    flags.add(m[2] as string);
    if (m[2] !== '--output') return;
    // The flag's description, continuation lines included (indented further, no flag of their own).
    let text = line;
    for (let n = i + 1; n < lines.length && /^\s{6,}[^\s-]/.test(lines[n] as string); n++) text += ` ${lines[n]}`;
    formats = FORMATS.filter((f) => new RegExp(`\\b${f}\\b`).test(text));
  });
  return { flags: [...flags], formats };
}

export async function completionModel(main: Main, commands: string[]): Promise<CompletionModel> {
  const model: CompletionModel = { commands, subcommands: SUBCOMMANDS, flags: {}, formats: {}, ruleIds: [] };
  for (const command of commands) {
    const help = await helpOf(main, [command, ...(SUBCOMMANDS[command] ? [SUBCOMMANDS[command][0] as string] : []), '--help']);
    const { flags, formats } = flagsIn(help);
    model.flags[command] = flags;
    model.formats[command] = formats;
  }
  model.ruleIds = (await loadRuleSet({})).map((rule) => rule.id).sort();
  return model;
}

const words = (list: string[]): string => list.join(' ');

export function bashScript(model: CompletionModel): string {
  const perCommand = model.commands.map((c) => `    ${c}) flags="${words(model.flags[c] ?? [])}"; formats="${words(model.formats[c] ?? [])}"; subs="${words(model.subcommands[c] ?? [])}";;`);
  return `# bash completion for node-tuning-advisor (node-tuning-advisor completion bash)
_node_tuning_advisor() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="\${COMP_WORDS[COMP_CWORD-1]}" cmd="\${COMP_WORDS[1]}"
  local flags="" formats="" subs="" rules="${words(model.ruleIds)}"
  if [ "$COMP_CWORD" -eq 1 ]; then COMPREPLY=( $(compgen -W "${words(model.commands)}" -- "$cur") ); return; fi
  case "$cmd" in
${perCommand.join('\n')}
  esac
  case "$prev" in
    ${PATH_FLAGS.join('|')}) COMPREPLY=( $(compgen -f -- "$cur") ); return;;
    -o|--output) COMPREPLY=( $(compgen -W "$formats" -- "$cur") ); return;;
    --only) COMPREPLY=( $(compgen -W "$rules" -- "$cur") ); return;;
  esac
  if [ "$COMP_CWORD" -eq 2 ] && [ -n "$subs" ]; then COMPREPLY=( $(compgen -W "$subs" -- "$cur") ); return; fi
  if [ "$cmd" = explain ] && [ "$COMP_CWORD" -eq 2 ]; then COMPREPLY=( $(compgen -W "$rules" -- "$cur") ); return; fi
  COMPREPLY=( $(compgen -W "$flags" -- "$cur") )
}
complete -F _node_tuning_advisor node-tuning-advisor
`;
}

export function zshScript(model: CompletionModel): string {
  const perCommand = model.commands.map((c) => `    ${c}) flags=(${words(model.flags[c] ?? [])}); formats=(${words(model.formats[c] ?? [])}); subs=(${words(model.subcommands[c] ?? [])});;`);
  return `#compdef node-tuning-advisor
# zsh completion for node-tuning-advisor (node-tuning-advisor completion zsh)
_node_tuning_advisor() {
  local cmd=\${words[2]} prev=\${words[CURRENT-1]}
  local -a flags formats subs rules
  rules=(${words(model.ruleIds)})
  if (( CURRENT == 2 )); then compadd -- ${words(model.commands)}; return; fi
  case $cmd in
${perCommand.join('\n')}
  esac
  case $prev in
    ${PATH_FLAGS.join('|')}) _files; return;;
    -o|--output) compadd -- $formats; return;;
    --only) compadd -- $rules; return;;
  esac
  if (( CURRENT == 3 )) && (( \${#subs} > 0 )); then compadd -- $subs; return; fi
  if [[ $cmd == explain ]] && (( CURRENT == 3 )); then compadd -- $rules; return; fi
  compadd -- $flags
}
if (( $+functions[compdef] )); then compdef _node_tuning_advisor node-tuning-advisor; fi
`;
}

export async function completionCommand(args: string[], io: Io, main: Main, commands: string[]): Promise<number> {
  const [shell] = args;
  if (shell === undefined || shell === '--help' || shell === '-h') {
    io.stdout.write(COMPLETION_USAGE);
    return shell === undefined ? 2 : EXIT_OK;
  }
  if (shell !== 'bash' && shell !== 'zsh') throw new UsageError(`no completion for "${shell}"${didYouMean(shell, ['bash', 'zsh'])}: use bash or zsh`);
  const model = await completionModel(main, commands);
  io.stdout.write(shell === 'bash' ? bashScript(model) : zshScript(model));
  return EXIT_OK;
}
