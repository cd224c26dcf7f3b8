// One measurement: checks, a labelled namespace, N pods at once, followed by one pod watch until
// every pod is Ready (or ended), the timeout, or an interrupt; then the namespace is deleted, always,
// and the run waits (bounded) until the kubelet has removed the pods, so the next run starts on a
// quiet node. The measured numbers are fixed before cleanup starts.
import { hostname, userInfo } from 'node:os';
import type { KubeClient } from '../kube/client.ts';
import { describeError } from '../kube/errors.ts';
import { Informer } from '../kube/informer.ts';
import type { KubeObject } from '../kube/objects.ts';
import { EVENTS, NAMESPACES, NODES, PODS } from '../kube/resources.ts';
import { advisorSnapshot } from './advisor.ts';
import { PodFollower, type Counts } from './follow.ts';
import { deleteNamespace } from './leftovers.ts';
import { FALLBACK_IMAGE, MEASURE_SELECTOR, namespaceObject, pauseImageOf, tolerationsFor, type Placement, type PodPlan } from './objects.ts';
import { MeasureError, checkPermissions, checkStorageClass, checkedNode, explainApiFailure, requiredPermissions, roomOnNode } from './preflight.ts';
import { Interrupted, createAll, waitForServiceAccount } from './create.ts';
import { buildMeasurement, type Context } from './summary.ts';
import type { Measurement } from './result.ts';
import { settleEarlierRuns, type LeftoverPolicy } from './earlier.ts';

type Obj = Record<string, any>;

export interface MeasureOptions {
  node: string;
  pods: number;
  image?: string;
  placement: Placement;
  pvcStorageClass?: string;
  pvcSize: string;
  timeoutMs: number;
  leftovers: LeftoverPolicy;
  /** How long cleanup waits for the pods to be gone (the namespace deletion itself is always sent). */
  cleanupWaitMs?: number;
  /** How long to wait for the namespace's default ServiceAccount (kube-controller-manager creates it). */
  serviceAccountWaitMs?: number;
}

export type Stage = 'preparing' | 'creating' | 'starting' | 'cleaning up';

export interface Progress {
  stage: Stage;
  total: number;
  counts: Counts;
  elapsedMs: number;
}

export interface RunHooks {
  /** First Ctrl-C / SIGTERM: stop measuring, clean up. */
  signal: AbortSignal;
  /** Second one: stop waiting for the cleanup (the deletion request was already sent). */
  cleanupSignal?: AbortSignal;
  notice(line: string): void;
  progress?(progress: Progress): void;
  confirm?(question: string): Promise<boolean>;
  /** Requests that failed so far (recorded by the client's onRequest), for the result. */
  apiFailures?(): Measurement['api']['failed'];
  now?(): number;
}

export interface Cleanup {
  namespace: string | undefined;
  deleteRequested: boolean;
  /** Pods still present when the wait ended (0: all gone). */
  podsLeft: number;
  problem?: string;
}

export type RunResult =
  | { outcome: 'measured'; measurement: Measurement; cleanup: Cleanup }
  | { outcome: 'interrupted'; cleanup: Cleanup };

const PROGRESS_EVERY_MS = 250;
/** The namespace expires this long after the run's own timeout: then it is a leftover. */
const EXPIRY_SLACK_MS = 10 * 60_000;

