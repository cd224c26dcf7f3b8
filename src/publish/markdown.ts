// Markdown report, for pasting into an issue or a wiki page.
import type { Report } from '../report/types.ts';
import { describeEvidence, evidenceSources, referenceText, findingSummary, STATUS_LABEL, summaryLine } from './text.ts';

const cell = (text: string) => text.replaceAll('|', '\\|').replaceAll('\n', ' ');

export function renderMarkdown(report: Report): string {
  const lines = [
    `# node-tuning-advisor: ${report.node}`,
    '',
    `**Score ${report.score}/100 (grade ${report.grade})** — ${summaryLine(report.counts)}. Generated ${report.generatedAt}, host root \`${report.hostRoot}\`.`,
    '',
    '| Status | Severity | Rule | Observed → expected | Evidence |',
    '|---|---|---|---|---|',
    ...report.findings.map(
      (finding) =>
        `| ${STATUS_LABEL[finding.status]} | ${finding.severity} | \`${finding.ruleId}\` | ${cell(findingSummary(finding))} | ${cell(evidenceSources(finding))} |`,
    ),
  ];
  for (const finding of report.findings.filter((item) => item.status === 'fail' || item.status === 'unknown')) {
    lines.push('', `## ${STATUS_LABEL[finding.status]} \`${finding.ruleId}\` — ${finding.title}`, '', finding.message, '', '**Evidence**', '');
    for (const evidence of finding.evidence) lines.push(`- ${cell(describeEvidence(evidence))}`);
    if (finding.status === 'fail') {
      lines.push('', `**Fix**: ${finding.remediation.summary}. ${finding.remediation.text}`);
      if (finding.remediation.commands.length > 0) lines.push('', '```sh', ...finding.remediation.commands, '```');
      const references = finding.references.map((reference) => reference.url ? `<${reference.url}>` : referenceText(reference));
      lines.push('', `References: ${references.join(', ')}`);
    }
  }
  return `${lines.join('\n')}\n`;
}
