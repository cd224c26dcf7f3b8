// `report --output html`: the fleet on one page. Grades, stale nodes and nodes without a readable report, failing
// rules by how many nodes fail them, the worst nodes with their findings and the fix, the others
// grouped as the terminal view folds them, the cluster checks; every rule named links to its
// explanation at the end (one click, no script). As bounded as the report itself: the worst
// --limit nodes one by one, at most MAX_GROUPS groups, rules from the rule set only.
import type { ClusterReport } from '../cluster/report.ts';
import type { RuleExplanation } from '../cluster/explanations.ts';
import { spaced } from '../cluster/fleet.ts';
import { isStale, type NodeRow } from '../cluster/nodes.ts';
import type { Finding, Report } from '../report/types.ts';
import { coverageText } from '../report/score.ts';
import { html, trusted, type HtmlValue, type Markup } from '../text/html.ts';
import { headLine, heartbeatNote, restLines, staleText, unknownRulesLine } from './cluster-report.ts';
import { COLOURS, coord, page, table } from './page.ts';
import { describeEvidence, referenceText, summaryLine } from './text.ts';

type Grade = Report['grade'];
const GRADE_COLOUR: Record<Grade, string> = { A: COLOURS.green, B: COLOURS.sky, C: COLOURS.yellow, D: COLOURS.orange, F: COLOURS.vermillion };
const GRADES: Grade[] = ['A', 'B', 'C', 'D', 'F'];

const STYLE = trusted(`
.fleet-bar{display:block;width:100%;height:auto;max-width:900px}
ul.findings{margin:0;padding-left:18px}
table.nodes td:first-child{min-width:9em;font-weight:600} table.nodes td:nth-child(2){min-width:7em} table.nodes td:nth-child(3),table.nodes td:nth-child(4){white-space:nowrap}
`);

/** A rule's id, linked to its explanation when the report has one. */
function ruleLink(rule: string, known: ReadonlySet<string>): Markup {
  return known.has(rule) ? html`<a href="#rule-${encodeURIComponent(rule)}"><code>${rule}</code></a>` : html`<code>${rule}</code>`;
}

const tag = (severity: string): Markup => html`<span class="tag ${severity}">${severity}</span>`;

/** One bar of segments (grades, then nodes without a readable report), each as wide as its count. */
function gradeBar(report: ClusterReport): Markup {
  const s = report.summary;
  const parts: [string, number, string][] = [
    ...GRADES.map((g): [string, number, string] => [`grade ${g}`, s.grades[g], GRADE_COLOUR[g]]),
    ['stale (no heartbeat)', s.stale, '#4d4d4d'], ['no agent', s.noAgent, COLOURS.grey], ['unreadable report', s.unreadable, COLOURS.purple],
  ];
  const total = Math.max(1, parts.reduce((n, [, count]) => n + count, 0));
  let at = 0;
  const rects = parts.filter(([, count]) => count > 0).map(([label, count, colour]) => {
    const rect = html`<rect x="${coord(at)}" width="${coord((count / total) * 1000)}" height="28" fill="${colour}"><title>${label}: ${spaced(count)}</title></rect>`;
    at += (count / total) * 1000;
    return rect;
  });
  const keys = parts.map(([label, count, colour]) => html`<li><span class="swatch" style="background:${colour}"></span>${label}: <b>${spaced(count)}</b></li>`);
  return html`<svg class="fleet-bar" viewBox="0 0 1000 28" preserveAspectRatio="none" role="img" aria-label="nodes by grade">${rects}</svg><ul class="legend">${keys}</ul>`;
}

function fleetSection(report: ClusterReport, known: ReadonlySet<string>): Markup {
  if (report.fleet.length === 0) return html`<p>No rule fails on any node with a readable report.</p>`;
  const rows = report.fleet.map((g): HtmlValue[] => [
    tag(g.severity), ruleLink(g.rule, known),
    html`<svg width="160" height="12" viewBox="0 0 160 12" role="img" aria-label="${g.count} of ${g.of}"><rect width="160" height="12" fill="#eee"/><rect width="${coord((g.count / Math.max(1, g.of)) * 160)}" height="12" fill="${COLOURS.vermillion}"/></svg>`,
    `${spaced(g.count)}/${spaced(g.of)}`, g.text.slice(g.rule.length + 1), g.examples.join(', '),
  ]);
  return table(['severity', 'rule', 'nodes failing', '', 'where', 'e.g.'], rows);
}