export async function measurePodStartup(client: KubeClient, o: MeasureOptions, hooks: RunHooks): Promise<RunResult> {
  const now = hooks.now ?? Date.now;
  const signal = hooks.signal;
  const withClaims = o.pvcStorageClass !== undefined;
  const node = await checkedNode(client, o.node, o.placement, signal);
  await checkPermissions(client, requiredPermissions(withClaims), signal);
  const [room, , cluster, controlPlane] = await Promise.all([
    roomOnNode(client, node, signal),
    withClaims ? checkStorageClass(client, o.pvcStorageClass as string, o.placement, signal) : undefined,
    clusterVersion(client, signal),
    controlPlaneNodes(client, signal),
    settleEarlierRuns(client, o.node, o.leftovers, hooks, now()),
  ]);
  if (signal.aborted) return { outcome: 'interrupted', cleanup: { namespace: undefined, deleteRequested: false, podsLeft: 0 } };
  if (room !== undefined && room.room < o.pods) {
    throw new MeasureError(`node "${o.node}" has room for ${room.room} more pods (allocatable ${room.allocatable}, ${room.running} not finished there); use --pods ${Math.max(1, room.room)} or fewer`);
  }
  const fromNode = pauseImageOf(node);
  const image = o.image ?? fromNode ?? FALLBACK_IMAGE;
  if (o.image === undefined && fromNode === undefined) hooks.notice(`node ${o.node} lists no pause image in status.images: using ${FALLBACK_IMAGE}, whose pull (if any) counts in the creation phase; pass --image to choose`);
  const plan: PodPlan = { node: o.node, pods: o.pods, image, placement: o.placement, pvcSize: o.pvcSize, tolerations: tolerationsFor(node.spec?.taints), ...(withClaims ? { pvcStorageClass: o.pvcStorageClass as string } : {}) };
  const context: Context = {
    options: o, plan, node, imageSource: o.image !== undefined ? 'flag' : fromNode !== undefined ? 'node' : 'fallback',
    cluster, advisor: advisorSnapshot(node, controlPlane),
  };
  return runInNamespace(client, context, hooks, now);
}

async function clusterVersion(client: KubeClient, signal: AbortSignal): Promise<{ version: string } | { unknown: string }> {
  try {
    return { version: (await client.serverVersion({ signal, timeoutMs: 10_000 })).gitVersion };
  } catch (err) {
    return { unknown: `GET /version: ${describeError(err)}` };
  }
}

/** Control-plane nodes, metadata only: their agents' annotations hold the scheduler's and controller-manager's limits. */
async function controlPlaneNodes(client: KubeClient, signal: AbortSignal): Promise<Obj[] | { unknown: string }> {
  try {
    const list = await client.list(NODES, { labelSelector: 'node-role.kubernetes.io/control-plane', metadataOnly: true, limit: 100, resourceVersion: '0', signal });
    return list.items.slice(0, 100);
  } catch (err) {
    return { unknown: `cannot list control-plane nodes: ${describeError(err)}` };
  }
}

async function runInNamespace(client: KubeClient, ctx: Context, hooks: RunHooks, now: () => number): Promise<RunResult> {
  const { options: o, plan } = ctx;
  const follower = new PodFollower(o.node, o.pods, now);
  const started = now();
  const cleanup: Cleanup = { namespace: undefined, deleteRequested: false, podsLeft: 0 };
  let stage: Stage = 'preparing';
  let burstAt = started;
  const ticker = setInterval(() => hooks.progress?.({ stage, total: o.pods, counts: follower.counts(), elapsedMs: now() - burstAt }), PROGRESS_EVERY_MS);
  const informers: Informer<KubeObject>[] = [];
  try {
    const user = `${safeUser()}@${hostname()}`;
    let namespace: Obj;
    try {
      // Not tied to the interrupt: once sent, the answer says what to delete.
      namespace = await client.create(NAMESPACES, namespaceObject(o.node, started, started + o.timeoutMs + EXPIRY_SLACK_MS, user));
    } catch (err) {
      throw explainApiFailure(err);
    }
    const name = namespace.metadata.name as string;
    cleanup.namespace = name;
    hooks.notice(`namespace ${name} created; ${o.pods} pod${o.pods === 1 ? '' : 's'} on ${o.node} (${plan.placement === 'scheduler' ? 'placed by the scheduler' : 'spec.nodeName, scheduler bypassed'}), image ${plan.image}`);
    informers.push(watchPods(client, name, follower, hooks));
    if (plan.pvcStorageClass !== undefined) informers.push(watchNode(client, o.node, follower, hooks));
    for (const informer of informers) informer.start();
    await waitForServiceAccount(client, name, namespace.metadata.resourceVersion as string, o.serviceAccountWaitMs ?? 30_000, hooks.signal);
    stage = 'creating';
    burstAt = now();
    const createErrors = await createAll(client, name, plan, follower, hooks.signal, now);
    stage = 'starting';
    const silence = warnIfNoKubeletStatus(follower, o.node, hooks);
    let outcome: Awaited<ReturnType<typeof follow>>;
    try {
      outcome = await follow(follower, burstAt + o.timeoutMs, hooks.signal, now);
    } finally {
      clearTimeout(silence);
    }
    if (outcome === 'interrupted') throw new Interrupted();
    const finishedAt = now();
    if (outcome === 'timeout') await finalList(client, name, follower, hooks);
    const pulls = await imagePulls(client, name, hooks.signal);
    const failed = hooks.apiFailures?.() ?? [];
    const measurement = buildMeasurement(ctx, follower, {
      namespace: name, outcome: follower.settled ? 'complete' : outcome, burstAt, finishedAt, createErrors, pulls,
      requests: client.stats.requests, failedRequests: failed.length,
    });
    stage = 'cleaning up';
    await cleanUp(client, cleanup, follower, hooks, informers, o.cleanupWaitMs ?? 60_000);
    measurement.api = { requests: client.stats.requests, failed: hooks.apiFailures?.() ?? [] };
    return { outcome: 'measured', measurement, cleanup };
  } catch (err) {
    stage = 'cleaning up';
    await cleanUp(client, cleanup, follower, hooks, informers, o.cleanupWaitMs ?? 60_000);
    if (err instanceof Interrupted || (hooks.signal.aborted && !(err instanceof MeasureError))) return { outcome: 'interrupted', cleanup };
    throw err;
  } finally {
    clearInterval(ticker);
  }
}

