// `kubectl node-tuning …`: kubectl runs `kubectl-node_tuning` from the PATH with the arguments after
// the plugin name. Only argument translation: each subcommand is the CLI command of the same name.
import { EXIT_INPUT, EXIT_OK, UsageError, type Io } from '../io.ts';

export const PLUGIN = 'kubectl node-tuning';

export const PLUGIN_USAGE = `Usage: ${PLUGIN} <command> [flags]

node-tuning-advisor as a kubectl plugin: what the agents published on the nodes, and this machine's scan.

Commands:
  report            every node's score and failing rules, worst first, plus the cluster checks
  describe NODE     one node's findings (its annotations) and the agent's Events about it
  scan              check this machine (run it on a node) against the rules
  explain RULE      what a rule checks, its parameters, fix and references
  measure           pod-startup --node NODE: N pods at once on the node, each phase timed, --compare
  cleanup           remove every annotation, label and heartbeat the agents wrote (after uninstalling them)
  version           the plugin's version

Flags (report, describe, measure, cleanup): --kubeconfig FILE, --context NAME (as kubectl; $KUBECONFIG is read too),
-o/--output table|json|yaml. Each command's own flags: ${PLUGIN} <command> --help.
`;

const KUBE_FLAG = /^--(kubeconfig|context)(=|$)/;

export async function kubectlPluginCommand(args: string[], io: Io): Promise<number> {
  const [sub, ...rest] = args;
  switch (sub) {
    // As in the CLI's command table: each command's modules load when it runs (the collectors only for scan and explain, the Kubernetes client only for the cluster commands).
    case 'report': return (await import('./report.ts')).reportCommand(rest, io);
    case 'describe': return (await import('./describe.ts')).describeCommand(rest, io, PLUGIN);
    case 'measure': return (await import('./measure.ts')).measureCommand(rest, io);
    case 'cleanup': return (await import('./cleanup.ts')).cleanupCommand(rest, io);
    case 'explain': return (await import('./explain.ts')).explainCommand(rest, io);
    case 'scan': {
      const flag = rest.find((arg) => KUBE_FLAG.test(arg));
      if (flag) throw new UsageError(`scan reads this machine, not a cluster, so ${flag.split('=')[0]} does not apply: run it on the node, or see what the node's agent published with "${PLUGIN} describe NODE"`);
      return (await import('./scan.ts')).scanCommand(rest, io);
    }
    case undefined: case '-h': case '--help': case 'help':
      io.stdout.write(PLUGIN_USAGE);
      return sub === undefined ? EXIT_INPUT : EXIT_OK;
    default:
      throw new UsageError(`unknown command "${sub}": use report, describe NODE, scan, explain RULE, measure pod-startup or cleanup (${PLUGIN} --help)`);
  }
}
