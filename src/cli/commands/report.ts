// `report`: the cluster view. Reads what every node's agent published plus the cluster-scope facts,
// with the caller's credentials and read-only requests only.
import { stringify } from 'yaml';
import { failingRules } from '../../cluster/nodes.ts';
import { runClusterReport, type ClusterReport } from '../../cluster/report.ts';
import { renderClusterMarkdown, renderClusterTable } from '../../publish/cluster-report.ts';
import type { Severity } from '../../report/types.ts';
import { terminalSafe } from '../terminal-safe.ts';
import { EXIT_FINDINGS, EXIT_OK, oneOf, parseFlags, terminalWidth, useColor, type Io } from '../io.ts';
import { KUBE_FLAGS, KUBE_FLAGS_USAGE, clusterApiFrom } from '../kube-flags.ts';

export const REPORT_USAGE = `Usage: node-tuning-advisor report [flags]

The cluster view: every node's score, grade and failing rules (from the agents' annotations),
failing rules grouped across nodes, then the cluster-scope checks (Tekton, CSI sidecars, Events split).

Flags:
${KUBE_FLAGS_USAGE}  -l, --selector SEL     only nodes matching this label selector (e.g. node-role.kubernetes.io/worker)
  -o, --output FORMAT    table (default: fits the terminal, 80 columns when piped), json, yaml, markdown
  -v, --verbose          table: the cluster checks' evidence, full fix and references
  --fail-on LEVEL        exit 1 when a rule fails at or above: warning, critical (default), never
  --rules PATH           extra rule directory or file; repeatable (cluster rules: scope: cluster)
  --no-bundled-rules     use only the --rules given
  -h, --help             this help

Reads only: one LIST each of nodes, configmaps (feature-flags), pods, pipelineruns.tekton.dev and,
when PipelineRuns use PVC workspaces, persistentvolumeclaims, storageclasses and csidrivers; plus the
log tail of each CSI sidecar (≤ 5 per kind) and of Tekton's controller. Never one request per node.
Exit codes: 0 nothing failed at or above --fail-on; 1 something did; 2 bad flags, kubeconfig or no access.
`;

const OUTPUTS = ['table', 'json', 'yaml', 'markdown'] as const;
/** The cluster table's width when piped (into a ticket, a CI log) and $COLUMNS is not set. */
const PIPED_COLUMNS = 80;
const FAIL_ON = ['warning', 'critical', 'never'] as const;
const RANK: Record<Severity, number> = { info: 0, warning: 1, critical: 2 };

/** Severities failing anywhere: on a node (as its agent reports) or in the cluster checks. */
export function clusterExitCode(report: ClusterReport, failOn: (typeof FAIL_ON)[number]): number {
  if (failOn === 'never') return EXIT_OK;
  const severities = [
    ...report.nodes.flatMap((row) => failingRules(row).map((f) => f.severity)),
    ...report.cluster.findings.filter((f) => f.status === 'fail').map((f) => f.severity),
  ];
  return severities.some((s) => RANK[s] >= RANK[failOn]) ? EXIT_FINDINGS : EXIT_OK;
}

export async function reportCommand(args: string[], io: Io): Promise<number> {
  const { values } = parseFlags(args, {
    ...KUBE_FLAGS,
    selector: { type: 'string', short: 'l' },
    output: { type: 'string', short: 'o' },
    'fail-on': { type: 'string' },
    rules: { type: 'string', multiple: true },
    'no-bundled-rules': { type: 'boolean' },
    verbose: { type: 'boolean', short: 'v' },
  }, 'report');
  if (values.help) {
    io.stdout.write(REPORT_USAGE);
    return EXIT_OK;
  }
  const output = oneOf('--output', values.output, OUTPUTS, 'table');
  const failOn = oneOf('--fail-on', values['fail-on'], FAIL_ON, 'critical');
  const api = clusterApiFrom(values, io.env);
  let report;
  try {
    // Everything in it was read from the API server: no control character reaches the terminal.
    report = terminalSafe(await runClusterReport(api, {
      ...(values.selector ? { selector: values.selector } : {}),
      ruleLocations: values.rules ?? [],
      bundledRules: !values['no-bundled-rules'],
    }));
  } finally {
    await api.close();
  }
  if (output === 'json') io.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  else if (output === 'yaml') io.stdout.write(stringify(report, { lineWidth: 0 }));
  else if (output === 'markdown') io.stdout.write(renderClusterMarkdown(report));
  else io.stdout.write(renderClusterTable(report, { width: terminalWidth(io, PIPED_COLUMNS), color: useColor(io), verbose: values.verbose === true }));
  return clusterExitCode(report, failOn);
}
