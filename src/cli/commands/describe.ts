// `describe NODE` (`kubectl node-tuning describe NODE`): one node's findings as its agent published
// them on the Node, and the agent's Events about it. Two read requests; no scan.
import { stringify } from 'yaml';
import { readNodeAdvice } from '../../cluster/node-advice.ts';
import { renderNodeView } from '../../publish/terminal/node-view.ts';
import { loadRuleSet } from '../../rules/rule-set.ts';
import { EXIT_FINDINGS, EXIT_INPUT, EXIT_OK, oneOf, parseFlags, terminalWidth, UsageError, useColor, type Io } from '../io.ts';
import { AGENT_NAMESPACE_FLAG, AGENT_NAMESPACE_USAGE, KUBE_FLAGS, KUBE_FLAGS_USAGE, clusterApiFrom, namespaceFlag } from '../kube-flags.ts';
import { terminalSafe } from '../../text/terminal.ts';

export const DESCRIBE_USAGE = `Usage: node-tuning-advisor describe NODE [flags]

One node's findings as its agent published them (the node-tuning-advisor.io annotations), in the
layout of scan's view, whether its agent's heartbeat still vouches for them (STALE when the
heartbeat is older than 3 periods or missing), and the agent's Events about the node, newest first.

Flags:
${KUBE_FLAGS_USAGE}${AGENT_NAMESPACE_USAGE}  -o, --output FORMAT    table (default), json, yaml
  -h, --help             this help

Reads only: GET the Node, GET its heartbeat Lease (when it has annotations), LIST Events in "default" (field selector on the node and our component).
Exit codes: 0 nothing fails on the node; 1 a rule fails there; 2 bad flags, kubeconfig, node or access.
`;

export async function describeCommand(args: string[], io: Io, program = 'node-tuning-advisor'): Promise<number> {
  const { values, positionals } = parseFlags(args, { ...KUBE_FLAGS, ...AGENT_NAMESPACE_FLAG, output: { type: 'string', short: 'o' } }, 'describe');
  if (values.help) {
    io.stdout.write(DESCRIBE_USAGE);
    return EXIT_OK;
  }
  if (positionals.length !== 1) throw new UsageError(`describe takes one node name (got ${positionals.length}); see: kubectl get nodes`);
  const output = oneOf('--output', values.output, ['table', 'json', 'yaml'] as const, 'table');
  const agentNamespace = namespaceFlag('--agent-namespace', values['agent-namespace']);
  // Everything in it was read from the API server: no control character reaches the terminal.
  const api = clusterApiFrom(values, io.env);
  let advice;
  try {
    advice = terminalSafe(await readNodeAdvice(api, positionals[0] as string, agentNamespace));
  } finally {
    await api.close();
  }
  if (output === 'json') io.stdout.write(`${JSON.stringify(advice, null, 2)}\n`);
  else if (output === 'yaml') io.stdout.write(stringify(advice, { lineWidth: 0 }));
  else {
    // Titles and categories come from the bundled rules; a rule they do not know shows its id only.
    const rules = new Map((await loadRuleSet({ scope: 'node' })).map((r) => [r.id, { title: r.title, category: r.category }]));
    io.stdout.write(renderNodeView(advice, (id) => rules.get(id), { width: terminalWidth(io), color: useColor(io), now: new Date(), program }));
  }
  if (advice.agent !== 'ok') return advice.agent === 'none' ? EXIT_OK : EXIT_INPUT;
  return (advice.report?.counts.fail ?? 0) > 0 ? EXIT_FINDINGS : EXIT_OK;
}
