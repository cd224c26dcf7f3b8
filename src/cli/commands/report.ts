// `report`: the cluster view. Reads what every node's agent published plus the cluster-scope facts,
// with the caller's credentials and read-only requests only: lists paged, one request at a time,
// under the client's own rate limit.
import { DEFAULT_PAGE_SIZE, type ClusterApi } from '../../cluster/api.ts';
import { CLUSTER_REPORT_SCHEMA_VERSION, runClusterReport, type ClusterReport } from '../../cluster/report.ts';
import { TokenBucket } from '../../kube/backoff.ts';
import { ClusterReportStream } from '../../publish/cluster-stream.ts';
import { renderClusterMarkdown, renderClusterTable } from '../../publish/cluster-report.ts';
import { renderClusterPage } from '../../publish/cluster-page.ts';
import { SEVERITIES, type Severity } from '../../report/types.ts';
import { stripControls, terminalSafe } from '../../text/terminal.ts';
import { EXIT_FINDINGS, EXIT_OK, numberFlag, oneOf, parseFlags, terminalWidth, useColor, type Io } from '../io.ts';
import { AGENT_NAMESPACE_FLAG, AGENT_NAMESPACE_USAGE, KUBE_FLAGS, KUBE_FLAGS_USAGE, clusterApiFrom, namespaceFlag } from '../kube-flags.ts';
import { pagingProgress } from '../paging-progress.ts';

/** The report's own client rate limit (requests per second; burst twice that). */
export const DEFAULT_REPORT_QPS = 20;
const DEFAULT_LIMIT = 20;

export const REPORT_USAGE = `Usage: node-tuning-advisor report [flags]

The cluster view: the worst nodes' score, grade and failing rules (from the
agents' annotations), the other nodes grouped, failing rules counted across
nodes by role, then the cluster-scope checks (Tekton, CSI sidecars, Events split).
A node whose agent's heartbeat is older than 3 periods, or missing, is STALE:
its last grade is shown, not counted with the current ones.

Flags:
${KUBE_FLAGS_USAGE}${AGENT_NAMESPACE_USAGE}  -l, --selector SEL     only nodes matching this label selector (e.g. node-role.kubernetes.io/worker)
  -o, --output FORMAT    table (default: fits the terminal, 100 columns when piped), markdown,
                         html (one self-contained page: grades, failing rules by node count,
                         the worst nodes with the fix, each rule explained; redirect it to a
                         file), json or yaml (every node, streamed as it is read)
  -v, --verbose          table: the cluster checks' evidence, full fix and references
  --limit N              nodes listed one by one, worst first (default ${DEFAULT_LIMIT}); the rest grouped
  --all                  list every node (table, markdown, html)
  --fail-on LEVEL        exit 1 when a rule fails at or above: warning, critical (default), never
  --page-size N          items per LIST request at most (default ${DEFAULT_PAGE_SIZE}; fewer when items
                         are large: pages stay near 768 KiB); 0: each list in one response
  --qps N                requests per second at most (default ${DEFAULT_REPORT_QPS}, bursts of twice that)
  --rules PATH           extra rule directory or file; repeatable (cluster rules: scope: cluster)
  --no-bundled-rules     use only the --rules given
  -h, --help             this help

Reads only, lists one request at a time: the heartbeat Leases in the agents'
namespace; nodes as metadata (labels and annotations); ConfigMaps named
feature-flags; PipelineRuns as metadata, then the 50 newest in full;
Deployments, StatefulSets and DaemonSets (to find Tekton's controller and
the CSI sidecars), then ≤ 5 running pods of those by their workload's
selector, and their log tails. Never all pods, never one
request per node. On a terminal, progress and the requests and bytes it cost
go to stderr.
Exit codes: 0 nothing failed at or above --fail-on; 1 something did;
2 bad flags, kubeconfig or no access.
`;

const OUTPUTS = ['table', 'json', 'yaml', 'markdown', 'html'] as const;
const FAIL_ON = ['warning', 'critical', 'never'] as const;
const RANK: Record<Severity, number> = { info: 0, warning: 1, critical: 2 };


