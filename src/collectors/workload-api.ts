// API-derived facts for attach mode, attach latency and pod start-up phases. They come from the
// agent's watch caches, handed to the scan as a snapshot (ctx.cluster); `scan` has no cluster, so
// there they are unknown and workload.apiView is false (the rules that need them do not apply).
// Start-up and attach figures cover the agent's --startup-window (workload.window, e.g. "1h").
import type { Collector } from './collector.ts';
import type { FactSet } from '../facts/fact-set.ts';
import { driverOf } from '../workload/attach-latency.ts';
import { STARTUP_FIGURES, type WorkloadSnapshot } from '../workload/snapshot.ts';
import { windowText } from '../workload/window.ts';

const PHASE_FACTS = STARTUP_FIGURES.flatMap((p) => [`pods.startup.${p}.p50Ms`, `pods.startup.${p}.p99Ms`]);
const STARTUP_FACTS = ['pods.startup.samples', 'pods.startup.dominantPhase', 'pods.startup.trackedPods', ...PHASE_FACTS];
const ATTACH_MODE_FACTS = ['volumes.nodeDrivers', 'volumes.attachDrivers', 'volumes.attachedNow', 'volumes.attachedDrivers', 'volumes.attachRequiredInUse'];
const ATTACH_LATENCY_FACTS = ['volumes.attachSamples', 'volumes.attachP50Ms', 'volumes.attachP90Ms', 'volumes.attachSampleDrivers'];
/** In-tree plugins with an attach step, by the plugin part of a unique volume name. */
const ATTACHABLE_IN_TREE = new Set(['kubernetes.io/iscsi', 'kubernetes.io/fc', 'kubernetes.io/rbd', 'kubernetes.io/aws-ebs', 'kubernetes.io/gce-pd', 'kubernetes.io/azure-disk', 'kubernetes.io/cinder', 'kubernetes.io/vsphere-volume', 'kubernetes.io/portworx-volume']);
const WINDOW_FACT = 'workload.window';
const NO_CLUSTER = 'needs the Kubernetes API: the agent watches pods, this Node, CSIDriver and CSINode objects; `scan` reads only the host';

function unknownAll(facts: FactSet, keys: string[], reason: string, source: string): void {
  for (const key of keys) facts.unknown(key, reason, source);
}

/** CSI: the driver's CSIDriver says so (unset or no object: attach); in-tree: the plugin's kind. */
function attachBased(name: string, c: WorkloadSnapshot): boolean {
  if (c.volumesAttached.includes(name)) return true;
  const driver = driverOf(name);
  if (name.startsWith('kubernetes.io/csi/')) return c.csiDrivers[driver]?.attachRequired !== false;
  return ATTACHABLE_IN_TREE.has(driver);
}

function attachMode(facts: FactSet, c: WorkloadSnapshot): void {
  const nodeSrc = `api:nodes/${c.nodeName}`;
  if (c.unsynced.csiNode) facts.unknown('volumes.nodeDrivers', c.unsynced.csiNode, `api:csinodes/${c.nodeName}`);
  else facts.set('volumes.nodeDrivers', c.csiNodeDrivers, `api:csinodes/${c.nodeName}`, c.csiNodeDrivers === null ? 'this node has no CSINode object' : undefined);
  if (c.unsynced.csiDrivers) {
    unknownAll(facts, ['volumes.attachDrivers', 'volumes.attachRequiredInUse'], c.unsynced.csiDrivers, 'api:csidrivers');
  } else {
    const host = facts.value('volumes.registeredPlugins');
    const registered = new Set([...(c.csiNodeDrivers ?? []), ...(Array.isArray(host) ? host.map(String) : [])]);
    const attach = [...registered].filter((d) => c.csiDrivers[d]?.attachRequired !== false).sort();
    facts.set('volumes.attachDrivers', attach, 'api:csidrivers', 'drivers registered on this node (CSINode, plugins_registry) whose CSIDriver.attachRequired is true, unset or missing');
    if (c.unsynced.node) facts.unknown('volumes.attachRequiredInUse', c.unsynced.node, nodeSrc);
    else facts.set('volumes.attachRequiredInUse', c.volumesInUse.filter((n) => attachBased(n, c)).length, `${nodeSrc} status.volumesInUse`, 'volumes in use that need an attach (CSIDriver.attachRequired, or an in-tree block plugin)');
  }
  if (c.unsynced.node) return unknownAll(facts, ['volumes.attachedNow', 'volumes.attachedDrivers'], c.unsynced.node, nodeSrc);
  facts.set('volumes.attachedNow', c.volumesAttached.length, `${nodeSrc} status.volumesAttached`);
  facts.set('volumes.attachedDrivers', [...new Set(c.volumesAttached.map(driverOf))].sort(), `${nodeSrc} status.volumesAttached`);
}

