// Events on real transitions only (issue 34): a rule flapping between failing and undecided (unknown,
// or not applicable because its window holds too few pods) warns once and resolves once, through
// the Publisher as the agent runs it, with the Node's annotations as its only memory, across restarts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Publisher } from '../../src/agent/publisher.ts';
import type { NodeMetadataPatch, WriteApi } from '../../src/agent/api.ts';
import type { EventObject, NodeObject } from '../../src/kube/objects.ts';
import { REPORT_KEY, parseAnnotations } from '../../src/wire/annotations.ts';
import type { Finding, FindingStatus } from '../../src/report/types.ts';
import { finding, report } from '../helpers/reports.ts';

/** A Node and the Events sent for it, as the API server would keep them (merge patches applied). */
class NodeStore implements WriteApi {
  node: NodeObject = { apiVersion: 'v1', kind: 'Node', metadata: { name: 'worker-1', uid: 'u1', annotations: {}, labels: {} } };
  events: EventObject[] = [];

  async patchNode(_name: string, patch: NodeMetadataPatch): Promise<NodeObject> {
    const apply = (map: Record<string, string> | undefined, changes: Record<string, string | null> | undefined) => {
      const out = { ...(map ?? {}) };
      for (const [k, v] of Object.entries(changes ?? {})) if (v === null) delete out[k]; else out[k] = v;
      return out;
    };
    this.node = { ...this.node, metadata: { ...this.node.metadata, annotations: apply(this.node.metadata?.annotations, patch.annotations), labels: apply(this.node.metadata?.labels, patch.labels) } };
    return this.node;
  }

  async createEvent(event: EventObject): Promise<EventObject> {
    this.events.push(event);
    return event;
  }
}

/** kubelet-pod-start-sli as a scan reports it in each state; `lacks` = not applicable for lack of data. */
function sli(state: FindingStatus | 'lacks'): Finding {
  if (state === 'fail') return finding('kubelet-pod-start-sli', 'fail', { observed: 'kubelet SLI p99 9000 ms over 40 pods', expected: 'p99 ≤ 5000 ms', scoreImpact: 4 });
  if (state === 'pass') return finding('kubelet-pod-start-sli', 'pass', { observed: 'kubelet SLI p99 800 ms over 20 pods' });
  if (state === 'unknown') return finding('kubelet-pod-start-sli', 'unknown', { message: "Cannot decide: pods the kubelet timed: the agent has read the kubelet's counters once." });
  if (state === 'lacks') {
    return finding('kubelet-pod-start-sli', 'not-applicable', { observed: '', lacksData: true, message: 'Not applicable here: fewer than 10 pods started by the kubelet in the last 1h: too few for a p99.' });
  }
  return finding('kubelet-pod-start-sli', 'not-applicable', { observed: '', message: 'Not applicable here: a kubelet on this node: no.' });
}

async function publishAll(store: NodeStore, states: (FindingStatus | 'lacks' | 'restart')[]): Promise<string[]> {
  let publisher = new Publisher(store, () => {});
  for (const state of states) {
    if (state === 'restart') { publisher = new Publisher(store, () => {}); continue; }
    await publisher.publish(report([sli(state), finding('kernel-tick-rate', 'pass')]), store.node);
  }
  return store.events.map((e) => `${e.type} ${e.reason}: ${e.message}`);
}

test('fail → unknown → fail → not applicable for lack of data → fail: one Warning, nothing else', async () => {
  const store = new NodeStore();
  const events = await publishAll(store, ['fail', 'unknown', 'fail', 'lacks', 'fail', 'unknown', 'lacks']);
  assert.deepEqual(events, ['Warning TuningRecommendation: WARN kubelet-pod-start-sli: kubelet SLI p99 9000 ms over 40 pods; want p99 ≤ 5000 ms — fix kubelet-pod-start-sli quickly']);
  // The standing Warning is on the Node, beside the status now.
  const parsed = parseAnnotations(store.node.metadata?.annotations);
  assert.ok(parsed.state === 'ok');
  assert.deepEqual(parsed.report.rules, [{ rule: 'kubelet-pod-start-sli', status: 'not-applicable', severity: 'warning', lastDecided: 'fail' }]);
});

test('the window emptied is not a fix: no TuningResolved until the rule passes; then exactly one', async () => {
  const store = new NodeStore();
  const events = await publishAll(store, ['fail', 'lacks', 'lacks', 'pass', 'lacks', 'pass', 'fail']);
  assert.deepEqual(events.map((e) => e.split(':')[0]), ['Warning TuningRecommendation', 'Normal TuningResolved', 'Warning TuningRecommendation']);
  assert.equal(events[1], 'Normal TuningResolved: kubelet-pod-start-sli passes now: kubelet SLI p99 800 ms over 20 pods');
});

test('a restarted agent reads what it told from the Node: it neither repeats the Warning nor misses the fix', async () => {
  const store = new NodeStore();
  const events = await publishAll(store, ['fail', 'restart', 'unknown', 'restart', 'fail', 'lacks', 'restart', 'fail', 'restart', 'lacks', 'restart', 'pass']);
  assert.deepEqual(events.map((e) => e.split(':')[0]), ['Warning TuningRecommendation', 'Normal TuningResolved']);
  const report = parseAnnotations(store.node.metadata?.annotations);
  assert.ok(report.state === 'ok' && report.report.rules.length === 0, 'passing: nothing held on the Node any more');
});

test('a real not-applicable (the kubelet is gone) resolves, saying why, never "passes now" with an empty figure', async () => {
  const store = new NodeStore();
  const events = await publishAll(store, ['fail', 'not-applicable']);
  assert.equal(events[1], 'Normal TuningResolved: kubelet-pod-start-sli no longer applies: a kubelet on this node: no');
  for (const e of events) assert.doesNotMatch(e, /\bnone\b|over 0 pods|\?/);
});

test('an unknown rule that never failed carries no lastDecided; an agent of the previous release reads the entry', async () => {
  const store = new NodeStore();
  await publishAll(store, ['unknown']);
  const raw = store.node.metadata?.annotations?.[REPORT_KEY] as string;
  assert.doesNotMatch(raw, /lastDecided/);
  await publishAll(store, ['fail', 'unknown']);
  assert.match(store.node.metadata?.annotations?.[REPORT_KEY] as string, /\{"rule":"kubelet-pod-start-sli","status":"unknown","severity":"warning","lastDecided":"fail"\}/);
});
