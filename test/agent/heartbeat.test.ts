// The agent's heartbeat loop (src/agent/heartbeat.ts) against a Lease API held in memory: nothing
// before the first publish; a restart within a period writes nothing (the GET says when it last
// renewed); a missing Lease is created; renewals stop while the report is not current and resume
// with the next publish; a failure is logged once and retried; the agent's loop (src/agent/agent.ts)
// tells it of each publish and renews once for --once. (On the real server: test/e2e/admission-heartbeat.test.ts,
// test/e2e/liveness.test.ts.)
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Heartbeat, type LeaseApi } from '../../src/agent/heartbeat.ts';
import { KubeError } from '../../src/kube/errors.ts';
import type { KubeObject } from '../../src/kube/objects.ts';
import { heartbeatLease, heartbeatSpec } from '../../src/wire/heartbeat.ts';

class MemoryLeases implements LeaseApi {
  readonly calls: string[] = [];
  stored: KubeObject | undefined;
  failNext: KubeError[] = [];

  private maybeFail(call: string): void {
    this.calls.push(call);
    const err = this.failNext.shift();
    if (err) throw err;
  }

  async getLease(): Promise<KubeObject | undefined> {
    this.maybeFail('get');
    return this.stored;
  }

  async patchLease(_ns: string, name: string, patch: Record<string, unknown>): Promise<KubeObject> {
    this.maybeFail('patch');
    if (!this.stored) throw new KubeError({ verb: 'patch', target: `leases "${name}"`, code: '404', status: 404, detail: 'not found' });
    this.stored = { ...this.stored, spec: { ...(this.stored.spec as object), ...(patch.spec as object) } };
    return this.stored;
  }

  async createLease(_ns: string, lease: Record<string, unknown>): Promise<KubeObject> {
    this.maybeFail('create');
    if (this.stored) throw new KubeError({ verb: 'create', target: 'leases', code: '409', status: 409, detail: 'exists' });
    this.stored = lease as KubeObject;
    return this.stored;
  }
}

const PERIOD = 40;
const until = async (check: () => boolean, what: string) => {
  const deadline = Date.now() + 5_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`${what}: not within 5 s`);
    await new Promise((r) => setTimeout(r, 5));
  }
};

function heartbeat(api: MemoryLeases, current: () => boolean = () => true) {
  const logs: string[] = [];
  const renewals: number[] = [];
  const beat = new Heartbeat({
    api, nodeName: 'n1', namespace: 'ns', periodMs: PERIOD, current, nodeUid: () => 'uid-1', log: (l) => logs.push(l),
    onRenewed: (at) => renewals.push(at), backoff: { baseMs: 5, capMs: 20 },
  });
  return { beat, logs, renewals };
}

describe('Heartbeat', () => {
  it('nothing before the first publish; then GET, create (owned by the Node), and a PATCH per period', async () => {
    const api = new MemoryLeases();
    const { beat, renewals, logs } = heartbeat(api);
    beat.start();
    await new Promise((r) => setTimeout(r, 3 * PERIOD));
    assert.deepEqual(api.calls, [], 'no request before the first publish');
    beat.published();
    await until(() => renewals.length >= 3, 'three renewals');
    await beat.stop();
    assert.deepEqual(api.calls.slice(0, 4), ['get', 'create', 'patch', 'patch']);
    assert.ok(renewals.every((at, i) => i === 0 || at - (renewals[i - 1] as number) >= PERIOD), `never more often than the period: ${renewals}`);
    assert.deepEqual((api.stored?.metadata as any).ownerReferences, [{ apiVersion: 'v1', kind: 'Node', name: 'n1', uid: 'uid-1' }]);
    assert.deepEqual(logs, ['heartbeat: Lease ns/n1 renewed, every 0 s (stale after 3 s)']);
  });

  it('a restart within a period writes nothing until the period is over', async () => {
    const api = new MemoryLeases();
    api.stored = heartbeatLease('n1', 'ns', heartbeatSpec('n1', 10 * PERIOD, Date.now()), 'uid-1') as KubeObject;
    const { beat, renewals } = heartbeat(api);
    const started = Date.now();
    beat.start();
    beat.published();
    await until(() => renewals.length >= 1, 'a renewal');
    await beat.stop();
    assert.deepEqual(api.calls[0], 'get');
    assert.ok((renewals[0] as number) - started >= PERIOD - 5, 'the first renewal waited for the period since the last one');
  });

  it('not current (a failed scan or publish): no renewal, logged once; the next publish renews at once', async () => {
    const api = new MemoryLeases();
    let current = true;
    const { beat, renewals, logs } = heartbeat(api, () => current);
    beat.start();
    beat.published();
    await until(() => renewals.length >= 1, 'the first renewal');
    current = false;
    const before = api.calls.length;
    await new Promise((r) => setTimeout(r, 4 * PERIOD));
    assert.equal(api.calls.length, before, 'no request while not current');
    assert.equal(logs.filter((l) => /not renewed: the report on the Node is not current/.test(l)).length, 1);
    current = true;
    beat.published();
    await until(() => renewals.length >= 2, 'a renewal after the publish');
    await beat.stop();
  });

  it('a failed renewal is logged once per problem, retried with backoff, and the agent keeps going', async () => {
    const api = new MemoryLeases();
    const forbidden = () => new KubeError({ verb: 'patch', target: 'leases "n1"', code: '403', status: 403, detail: 'forbidden' });
    api.failNext = [forbidden(), forbidden(), forbidden(), forbidden()]; // the GET and three renewals
    const { beat, renewals, logs } = heartbeat(api);
    beat.start();
    beat.published();
    await until(() => renewals.length >= 1, 'a renewal once the server lets it');
    await beat.stop();
    assert.deepEqual(logs.filter((l) => /failed/.test(l)), ['heartbeat renewing its Lease ns/n1 failed (HTTP 403: forbidden); attempt 1']);
    assert.ok(logs.some((l) => /could not read its Lease ns\/n1 \(HTTP 403: forbidden\); renewing it now/.test(l)));
    assert.match(logs.at(-1) as string, /^heartbeat: Lease ns\/n1 renewed/, 'the recovery is logged');
  });

  it('--once: one renewal, whatever the last one was; stop ends the loop at once', async () => {
    const api = new MemoryLeases();
    const { beat } = heartbeat(api);
    assert.equal(await beat.beatOnce(), true);
    assert.deepEqual(api.calls, ['patch', 'create']);
    beat.start();
    await beat.stop();
  });
});
