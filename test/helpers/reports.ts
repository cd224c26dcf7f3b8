// Report objects shaped exactly like src/report/types.ts, for publisher tests.
import type { Finding, FindingStatus, Report } from '../../src/report/types.ts';
import { judge } from '../../src/report/score.ts';

export function finding(ruleId: string, status: FindingStatus, overrides: Partial<Finding> = {}): Finding {
  return {
    ruleId,
    title: `title of ${ruleId}`,
    category: 'kernel',
    status,
    severity: 'warning',
    weight: 2,
    observed: status === 'unknown' ? '' : `observed for ${ruleId}`,
    expected: `expected for ${ruleId}`,
    message: status === 'unknown' ? `cannot read the fact behind ${ruleId}` : `message for ${ruleId}`,
    evidence: [{ fact: 'kernel.hz', value: 250, source: '/boot/config-6.1.0' }],
    remediation: { summary: `fix ${ruleId} quickly`, text: `fix ${ruleId}`, commands: [`do-something --for ${ruleId}`] },
    references: [],
    scoreImpact: status === 'fail' ? 5 : 0,
    ...overrides,
  };
}

export function report(findings: Finding[], overrides: Partial<Report> = {}): Report {
  const counts = { pass: 0, fail: 0, unknown: 0, 'not-applicable': 0 };
  for (const f of findings) counts[f.status] += 1;
  return {
    schemaVersion: 1,
    node: 'worker-1',
    generatedAt: '2026-12-01T00:00:00.000Z',
    hostRoot: '/',
    ...judge(findings),
    counts,
    findings,
    facts: {
      'kernel.hz': { value: 250, source: '/boot/config-6.1.0' },
      'cpu.governor': { value: 'powersave', source: '/sys/devices/system/cpu/cpufreq/policy0/scaling_governor' },
    },
    ...overrides,
  };
}

/** The seed-000/001 picture: HZ 250, powersave, etcd on a rotational disk, plus an unknown. */
export function seedReport(): Report {
  return report([
    finding('etcd-fsync-latency', 'fail', {
      severity: 'critical', category: 'etcd', scoreImpact: 15,
      observed: 'fsync p99 18.2 ms on sdb (rotational)', expected: 'p99 ≤ 10 ms',
      remediation: { summary: "move etcd's data dir to SSD/NVMe", text: 'Move the etcd data dir to an SSD or NVMe disk and give etcd I/O priority', commands: ['ionice -c2 -n0 -p $(pgrep -x etcd)'] },
    }),
    finding('kernel-tick-rate', 'fail', { observed: 'CONFIG_HZ=250', expected: 'CONFIG_HZ=1000', scoreImpact: 6 }),
    finding('cpu-governor', 'fail', { category: 'cpu', observed: 'governor powersave on 40 of 40 CPUs', expected: 'performance', scoreImpact: 6 }),
    finding('tuned-profile', 'unknown', { category: 'tuned', severity: 'info' }),
    finding('kubelet-api-qps', 'pass', { category: 'api-client' }),
    finding('volume-attach', 'not-applicable', { category: 'volumes' }),
  ]);
}