/** Severities failing anywhere: on a node (as its agent reports) or in the cluster checks. */
export function clusterExitCode(report: Pick<ClusterReport, 'summary' | 'cluster'>, failOn: (typeof FAIL_ON)[number]): number {
  if (failOn === 'never') return EXIT_OK;
  const severities = [
    ...SEVERITIES.filter((s) => report.summary.failing[s] > 0),
    ...report.cluster.findings.filter((f) => f.status === 'fail').map((f) => f.severity),
  ];
  return severities.some((s) => RANK[s] >= RANK[failOn]) ? EXIT_FINDINGS : EXIT_OK;
}

function parseReportFlags(args: string[]) {
  const { values } = parseFlags(args, {
    ...KUBE_FLAGS,
    selector: { type: 'string', short: 'l' },
    output: { type: 'string', short: 'o' },
    limit: { type: 'string' },
    all: { type: 'boolean' },
    'fail-on': { type: 'string' },
    'page-size': { type: 'string' },
    qps: { type: 'string' },
    rules: { type: 'string', multiple: true },
    'no-bundled-rules': { type: 'boolean' },
    verbose: { type: 'boolean', short: 'v' },
    ...AGENT_NAMESPACE_FLAG,
  }, 'report');
  return {
    values,
    output: oneOf('--output', values.output, OUTPUTS, 'table'),
    failOn: oneOf('--fail-on', values['fail-on'], FAIL_ON, 'critical'),
    limit: values.all ? Infinity : numberFlag('--limit', values.limit, DEFAULT_LIMIT, 0, 1_000_000),
    pageSize: Math.floor(numberFlag('--page-size', values['page-size'], DEFAULT_PAGE_SIZE, 0, 10_000)),
    qps: numberFlag('--qps', values.qps, DEFAULT_REPORT_QPS, 0.1, 1000),
    agentNamespace: namespaceFlag('--agent-namespace', values['agent-namespace']),
  };
}

export async function reportCommand(args: string[], io: Io): Promise<number> {
  const flags = parseReportFlags(args);
  const { values, output } = flags;
  if (values.help) {
    io.stdout.write(REPORT_USAGE);
    return EXIT_OK;
  }
  const started = performance.now();
  const progress = pagingProgress(io);
  const limiter = new TokenBucket(flags.qps, Math.max(1, Math.ceil(2 * flags.qps)));
  const api: ClusterApi = clusterApiFrom(values, io.env, { limiter }, { pageSize: flags.pageSize, ...(progress ? { onPage: progress.page } : {}) });
  api.qps = flags.qps;
  const generatedAt = new Date().toISOString();
  const stream = output === 'json' || output === 'yaml'
    ? new ClusterReportStream(io.stdout, output, { schemaVersion: CLUSTER_REPORT_SCHEMA_VERSION, kind: 'ClusterReport', generatedAt, selector: values.selector ?? null }, stripControls)
    : undefined;
  let report: ClusterReport;
  try {
    report = terminalSafe(await runClusterReport(api, {
      ...(values.selector ? { selector: values.selector } : {}),
      ruleLocations: values.rules ?? [],
      bundledRules: !values['no-bundled-rules'],
      generatedAt,
      agentNamespace: flags.agentNamespace,
      // JSON and YAML list every node as it is read (strings cleaned as they are written); the table keeps the worst.
      limit: stream ? 0 : flags.limit,
      ...(stream ? { onNode: (row) => stream.node(row) } : {}),
      explain: output === 'html',
    }));
  } catch (error) {
    await stream?.abort(stripControls((error as Error).message));
    throw error;
  } finally {
    progress?.clear();
    await api.close();
  }
  if (stream) {
    const { summary, fleet, cluster, api: used } = report;
    await stream.finish({ summary, fleet, cluster, api: used });
  } else if (output === 'markdown') io.stdout.write(renderClusterMarkdown(report));
  else if (output === 'html') io.stdout.write(renderClusterPage(report));
  else io.stdout.write(renderClusterTable(report, { width: terminalWidth(io), color: useColor(io), verbose: values.verbose === true }));
  progress?.done(report.api, performance.now() - started);
  return clusterExitCode(report, flags.failOn);
}
