// Metric names in a PromQL expression, and the series names the agent's registry exports.
import { createAgentMetrics } from '../../src/publish/metrics.ts';
import { seedReport } from './reports.ts';

const KEYWORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'bool', 'and', 'or', 'unless', 'offset', 'inf', 'nan']);

/** Identifiers that stand as metric names: not functions/aggregations (followed by "("), not
 *  labels (inside {} or after by/without/on/ignoring), not keywords, not Grafana $variables. */
export function metricNames(expr: string): string[] {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'/g, '""')
    .replace(/\{[^}]*\}/g, '{}')
    .replace(/\[[^\]]*\]/g, '[]')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, '')
    .replace(/\$\w+/g, '');
  const names = new Set<string>();
  for (const m of stripped.matchAll(/(?<![\w.])([a-zA-Z_:][a-zA-Z0-9_:]*)(\s*\()?/g)) {
    const [, name, call] = m;
    if (!call && !KEYWORDS.has((name as string).toLowerCase())) names.add(name as string);
  }
  return [...names].sort();
}

/** Every series name the agent's /metrics can carry (histogram/summary parts expanded). */
export async function exportedSeriesNames(): Promise<Set<string>> {
  const metrics = createAgentMetrics('0.0.0-test');
  metrics.setReport(seedReport(), 0.1, Date.now());
  // The heartbeat's timestamp joins with the first renewal.
  metrics.setHeartbeatPeriod(300);
  metrics.heartbeatRenewed(Date.now());
  const names = new Set<string>();
  for (const m of await metrics.registry.getMetricsAsJSON()) {
    const type = String(m.type);
    const parts = type === 'histogram' ? ['_bucket', '_sum', '_count'] : type === 'summary' ? ['', '_sum', '_count'] : [''];
    for (const p of parts) names.add(`${m.name}${p}`);
  }
  return names;
}
