import { renderMarkdown } from '../../publish/markdown.ts';
import { renderScanView } from '../../publish/terminal/scan-view.ts';
import { runScan } from '../../scan.ts';
import { collectorsWithProbe } from '../../collectors/index.ts';
import type { Report, Severity } from '../../report/types.ts';
import { terminalJson, terminalSafe } from '../../text/terminal.ts';
import { terminalYaml } from '../../text/terminal-yaml.ts';
import { EXIT_FINDINGS, EXIT_OK, listFlag, oneOf, parseFlags, terminalWidth, useColor, type Io } from '../io.ts';
import { progressOnTerminal } from '../progress.ts';

export const SCAN_USAGE = `Usage: node-tuning-advisor scan [flags]

Checks this host (or a host tree) against the rules and prints each finding with its evidence and fix.

Flags:
  --host-root DIR        where the host's / is (default /; in the DaemonSet: /host)
  --rules PATH           extra rule directory or file; repeatable; may override bundled rules
  --no-bundled-rules     use only the --rules given
  --only IDS             evaluate only these rule ids (comma-separated, repeatable)
  --output FORMAT        table (default: what to fix, fits the terminal), json, yaml, markdown
  -v, --verbose          table: also every evidence fact with its source, the full fix, references
  --all                  table: list passing and not-applicable rules one by one
  --fail-on LEVEL        exit 1 when a rule fails at or above: warning, critical (default), never
  --node-name NAME       node name in the report (default: $NODE_NAME, then the host name)
  --probe                also time fdatasync in etcd's data dir (~22 MiB of writes, a few seconds)
  -h, --help             this help

Exit codes: 0 nothing failed at or above --fail-on; 1 something did; 2 bad flags or input.
`;

const OUTPUTS = ['table', 'json', 'yaml', 'markdown'] as const;
const FAIL_ON = ['warning', 'critical', 'never'] as const;
const RANK: Record<Severity, number> = { info: 0, warning: 1, critical: 2 };

export function renderReport(report: Report, output: (typeof OUTPUTS)[number], io: Io, view: { verbose?: boolean; all?: boolean; hostRoot?: string } = {}): string {
  if (output === 'json') return `${terminalJson(report)}\n`;
  if (output === 'yaml') return terminalYaml(report);
  // Host data (process arguments, /etc/hostname, file contents) is in every text view: stripped of controls.
  const safe = terminalSafe(report);
  if (output === 'markdown') return renderMarkdown(safe);
  return renderScanView(safe, { color: useColor(io), width: terminalWidth(io), ...view });
}

export function exitCodeFor(report: Report, failOn: (typeof FAIL_ON)[number]): number {
  if (failOn === 'never') return EXIT_OK;
  const threshold = RANK[failOn];
  const failing = report.findings.some((finding) => finding.status === 'fail' && RANK[finding.severity] >= threshold);
  return failing ? EXIT_FINDINGS : EXIT_OK;
}

export async function scanCommand(args: string[], io: Io): Promise<number> {
  const { values } = parseFlags(
    args,
    {
      'host-root': { type: 'string', default: '/' },
      rules: { type: 'string', multiple: true },
      'no-bundled-rules': { type: 'boolean' },
      only: { type: 'string', multiple: true },
      output: { type: 'string', short: 'o' },
      'fail-on': { type: 'string' },
      'node-name': { type: 'string' },
      probe: { type: 'boolean' },
      verbose: { type: 'boolean', short: 'v' },
      all: { type: 'boolean' },
    },
    'scan',
  );
  if (values.help) {
    io.stdout.write(SCAN_USAGE);
    return EXIT_OK;
  }
  const output = oneOf('--output', values.output, OUTPUTS, 'table');
  const failOn = oneOf('--fail-on', values['fail-on'], FAIL_ON, 'critical');
  const progress = values.probe ? progressOnTerminal(io, "probing etcd's disk") : undefined;
  const report = await runScan({
    hostRoot: values['host-root'] as string,
    ruleLocations: values.rules ?? [],
    bundledRules: !values['no-bundled-rules'],
    only: listFlag(values.only),
    nodeName: values['node-name'] ?? io.env.NODE_NAME,
    ...(values.probe ? { collectors: collectorsWithProbe(progress ? { onProgress: progress.onProgress } : {}) } : {}),
  });
  progress?.finish();
  const view = { verbose: values.verbose === true, all: values.all === true, hostRoot: values['host-root'] as string };
  io.stdout.write(renderReport(report, output, io, view));
  return exitCodeFor(report, failOn);
}