function attachLatency(facts: FactSet, c: WorkloadSnapshot): void {
  const why = c.unsynced.pods ?? c.unsynced.node;
  if (why) return unknownAll(facts, ATTACH_LATENCY_FACTS, why, 'api:pods');
  const src = 'inferred';
  const detail = `pod bound → its volume in Node.status.volumesAttached, as the watches saw it; ${overWindow(c, 'attaches', c.attach.overflowed)}`;
  facts.set('volumes.attachSamples', c.attach.samples, src, detail);
  facts.set('volumes.attachP50Ms', c.attach.p50Ms, src, detail);
  facts.set('volumes.attachP90Ms', c.attach.p90Ms, src, detail);
  facts.set('volumes.attachSampleDrivers', c.attach.drivers, src, 'drivers of the sampled attaches, most frequent first');
}

/** "the pods received Ready in the last 1h (at most 1000: …)": what a figure covers. */
function overWindow(c: WorkloadSnapshot, what: string, overflowed: boolean): string {
  const window = windowText(c.window.ms);
  const cap = overflowed
    ? `more than ${c.window.maxSamples} in that time: the newest ${c.window.maxSamples} of them`
    : `at most the newest ${c.window.maxSamples}`;
  return `the ${what} of the last ${window} (--startup-window; ${cap})`;
}

function startup(facts: FactSet, c: WorkloadSnapshot): void {
  if (c.unsynced.pods) return unknownAll(facts, STARTUP_FACTS, c.unsynced.pods, 'api:pods');
  const src = `api:pods (fieldSelector spec.nodeName=${c.nodeName})`;
  const detail = 'created (API creationTimestamp, whole seconds) → Ready received on the watch; phases from the kubelet\'s stamps where its writes came late; statusDelay: its Ready stamp → the API showing it; '
    + overWindow(c, 'pods', c.startup.total.overflowed);
  facts.set('pods.startup.samples', c.startup.total.samples, src, detail);
  facts.set('pods.startup.trackedPods', c.trackedPods, src);
  for (const p of STARTUP_FIGURES) {
    const over = `${c.startup[p].samples} pods Ready in the last ${windowText(c.window.ms)}`;
    facts.set(`pods.startup.${p}.p50Ms`, c.startup[p].p50Ms, src, over);
    facts.set(`pods.startup.${p}.p99Ms`, c.startup[p].p99Ms, src, over);
  }
  const phases = STARTUP_FIGURES.filter((p) => p !== 'total' && c.startup[p].p99Ms !== null);
  const dominant = phases.sort((a, b) => (c.startup[b].p99Ms as number) - (c.startup[a].p99Ms as number))[0];
  facts.set('pods.startup.dominantPhase', dominant ?? null, 'inferred', 'the phase with the largest p99');
}

const workloadApi: Collector = {
  name: 'workload-api',
  provides: ['workload.apiView', WINDOW_FACT, ...ATTACH_MODE_FACTS, ...ATTACH_LATENCY_FACTS, ...STARTUP_FACTS],
  reads: ['volumes.registeredPlugins'],
  async collect({ facts, cluster }) {
    if (!cluster) {
      facts.set('workload.apiView', false, 'default', NO_CLUSTER);
      return unknownAll(facts, [WINDOW_FACT, ...ATTACH_MODE_FACTS, ...ATTACH_LATENCY_FACTS, ...STARTUP_FACTS], NO_CLUSTER, 'default');
    }
    facts.set('workload.apiView', true, 'api', `watches of node ${cluster.nodeName}`);
    facts.set(WINDOW_FACT, windowText(cluster.window.ms), 'flag:--startup-window', `how far back the pod start-up and volume attach figures reach; at most ${cluster.window.maxSamples} samples each`);
    attachMode(facts, cluster);
    attachLatency(facts, cluster);
    startup(facts, cluster);
  },
};

export default workloadApi;