function safeUser(): string {
  try {
    return userInfo().username;
  } catch {
    return `uid ${process.getuid?.() ?? '?'}`;
  }
}

function watchPods(client: KubeClient, namespace: string, follower: PodFollower, hooks: RunHooks): Informer<KubeObject> {
  return new Informer<KubeObject>(client, PODS, { name: 'pods', what: `pods in namespace ${namespace}`, namespace, log: (line) => hooks.notice(line) }).on({
    added: (pod) => follower.podEvent('ADDED', pod),
    updated: (pod) => follower.podEvent('MODIFIED', pod),
    deleted: (pod) => follower.podEvent('DELETED', pod),
    failed: () => follower.watchFailed(),
    listed: () => follower.listed(),
  });
}

/** The operator hears within 30 s when the node's kubelet writes nothing (not running, not reaching the API). */
export const NO_STATUS_WARNING_MS = 30_000;

function warnIfNoKubeletStatus(follower: PodFollower, node: string, hooks: RunHooks): NodeJS.Timeout {
  const timer = setTimeout(() => {
    if (!follower.kubeletWrote && follower.counts().created > 0) hooks.notice(`no status from ${node}'s kubelet for ${NO_STATUS_WARNING_MS / 1000} s: is it running?`);
  }, NO_STATUS_WARNING_MS);
  timer.unref();
  return timer;
}

/** Before any pod is declared not Ready: one LIST, so a pod whose events the watch lost still counts (flagged). */
async function finalList(client: KubeClient, namespace: string, follower: PodFollower, hooks: RunHooks): Promise<void> {
  try {
    const list = await client.list(PODS, { namespace, labelSelector: MEASURE_SELECTOR, timeoutMs: 15_000 });
    for (const pod of list.items) follower.podEvent('MODIFIED', pod, true);
  } catch (err) {
    hooks.notice(`the final list of pods in ${namespace} failed (${describeError(err)}): pods not seen Ready on the watch are reported not Ready`);
  }
}

/** Image pull time per pod from the kubelet's Pulled events ("… in 1.234s (1.234s including waiting)"); none when refused or absent. */
async function imagePulls(client: KubeClient, namespace: string, signal: AbortSignal): Promise<Map<string, number>> {
  const pulls = new Map<string, number>();
  try {
    const list = await client.list(EVENTS, { namespace, fieldSelector: 'reason=Pulled', limit: 500, timeoutMs: 10_000, signal });
    for (const event of list.items as Obj[]) {
      const pod = event?.involvedObject?.name;
      const ms = pullDurationMs(event?.message);
      if (typeof pod === 'string' && ms !== undefined) pulls.set(pod, Math.max(ms, pulls.get(pod) ?? 0));
    }
  } catch { /* an older role without `list events`: no pull times */ }
  return pulls;
}

