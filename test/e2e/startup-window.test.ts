// Verdicts that stay true over time (issue 34), on a real control plane and a real kubelet (a hollow
// node: the kubelet's own status manager and client rate limiter): the agent as deployed, with
// --startup-window 2m --interval 15s. 60 pods at the kubelet's old default limits 5/10 make
// pod-startup-slo fail (one Warning). The kubelet is restarted at 50/100; once the window holds none of
// the old pods the rule is not applicable for lack of data, which is no fix: no TuningResolved, and the
// Node keeps the standing Warning (lastDecided). New pods then start at 50/100: within two intervals of
// their Ready the rule passes, and exactly one TuningResolved says so. No Event carries a "none" or
// 0-pod figure, and no rule warns twice without a fix between. The window is the acceptance's 2m:
// the old pods have left it two minutes after the last was Ready.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { parseAnnotations, type AnnotatedReport } from '../../src/wire/annotations.ts';
import { REASON_RECOMMENDATION, REASON_RESOLVED, REPORTING_COMPONENT } from '../../src/wire/events.ts';
import { AgentProcess } from '../helpers/bundled-agent.ts';
import { realServerTier } from '../helpers/control-plane.ts';
import { HollowNode } from '../helpers/hollow-node.ts';
import { ensureNamespace, ensureServiceAccount } from '../helpers/kube-objects.ts';
import { BASE, REPO } from '../helpers/manifests.ts';
import { ReadyWitness } from '../helpers/ready-witness.ts';
import { agentIdentity, applyKustomization, daemonSetRun, nodeEvents, ownAnnotations, startDeploySuite, type DeploySuite } from '../helpers/shipped.ts';

const NODE = 'win-node';
const NS = 'window';
const LABEL = 'node-tuning-advisor.io/test=startup-window';
const OLD_PODS = 60;
const NEW_PODS = 12;
const INTERVAL_S = 15;
const RULE = 'pod-startup-slo';
/** Each wait is for an event that must come (a pod Ready, an agent cycle): the deadline only ends a hang. */
const HANG_MS = 300_000;