function nodeFindings(row: NodeRow, fixes: ReadonlyMap<string, RuleExplanation>, known: ReadonlySet<string>): Markup {
  if (row.agent === 'none') return html`no agent (no report annotation)`;
  if (row.agent === 'unreadable') return html`unreadable report: ${row.problem ?? ''}`;
  const failing = (row.report?.rules ?? []).filter((e) => e.status === 'fail');
  const unknown = row.report?.counts.unknown ?? 0;
  const items = failing.map((e) => {
    const fix = fixes.get(e.rule)?.fix;
    return html`<li>${tag(e.severity)} ${ruleLink(e.rule, known)}${e.observed ? html`: ${e.observed}` : ''}${fix ? html` — <b>fix</b>: ${fix}` : ''}</li>`;
  });
  const omitted = row.report?.omitted ? html`<li>${row.report.omitted} more not in the annotation (8 KiB): run scan on the node</li>` : '';
  const stale = isStale(row) ? html`<p><b>${staleText(row)}</b>; what its agent last published:</p>` : '';
  return html`${stale}${items.length > 0 || omitted ? html`<ul class="findings">${items}${omitted}</ul>` : 'nothing failing'}${unknown > 0 ? html`<p class="note">${unknown} unknown (could not be checked; not in the score)</p>` : ''}`;
}

function worstSection(report: ClusterReport, fixes: ReadonlyMap<string, RuleExplanation>, known: ReadonlySet<string>): Markup {
  if (report.nodes.length === 0) return html``;
  const rows = report.nodes.map((row): HtmlValue[] => [
    row.name, row.roles.join(', '), row.report ? String(row.report.score) : '—', row.report?.grade ?? '—', nodeFindings(row, fixes, known),
  ]);
  return html`<h2>Worst nodes, worst first</h2>${table(['node', 'roles', 'score', 'grade', 'failing rules, what was found, and the fix'], rows, Infinity,
    (r) => html` data-node="${report.nodes[r]?.name}"`, 'nodes')}`;
}

function restSection(report: ClusterReport): Markup {
  const rest = restLines(report);
  const unknown = unknownRulesLine(report);
  return html`${rest ? html`<h2>${rest.heading}</h2><ul>${rest.groups.map((g) => html`<li>${g}</li>`)}</ul>` : ''}${unknown ? html`<p><b>Unknown rules</b>: ${unknown}</p>` : ''}`;
}

function checkItem(f: Finding, known: ReadonlySet<string>): Markup {
  const evidence = f.evidence.map((e) => html`<li>${describeEvidence(e)}</li>`);
  const fix = f.status === 'fail' ? html`<p><b>Fix</b>: ${f.remediation.summary}. ${f.remediation.text}</p>${f.remediation.commands.length > 0 ? html`<pre>${f.remediation.commands.join('\n')}</pre>` : ''}` : '';
  return html`<div class="rule-doc"><p>${tag(f.severity)} <b>${f.status}</b> ${ruleLink(f.ruleId, known)} — ${f.title}</p><p>${f.message}</p>${fix}<ul>${evidence}</ul></div>`;
}

function clusterSection(report: ClusterReport, known: ReadonlySet<string>): Markup {
  const c = report.cluster;
  const open = c.findings.filter((f) => f.status === 'fail' || f.status === 'unknown');
  return html`<h2>Cluster checks: score ${c.score}/100 (grade ${c.grade})</h2><p>${summaryLine(c.counts)}; ${coverageText(c.coverage)}</p>${open.map((f) => checkItem(f, known))}`;
}

function explanation(rule: RuleExplanation): Markup {
  const commands = rule.commands.length > 0 ? html`<pre>${rule.commands.join('\n')}</pre>` : '';
  return html`<div class="rule-doc" id="rule-${rule.id}"><h3><code>${rule.id}</code> — ${rule.title}</h3>
<p>${tag(rule.severity)} ${rule.scope} rule, category ${rule.category}; expects ${rule.expected}</p>
<p><b>Fix</b>: ${rule.fix}. ${rule.text}</p>${commands}
<p class="note">References: ${rule.references.map(referenceText).join(' · ')}</p></div>`;
}

function apiLine(report: ClusterReport): string {
  const { requests, bytesReceived, pageSize } = report.api;
  return `Read with ${spaced(requests)} API requests (${spaced(Math.round(bytesReceived / 1024))} KiB, pages of ${pageSize === 0 ? 'any size' : spaced(pageSize)}); generated ${report.generatedAt}.`;
}

export function renderClusterPage(report: ClusterReport): string {
  const explanations = report.explanations ?? [];
  const known = new Set(explanations.map((e) => e.id));
  const fixes = new Map(explanations.map((e) => [e.id, e]));
  const head = headLine(report);
  return page('node-tuning-advisor report', STYLE, html`<h1>node-tuning-advisor report</h1>
<p>${head.replace(/^node-tuning-advisor report · /, '')}</p>${heartbeatNote(report) ? html`<p class="note">${heartbeatNote(report)}</p>` : ''}
<h2>Grades</h2>${gradeBar(report)}
<h2>Failing rules, by how many nodes</h2>${fleetSection(report, known)}
${worstSection(report, fixes, known)}
${restSection(report)}
${clusterSection(report, known)}
${explanations.length > 0 ? html`<h2>The rules named on this page</h2>${explanations.map(explanation)}` : ''}
<p class="note">${apiLine(report)}</p>`);
}
