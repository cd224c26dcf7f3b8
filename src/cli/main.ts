// Command dispatch. Every error a user can cause (an InputError) ends here as one clear sentence and
// exit code 2; any other error is a bug: one line, exit 3, and a hint to report it.
import { createRequire } from 'node:module';
import { InputError } from '../input-error.ts';
import { EXIT_BUG, EXIT_INPUT, EXIT_OK, type Command, type Io } from './io.ts';
import { oneLine } from '../text/controls.ts';
import { stripControls } from '../text/terminal.ts';
import { didYouMean } from '../text/suggest.ts';

/** The hidden command the kubectl plugin's bin runs: `kubectl node-tuning X` = `node-tuning-advisor kubectl-plugin X`. */
export const PLUGIN_COMMAND = 'kubectl-plugin';

/**
 * Command name → its module, imported only when that command runs: `--version` loads nothing,
 * `scan` never loads the Kubernetes client or prom-client. In the bundle each command is a chunk
 * of its own (scripts/bundle.ts; test/unit/bundle.test.ts checks what each command loads).
 */
const COMMANDS: Record<string, Command> = {
  scan: async (args, io) => (await import('./commands/scan.ts')).scanCommand(args, io),
  facts: async (args, io) => (await import('./commands/facts.ts')).factsCommand(args, io),
  rules: async (args, io) => (await import('./commands/rules.ts')).rulesCommand(args, io),
  explain: async (args, io) => (await import('./commands/explain.ts')).explainCommand(args, io),
  probe: async (args, io) => (await import('./commands/probe.ts')).probeCommand(args, io),
  agent: async (args, io) => (await import('./commands/agent.ts')).agentCommand(args, io),
  report: async (args, io) => (await import('./commands/report.ts')).reportCommand(args, io),
  describe: async (args, io) => (await import('./commands/describe.ts')).describeCommand(args, io),
  measure: async (args, io) => (await import('./commands/measure.ts')).measureCommand(args, io),
  cleanup: async (args, io) => (await import('./commands/cleanup.ts')).cleanupCommand(args, io),
  completion: async (args, io) => (await import('./commands/completion.ts')).completionCommand(args, io, main, listedCommands()),
  // What `kubectl node-tuning …` runs (the kubectl-node_tuning bin); not listed in the usage.
  [PLUGIN_COMMAND]: async (args, io) => (await import('./commands/kubectl-plugin.ts')).kubectlPluginCommand(args, io),
};

/** The commands a user types (the plugin's hidden one left out). */
function listedCommands(): string[] {
  return Object.keys(COMMANDS).filter((c) => c !== PLUGIN_COMMAND);
}

export const USAGE = `Usage: node-tuning-advisor <command> [flags]

Finds the node settings behind slow pod start-up, with evidence and the fix.

Commands:
  scan              check this host (or --host-root DIR) against the rules
  facts             print the collected facts with their sources (JSON)
  rules lint|list   check rule files / list the rules in effect
  explain RULE-ID   show what a rule checks and how to fix it (--host-root DIR: its evidence there)
  probe fsync       time fdatasync on a directory the way etcd's fio test does
  agent             publish to this node's Node object on an interval (annotations, Events, metrics)
  report            the cluster view: all nodes' results, worst first, plus cluster-scope checks
  describe NODE     one node's findings as its agent published them, and its Events
  measure           pod-startup: N pods at once on a node, each phase timed; before/after a fix
  cleanup           remove every annotation, label and heartbeat the agents wrote (uninstall)
  completion SHELL  bash or zsh completion script (commands, flags, formats, rule ids)

Run "node-tuning-advisor <command> --help" for a command's flags.
`;

function version(): string {
  const pkg = createRequire(import.meta.url)('../../package.json') as { version: string };
  return `node-tuning-advisor ${pkg.version} (Node ${process.version})\n`;
}

// stdin only when asked for: touching process.stdin opens it, which no other command needs.
const processIo: Io = { stdout: process.stdout, stderr: process.stderr, env: process.env, get stdin() { return process.stdin; } };

export async function main(argv: string[], io: Io = processIo): Promise<number> {
  const [name, ...args] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    io.stdout.write(USAGE);
    return name === undefined ? EXIT_INPUT : EXIT_OK;
  }
  if (name === '--version' || name === 'version' || (name === PLUGIN_COMMAND && (args[0] === 'version' || args[0] === '--version'))) {
    io.stdout.write(version());
    return EXIT_OK;
  }
  const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (!command) {
    const hint = didYouMean(name, [...listedCommands(), 'help', 'version']);
    io.stderr.write(`node-tuning-advisor: unknown command "${stripControls(name)}"${stripControls(hint)}\n\n${USAGE}`);
    return EXIT_INPUT;
  }
  const who = stripControls(name === PLUGIN_COMMAND ? `kubectl node-tuning${args[0] ? ` ${args[0]}` : ''}` : `node-tuning-advisor ${name}`);
  try {
    return await command(args, io);
  } catch (error) {
    if (error instanceof InputError) {
      io.stderr.write(`${who}: ${stripControls(error.message)}\n`);
      return EXIT_INPUT;
    }
    // Anything but bad input is a bug: one line, exit 3 (not 1, which means a rule failed), and where to report it.
    io.stderr.write(`${who}: internal error: ${oneLine((error as Error)?.message ?? String(error))} (a bug: please report it with the command line; DEBUG=1 prints the stack)\n`);
    if (io.env.DEBUG) io.stderr.write(`${(error as Error)?.stack ?? ''}\n`);
    return EXIT_BUG;
  }
}