/** "Successfully pulled image "x" in 1.234s (…)" → 1234; Go durations: 850ms, 1m2.5s. */
export function pullDurationMs(message: unknown): number | undefined {
  if (typeof message !== 'string') return undefined;
  const m = /\bin ((?:\d+(?:\.\d+)?(?:h|m|s|ms|µs|us))+)(?:\s|$)/.exec(message.slice(0, 500));
  if (!m) return undefined;
  const units: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1000, ms: 1, us: 0.001, 'µs': 0.001 };
  let total = 0;
  for (const [, n, unit] of (m[1] as string).matchAll(/(\d+(?:\.\d+)?)(ms|µs|us|h|m|s)/g)) total += Number(n) * (units[unit as string] as number);
  return Math.round(total);
}

function watchNode(client: KubeClient, node: string, follower: PodFollower, hooks: RunHooks): Informer<KubeObject> {
  return new Informer<KubeObject>(client, NODES, { name: 'node', what: `node ${node}`, fieldSelector: `metadata.name=${node}`, log: (line) => hooks.notice(line) }).on({
    added: (n) => follower.nodeEvent('ADDED', n),
    updated: (n) => follower.nodeEvent('MODIFIED', n),
    deleted: (n) => follower.nodeEvent('DELETED', n),
  });
}

/** Until every pod is Ready or ended, the timeout, or the interrupt. */
async function follow(follower: PodFollower, deadline: number, signal: AbortSignal, now: () => number): Promise<'complete' | 'timeout' | 'interrupted'> {
  const outcome = await waitUntil(follower, () => follower.settled, deadline, signal, now);
  return outcome === 'done' ? 'complete' : outcome;
}

/** Woken by each change the watches bring (no polling) until `done`, the deadline or the abort; leaves no timer or listener behind. */
async function waitUntil(follower: PodFollower, done: () => boolean, deadline: number, signal: AbortSignal | undefined, now: () => number): Promise<'done' | 'timeout' | 'interrupted'> {
  let timer: NodeJS.Timeout | undefined;
  let onAbort = (): void => {};
  const stopped = new Promise<'timeout' | 'interrupted'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), Math.max(0, deadline - now()));
    onAbort = () => resolve('interrupted');
    if (signal?.aborted) onAbort();
    else signal?.addEventListener('abort', onAbort, { once: true });
  });
  try {
    while (!done()) {
      const next = await Promise.race([follower.nextChange().then(() => 'change' as const), stopped]);
      if (next !== 'change') return next;
    }
    return 'done';
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
  }
}

/** Delete the namespace (always), then wait until the kubelet has removed the pods, or give up. */
async function cleanUp(client: KubeClient, cleanup: Cleanup, follower: PodFollower, hooks: RunHooks, informers: Informer<KubeObject>[], cleanupWaitMs: number): Promise<void> {
  try {
    if (cleanup.namespace === undefined) return;
    // The pods first, in one request: the kubelet starts stopping them at once, where the namespace
    // controller would take its time (seconds) to get to them. Refused (an older role): it still does.
    if (follower.counts().present > 0) {
      await client.deleteCollection(PODS, { namespace: cleanup.namespace, labelSelector: MEASURE_SELECTOR, timeoutMs: 15_000 }).catch(() => {});
    }
    try {
      await deleteNamespace(client, cleanup.namespace);
      cleanup.deleteRequested = true;
    } catch (err) {
      cleanup.problem = `could not delete namespace ${cleanup.namespace} (${describeError(err)}); delete it with kubectl delete namespace ${cleanup.namespace}`;
      return;
    }
    const deadline = Date.now() + Math.min(hooks.signal.aborted ? 30_000 : Infinity, cleanupWaitMs);
    await waitUntil(follower, () => follower.counts().present === 0, deadline, hooks.cleanupSignal, Date.now);
    cleanup.podsLeft = follower.counts().present;
  } finally {
    await Promise.all(informers.map((i) => i.stop()));
  }
}
