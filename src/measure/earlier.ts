// What to do about earlier runs' namespaces before measuring: a leftover is deleted when asked to
// (--delete-leftovers, or yes at the prompt on a terminal), otherwise named with the command that
// deletes it; a run in progress on the same node stops this one; pods of an earlier run still
// stopping on the measured node are waited for (bounded), so they do not share the node with the burst.
import type { KubeClient } from '../kube/client.ts';
import { Informer } from '../kube/informer.ts';
import type { KubeObject } from '../kube/objects.ts';
import { PODS } from '../kube/resources.ts';
import { deleteNamespace, describeRun, findEarlierRuns, stateOf } from './leftovers.ts';
import { MeasureError, explainApiFailure } from './preflight.ts';

export type LeftoverPolicy = 'ask' | 'delete' | 'keep';

export interface EarlierHooks {
  signal: AbortSignal;
  notice(line: string): void;
  confirm?(question: string): Promise<boolean>;
}

const QUIET_WAIT_MS = 60_000;

export async function settleEarlierRuns(client: KubeClient, node: string, policy: LeftoverPolicy, hooks: EarlierHooks, now: number): Promise<void> {
  const toWaitFor: string[] = [];
  for (const run of await findEarlierRuns(client, hooks.signal)) {
    if (hooks.signal.aborted) return;
    const text = describeRun(run, now);
    const state = stateOf(run, now);
    if (state === 'running') {
      if (run.node !== node) { hooks.notice(`another measurement is running in ${text}`); continue; }
      throw new MeasureError(`another measurement of node ${node} is running in ${text}; two at once would skew both: wait until it ends, or if it was killed, kubectl delete namespace ${run.namespace}`);
    }
    if (state === 'leftover') {
      if (policy === 'ask' && hooks.confirm !== undefined) hooks.notice(`left over by an interrupted run: ${text}`);
      const remove = policy === 'delete' || (policy === 'ask' && hooks.confirm !== undefined && await hooks.confirm('Delete it? [y/N] '));
      if (!remove) {
        hooks.notice(`left over by an interrupted run: ${text}; delete it with --delete-leftovers or kubectl delete namespace ${run.namespace}`);
        if (run.node === node) hooks.notice(`its pods still run on ${node}, beside the ones measured now`);
        continue;
      }
      try {
        await deleteNamespace(client, run.namespace);
      } catch (err) {
        throw explainApiFailure(err);
      }
      hooks.notice(`deleted the leftover ${text}`);
    } else {
      hooks.notice(`an earlier run's ${text} is still being deleted`);
    }
    if (run.node === node) toWaitFor.push(run.namespace);
  }
  for (const namespace of toWaitFor) await waitUntilNoPods(client, namespace, hooks);
}

/** Until the namespace has no pods left (the kubelet stopped them), bounded; a list-watch, no polling. */
async function waitUntilNoPods(client: KubeClient, namespace: string, hooks: EarlierHooks): Promise<void> {
  const informer = new Informer<KubeObject>(client, PODS, { name: 'pods', what: `pods in namespace ${namespace}`, namespace });
  let wake: () => void = () => {};
  const changed = (): void => wake();
  informer.on({ listed: changed, deleted: changed, added: changed });
  hooks.signal.addEventListener('abort', changed, { once: true });
  informer.start();
  const deadline = Date.now() + QUIET_WAIT_MS;
  let told = false;
  try {
    while (!hooks.signal.aborted && Date.now() < deadline) {
      if (informer.hasListed && informer.items().length === 0) return;
      if (informer.hasListed && !told) {
        hooks.notice(`waiting for the ${informer.items().length} pods of namespace ${namespace} to stop on the node (at most ${QUIET_WAIT_MS / 1000} s)`);
        told = true;
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.max(0, deadline - Date.now()));
        wake = () => { clearTimeout(timer); resolve(); };
      });
    }
    if (!hooks.signal.aborted) hooks.notice(`pods of namespace ${namespace} are still stopping after ${QUIET_WAIT_MS / 1000} s; measuring anyway`);
  } finally {
    hooks.signal.removeEventListener('abort', changed);
    await informer.stop();
  }
}
