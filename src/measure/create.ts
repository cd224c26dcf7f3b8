// The burst: the namespace's default ServiceAccount first (ServiceAccount admission refuses pods
// without it), then one PVC per pod when asked, then every pod at once, each pod's creation timed
// when its request left the command.
import type { KubeClient } from '../kube/client.ts';
import { KubeError, describeError } from '../kube/errors.ts';
import { PERSISTENTVOLUMECLAIMS, PODS, SERVICEACCOUNTS } from '../kube/resources.ts';
import type { PodFollower } from './follow.ts';
import { claimObject, podName, podObject, type PodPlan } from './objects.ts';
import { MeasureError, explainApiFailure } from './preflight.ts';

/** The run was interrupted (Ctrl-C, SIGTERM): clean up, report nothing. */
export class Interrupted extends Error {}

/** ServiceAccount admission refuses pods until the namespace's `default` ServiceAccount exists. */
export async function waitForServiceAccount(client: KubeClient, namespace: string, fromVersion: string, timeoutMs: number, signal: AbortSignal): Promise<void> {
  const stop = new AbortController();
  const onAbort = (): void => stop.abort();
  signal.addEventListener('abort', onAbort, { once: true });
  const timer = setTimeout(() => stop.abort(), timeoutMs);
  let seen = false;
  try {
    while (!seen && !stop.signal.aborted) {
      await client.watch(SERVICEACCOUNTS, { namespace, fieldSelector: 'metadata.name=default', resourceVersion: fromVersion, timeoutSeconds: Math.ceil(timeoutMs / 1000), signal: stop.signal }, (event) => {
        if (event.type === 'ADDED' || event.type === 'MODIFIED') { seen = true; stop.abort(); }
      }).catch((err) => { if (!seen && !stop.signal.aborted) throw explainApiFailure(err); });
    }
  } finally {
    clearTimeout(timer);
    signal.removeEventListener('abort', onAbort);
  }
  if (signal.aborted) throw new Interrupted();
  if (!seen) throw new MeasureError(`namespace ${namespace} got no default ServiceAccount within ${Math.round(timeoutMs / 1000)} s, and pods cannot be created without it: is kube-controller-manager running?`);
}

/** PVCs first (each pod's own), then every pod at once; returns the create failures by reason. */
export async function createAll(client: KubeClient, namespace: string, plan: PodPlan, follower: PodFollower, signal: AbortSignal, now: () => number): Promise<Map<string, { pods: number; example: string }>> {
  const failures = new Map<string, { pods: number; example: string }>();
  const fail = (what: string, err: unknown): void => {
    if (signal.aborted) return;
    if (err instanceof KubeError && err.forbidden && /cannot create resource/.test(err.detail)) throw explainApiFailure(err);
    const reason = err instanceof KubeError ? err.summary.slice(0, 200) : describeError(err);
    const group = failures.get(reason) ?? { pods: 0, example: what };
    group.pods += 1;
    failures.set(reason, group);
  };
  const indexes = [...Array(plan.pods).keys()];
  if (plan.pvcStorageClass !== undefined) {
    await Promise.all(indexes.map((i) => client.create(PERSISTENTVOLUMECLAIMS, claimObject(plan, i), { namespace, signal }).catch((err) => fail(`claim ${i}`, err))));
  }
  if (signal.aborted) throw new Interrupted();
  await Promise.all(indexes.map(async (i) => {
    const name = podName(i, plan.pods);
    // Creation is when the request left (after connecting and TLS): the client's own queueing is not the cluster's.
    follower.sending(name, now());
    try {
      await client.create(PODS, podObject(plan, i), { namespace, signal, onWritten: () => follower.sending(name, now()) });
      follower.createdOk(name);
    } catch (err) {
      fail(name, err);
    }
  }));
  if (signal.aborted) throw new Interrupted();
  if (follower.counts().created === 0 && failures.size > 0) {
    const [reason] = [...failures.keys()];
    throw new MeasureError(`no pod could be created in namespace ${namespace}: ${reason}`);
  }
  return failures;
}