describe('pod start-up figures over --startup-window on a real kubelet: a fixed node clears, an emptied window is no fix', realServerTier(), () => {
  let suite: DeploySuite;
  let kubelet: HollowNode | undefined;
  let agent: AgentProcess | undefined;
  let witness: ReadyWitness | undefined;

  before(async () => {
    suite = await startDeploySuite('nta-startup-window-');
    const { cp, tmp } = suite;
    const applied = await applyKustomization(cp, BASE);
    assert.equal(applied.code, 0, applied.stderr);
    await ensureNamespace(cp, NS);
    await ensureServiceAccount(cp, NS, 'default');
    kubelet = await HollowNode.start(cp, NODE, { qps: 5, burst: 10 });
    witness = await ReadyWitness.start(cp, LABEL);
    const identity = await agentIdentity(cp, NODE, tmp);
    const run = await daemonSetRun(cp, 'node-tuning-advisor', {
      node: NODE, hostRoot: path.join(REPO, 'test/fixtures/hosts/intel-pstate-epp-power'), rulesDir: path.join(tmp, 'rules'), kubeconfig: identity.kubeconfig,
    });
    const args = [
      ...run.args.filter((a) => !a.startsWith('--interval=') && !a.startsWith('--startup-window=')),
      `--interval=${INTERVAL_S}s`, '--startup-window=2m', '--startup-jitter=0s', '--probe-interval=off',
      // The hollow kubelet registers an unroutable InternalIP; it listens on loopback (plain HTTP).
      '--kubelet-address=127.0.0.1',
    ];
    agent = AgentProcess.start(await suite.bundle, args, run.env);
    // The first cycle ends after the watches' first LIST: every pod created from now on is new to it.
    await agent.waitForCycles(1, HANG_MS);
  });

  after(async () => {
    witness?.stop();
    await agent?.stop();
    await kubelet?.stop();
    await suite?.stop();
  });

  async function published(): Promise<AnnotatedReport> {
    const parsed = parseAnnotations(await ownAnnotations(suite.cp, NODE));
    assert.ok(parsed.state === 'ok', `the agent's report annotation: ${JSON.stringify(parsed)}`);
    return parsed.report;
  }

  /** The agent's report after each of its cycles, until `check` holds: that report and the cycle count. */
  async function cycleUntil(what: string, check: (r: AnnotatedReport) => boolean): Promise<{ report: AnnotatedReport; cycle: number }> {
    const deadline = Date.now() + HANG_MS;
    for (;;) {
      const cycle = (agent as AgentProcess).cycles;
      const report = await published();
      if (check(report)) return { report, cycle };
      if (Date.now() > deadline) throw new Error(`${what}: not within ${HANG_MS} ms; last report ${JSON.stringify(report)}\n${agent?.log}`);
      await (agent as AgentProcess).waitForCycles(cycle + 1, HANG_MS);
    }
  }

  async function ourEvents(): Promise<{ reason: string; rule: string; message: string }[]> {
    const events = (await nodeEvents(suite.cp, NODE)).filter((e) => e.source?.component === REPORTING_COMPONENT || e.reportingComponent === REPORTING_COMPONENT);
    return events
      .sort((a, b) => String(a.metadata.name).localeCompare(String(b.metadata.name)))
      .map((e) => ({ reason: e.reason, message: e.message, rule: /^(?:[A-Z]{4} )?([a-z0-9-]+)[: ]/.exec(e.message)?.[1] ?? '?' }));
  }

  async function createPods(prefix: string, count: number): Promise<string[]> {
    const names = Array.from({ length: count }, (_, i) => `${prefix}-${i}`);
    await Promise.all(names.map((name) => suite.cp.must('POST', `/api/v1/namespaces/${NS}/pods`, {
      apiVersion: 'v1', kind: 'Pod', metadata: { name, labels: { 'node-tuning-advisor.io/test': 'startup-window' } },
      spec: { nodeName: NODE, automountServiceAccountToken: false, containers: [{ name: 'app', image: 'example.invalid/app:1' }] },
    })));
    return names;
  }

  async function allReady(names: string[]): Promise<void> {
    const deadline = Date.now() + HANG_MS;
    while (!names.every((n) => witness?.readyAt.has(`${NS}/${n}`))) {
      if (Date.now() > deadline) throw new Error(`${names.filter((n) => !witness?.readyAt.has(`${NS}/${n}`)).length} of ${names.length} pods not Ready`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  test('5/10 fails; restarted at 50/100 the emptied window is no fix; new pods clear it within two intervals, one Event each way', async (t) => {
    const old = await createPods('old', OLD_PODS);
    await allReady(old);
    const failing = await cycleUntil(`${RULE} failing at 5/10`, (r) => r.rules.some((e) => e.rule === RULE && e.status === 'fail'));
    t.diagnostic(`5/10: ${JSON.stringify(failing.report.rules.find((e) => e.rule === RULE))}`);
    assert.match(failing.report.rules.find((e) => e.rule === RULE)?.observed ?? '', /^p99 \d+ ms over \d+ pods; largest phase statusDelay$/);

    await (kubelet as HollowNode).restart({ qps: 50, burst: 100 });
    // No new pod: two minutes after the last old one was Ready the window holds none of them.
    const emptied = await cycleUntil(`${RULE} without data`, (r) => !r.rules.some((e) => e.rule === RULE && e.status === 'fail'));
    assert.deepEqual(emptied.report.rules.find((e) => e.rule === RULE), { rule: RULE, status: 'not-applicable', severity: 'warning', lastDecided: 'fail' },
      'not applicable for lack of data, the standing Warning kept on the Node');
    let events = await ourEvents();
    assert.deepEqual(events.filter((e) => e.rule === RULE).map((e) => e.reason), [REASON_RECOMMENDATION], `no Event from the window emptying: ${JSON.stringify(events)}`);

    const fresh = await createPods('new', NEW_PODS);
    await allReady(fresh);
    const readyAtCycle = (agent as AgentProcess).cycles;
    await (agent as AgentProcess).waitForCycles(readyAtCycle + 2, HANG_MS);
    const cleared = await published();
    assert.equal(cleared.rules.find((e) => e.rule === RULE), undefined, `${RULE} passes within two intervals of the new pods' Ready: ${JSON.stringify(cleared)}`);
    events = await ourEvents();
    t.diagnostic(events.map((e) => `${e.reason}: ${e.message}`).join('\n'));
    const mine = events.filter((e) => e.rule === RULE);
    assert.deepEqual(mine.map((e) => e.reason), [REASON_RECOMMENDATION, REASON_RESOLVED], 'one Warning, one TuningResolved');
    assert.match(mine[1]?.message ?? '', new RegExp(`^${RULE} passes now: p99 \\d+ ms over ${NEW_PODS} pods; largest phase \\w+$`), 'judged on the new pods only');

    for (const e of events) assert.doesNotMatch(e.message, /\bnone\b|over 0 |none found/, `no empty figure in an Event: ${e.message}`);
    // Every rule alternates: warned, resolved, warned…; never two Warnings (or two resolutions) in a row.
    for (const rule of new Set(events.map((e) => e.rule))) {
      const reasons = events.filter((e) => e.rule === rule).map((e) => e.reason);
      reasons.forEach((reason, i) => assert.equal(reason, i % 2 === 0 ? REASON_RECOMMENDATION : REASON_RESOLVED, `${rule}: ${reasons.join(', ')}`));
    }
  });
});
