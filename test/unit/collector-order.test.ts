// Collectors say which facts of other collectors they read (`reads`), the runner orders them by it,
// and every fact a bundled node rule names (the files `rules lint` checks) is some collector's
// `provides`. The reads are checked by running every collector over real fixture hosts with a
// FactSet that records what each one looks up.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { COLLECTORS } from '../../src/collectors/index.ts';
import { orderCollectors } from '../../src/collectors/run.ts';
import type { Collector, CollectorContext } from '../../src/collectors/collector.ts';
import { FactSet, type FactValue, type Fact } from '../../src/facts/fact-set.ts';
import { HostRoot } from '../../src/host/host-root.ts';
import { BUNDLED_RULES_DIR, loadRules } from '../../src/rules/load.ts';
import { factsIn } from '../../src/rules/conditions.ts';
import { placeholders, paramOfKey } from '../../src/rules/template.ts';
import { CLUSTER_FACT_PREFIX, ruleConditions } from '../../src/rules/schema.ts';
import { WorkloadState } from '../../src/workload/state.ts';
import { WATCHED_PARTS } from '../../src/workload/snapshot.ts';

const HOSTS = path.resolve(import.meta.dirname, '../fixtures/hosts');
const FIXTURES = ['etcd-kubeadm-nvme', 'etcd-kubespray-ssd', 'etcd-k3s-embedded', 'tuned-virtual-guest-stopped', 'tuned-merge-powersave', 'kubeadm-1.30', 'rke2-server', 'worker-longhorn-iscsi', 'worker-intree-attach', 'kubeadm-containerd-default'];

/** A FactSet that notes, per running collector, every key looked up. */
class RecordingFacts extends FactSet {
  reader = '';
  readonly looked = new Map<string, Set<string>>();
  private note(key: string): void {
    if (!this.looked.has(this.reader)) this.looked.set(this.reader, new Set());
    this.looked.get(this.reader)!.add(key);
  }
  override get(key: string): Fact | undefined { this.note(key); return super.get(key); }
  override value(key: string): FactValue | undefined { this.note(key); return super.value(key); }
  override has(key: string): boolean { this.note(key); return super.has(key); }
}

test('the runner keeps the registered order, which already satisfies every read', () => {
  assert.deepEqual(orderCollectors(COLLECTORS).map((c) => c.name), COLLECTORS.map((c) => c.name));
});

test('reversed, the collectors still run after the providers of what they read; a circle throws', () => {
  const ordered = orderCollectors([...COLLECTORS].reverse());
  const position = new Map(ordered.map((c, i) => [c, i]));
  for (const collector of ordered) {
    for (const key of collector.reads ?? []) {
      const provider = ordered.find((c) => c.provides.includes(key))!;
      assert.ok(position.get(provider)! < position.get(collector)!, `${collector.name} runs after ${provider.name} (${key})`);
    }
  }
  const a: Collector = { name: 'a', provides: ['x'], reads: ['y'], collect: async () => {} };
  const b: Collector = { name: 'b', provides: ['y'], reads: ['x'], collect: async () => {} };
  assert.throws(() => orderCollectors([a, b]), /in a circle: a, b/);
});

test("every fact a collector looks up that another collector provides is declared in its reads", async () => {
  const providerOf = new Map(COLLECTORS.flatMap((c) => c.provides.map((key) => [key, c.name] as const)));
  const undeclared = new Set<string>();
  const workload = new WorkloadState({ nodeName: 'n' });
  for (const part of WATCHED_PARTS) workload.synced(part);
  for (const fixture of FIXTURES) {
    const facts = new RecordingFacts();
    for (const [i, cluster] of [undefined, workload.snapshot()].entries()) {
      const ctx: CollectorContext = {
        host: new HostRoot(path.join(HOSTS, fixture)), facts, sleep: (ms) => delay(Math.min(ms, 1)), now: () => performance.now(),
        liveProc: async () => false, ...(cluster ? { cluster } : {}),
      };
      for (const collector of orderCollectors(COLLECTORS)) {
        if (i === 1 && collector.name !== 'workload-api') continue;
        facts.reader = collector.name;
        await collector.collect(ctx).catch(() => {});
        for (const key of facts.looked.get(collector.name) ?? []) {
          const provider = providerOf.get(key);
          if (provider && provider !== collector.name && !(collector.reads ?? []).includes(key)) undeclared.add(`${collector.name} reads ${key} (${provider}) on ${fixture}`);
        }
      }
    }
  }
  assert.deepEqual([...undeclared], []);
});

test('every fact a bundled node rule names is some collector\'s provides (the files rules lint checks)', async () => {
  const provided = new Set(COLLECTORS.flatMap((c) => c.provides));
  const loaded = await loadRules([BUNDLED_RULES_DIR]);
  assert.deepEqual(loaded.errors, []);
  const missing: string[] = [];
  let checked = 0;
  for (const rule of loaded.rules.filter((r) => (r.scope ?? 'node') === 'node')) {
    const templates = [rule.observed, rule.expected, rule.message, rule.remediation.summary, rule.remediation.text, ...(rule.remediation.commands ?? []), rule.notEnoughData];
    const fromTemplates = templates.flatMap((t) => placeholders(t ?? '')).flatMap((p) => (p.kind === 'fact' && paramOfKey(p.key) === undefined ? [p.key] : p.kind === 'param-by-fact' ? [p.key] : []));
    const keys = new Set([...ruleConditions(rule).flatMap(([, condition]) => factsIn(condition)), ...(rule.evidence ?? []), ...fromTemplates]);
    for (const key of keys) {
      checked++;
      if (!key.startsWith(CLUSTER_FACT_PREFIX) && !provided.has(key)) missing.push(`${rule.id}: ${key}`);
    }
  }
  assert.ok(checked > 50, `${checked} fact names checked`);
  assert.deepEqual(missing, [], 'a node rule names a fact no collector provides');
});
