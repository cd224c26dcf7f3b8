// The shipped manifests on a real control plane, and the agent as the DaemonSet runs it: the
// kustomization applied with the real kubectl, a Pod of the DaemonSet bound to a node, the token the
// kubelet would mount into it (TokenRequest bound to that Pod, so it carries the node-name claim),
// and the container's args, env and rules as the server holds them, mapped onto a local run of the bundle.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { AgentProcess, buildApp } from './bundled-agent.ts';
import { ControlPlane, type ControlPlaneOptions } from './control-plane.ts';
import { createBoundPod, podBoundToken, waitForAdmission } from './kube-objects.ts';
import type { K8sObject } from './manifests.ts';
import { REPORTING_COMPONENT } from '../../src/wire/events.ts';

export const AGENT_NAMESPACE = 'node-tuning-advisor';
export const AGENT_SA = 'node-tuning-advisor';
export const AGENT_USER = `system:serviceaccount:${AGENT_NAMESPACE}:${AGENT_SA}`;
export const PREFIX = 'node-tuning-advisor.io/';
/**
 * The agent's managedFields entry on its Node, named by its User-Agent (src/kube/requests.ts). The
 * admission policy lets it change only entries that own nothing but our annotations, so the name must
 * be its own: an entry shared with another writer's fields would get its writes refused.
 */
export const AGENT_FIELD_MANAGER = 'node-tuning-advisor';
export const CRD_DIR = path.resolve(import.meta.dirname, '../fixtures/crds');
const MERGE = 'application/merge-patch+json';

export interface Applied {
  code: number;
  stdout: string;
  stderr: string;
  /** The YAML given to kubectl apply. */
  input: string;
  objects: K8sObject[];
  skipped: number;
}

/**
 * `kubectl kustomize DIR | kubectl apply -f -` with the real kubectl against the real server, leaving
 * out the kinds in `skip` (objects whose CRD the test cluster does not have).
 */
export async function applyKustomization(cp: ControlPlane, dir: string, skip: string[] = []): Promise<Applied> {
  const built = await cp.kubectl(['kustomize', dir]);
  if (built.code !== 0) throw new Error(`kubectl kustomize ${dir}: ${built.stderr}`);
  const docs = parseAllDocuments(built.stdout).filter((d) => d.contents !== null);
  const kept = docs.filter((d) => !skip.includes((d.toJS() as K8sObject).kind));
  const input = kept.map((d) => d.toString()).join('---\n');
  const applied = await cp.kubectl(['apply', '-f', '-'], { input });
  return { ...applied, input, objects: kept.map((d) => d.toJS() as K8sObject), skipped: docs.length - kept.length };
}

/** kubectl apply the CRD files and wait until each is Established (served). */
export async function installCrds(cp: ControlPlane, files: string[]): Promise<void> {
  const applied = await cp.kubectl(['apply', ...files.flatMap((f) => ['-f', f])]);
  if (applied.code !== 0) throw new Error(`installing CRDs: ${applied.stderr}`);
  const waited = await cp.kubectl(['wait', '--for=condition=Established', '--timeout=60s', ...files.flatMap((f) => ['-f', f])]);
  if (waited.code !== 0) throw new Error(`CRDs not established: ${waited.stderr}`);
}

export interface AgentIdentity {
  node: string;
  token: string;
  kubeconfig: string;
  pod: any;
}

/**
 * What the kubelet gives a DaemonSet pod on `node`: a Pod of the agent's ServiceAccount bound to that
 * node and a token bound to the Pod. Waits until the shipped RBAC and policy let that token do its
 * job (a server-side dry run of a patch of its own annotations), since both take a moment to apply.
 * `namespace`: where the agent's ServiceAccount is (a Helm release's namespace); `serviceAccount`: its name (a kustomize namePrefix renames it).
 */
export async function agentIdentity(cp: ControlPlane, node: string, dir: string, podName = `agent-${node}`, namespace = AGENT_NAMESPACE, serviceAccount = AGENT_SA): Promise<AgentIdentity> {
  const pod = await createBoundPod(cp, namespace, podName, node, serviceAccount);
  const token = await podBoundToken(cp, namespace, serviceAccount, pod);
  await mkdir(dir, { recursive: true });
  const kubeconfig = await cp.writeKubeconfig(path.join(dir, `${podName}.kubeconfig`), `system:serviceaccount:${namespace}:${serviceAccount}`, token);
  const probe = { metadata: { annotations: { [`${PREFIX}probe`]: 'x' } } };
  await waitForAdmission(async () => (await cp.request('PATCH', `/api/v1/nodes/${node}?dryRun=All&fieldManager=${AGENT_FIELD_MANAGER}`, probe, { token, contentType: MERGE })).status, 200, 30_000);
  return { node, token, kubeconfig, pod };
}

export interface LocalRun {
  args: string[];
  env: Record<string, string>;
}

/**
 * The agent container of the DaemonSet `name` as the server holds it: its args with the pod's paths
 * replaced by local ones (--host-root, --rules from the mounted ConfigMaps, --metrics-addr on loopback),
 * its env with the downward-API values filled in as the kubelet would, and its ConfigMaps written to `rulesDir` (the
 * rules) and `rulesDir-<volume>` (the others). `namespace`: where the DaemonSet is (a Helm release's namespace).
 */
export async function daemonSetRun(cp: ControlPlane, name: string, local: { node: string; hostRoot: string; rulesDir: string; kubeconfig: string; namespace?: string }): Promise<LocalRun> {
  const namespace = local.namespace ?? AGENT_NAMESPACE;
  const ds = await cp.must('GET', `/apis/apps/v1/namespaces/${namespace}/daemonsets/${name}`);
  const spec = ds.spec.template.spec;
  const container = spec.containers.find((c: { name: string }) => c.name === 'agent');
  // Each ConfigMap volume (the rules; the optional overrides) as the kubelet would mount it: its
  // files in a directory, an empty directory for an optional one that does not exist.
  const mounted = new Map<string, string>();
  for (const volume of spec.volumes.filter((v: { configMap?: unknown }) => v.configMap)) {
    const mountPath = container.volumeMounts.find((m: { name: string }) => m.name === volume.name).mountPath as string;
    const dir = mounted.size === 0 ? local.rulesDir : `${local.rulesDir}-${volume.name}`;
    mounted.set(mountPath, dir);
    await mkdir(dir, { recursive: true });
    const res = await cp.request('GET', `/api/v1/namespaces/${namespace}/configmaps/${volume.configMap.name}`);
    if (res.status === 404 && volume.configMap.optional) continue;
    if (res.status !== 200) throw new Error(`configmap ${volume.configMap.name}: HTTP ${res.status}`);
    for (const [file, text] of Object.entries((res.body.data ?? {}) as Record<string, string>)) await writeFile(path.join(dir, file), text);
  }
  const args = (container.args as string[]).map((arg) => {
    if (arg.startsWith('--host-root=')) return `--host-root=${local.hostRoot}`;
    if (arg.startsWith('--metrics-addr=')) return '--metrics-addr=127.0.0.1:0';
    if (arg.startsWith('--rules=')) {
      const value = arg.slice('--rules='.length);
      const [mountPath, dir] = [...mounted].find(([m]) => value === m || value.startsWith(`${m}/`)) ?? [];
      return mountPath ? `--rules=${dir}${value.slice(mountPath.length)}` : arg;
    }
    return arg;
  });
  const env: Record<string, string> = {};
  for (const e of container.env ?? []) {
    if (e.value !== undefined) env[e.name] = e.value;
    else if (e.valueFrom?.fieldRef?.fieldPath === 'spec.nodeName') env[e.name] = local.node;
    else if (e.valueFrom?.fieldRef?.fieldPath === 'metadata.namespace') env[e.name] = namespace;
    else throw new Error(`env ${e.name}: the test does not know how to fill ${JSON.stringify(e.valueFrom)}`);
  }
  // Outside a pod the in-cluster config is not there: the kubeconfig carries the pod's token instead.
  return { args: [...args, `--kubeconfig=${local.kubeconfig}`], env };
}

/** Our annotations on a Node as the server holds them. */
export async function ownAnnotations(cp: ControlPlane, node: string): Promise<Record<string, string>> {
  const obj = await cp.must('GET', `/api/v1/nodes/${node}`);
  return Object.fromEntries(Object.entries((obj.metadata.annotations ?? {}) as Record<string, string>).filter(([k]) => k.startsWith(PREFIX)));
}

/** Events the server holds about a Node, from any namespace (as `kubectl describe node` finds them). */
/**
 * The advisor's Events about a Node. Others are left out: kube-controller-manager's node controller
 * posts RegisteredNode for each new Node, at a moment a loaded machine can delay past any test's writes.
 */
export async function nodeEvents(cp: ControlPlane, node: string): Promise<any[]> {
  const list = await cp.must('GET', `/api/v1/events?fieldSelector=${encodeURIComponent(`involvedObject.kind=Node,involvedObject.name=${node}`)}`);
  return list.items.filter((e: any) => e.reportingComponent === REPORTING_COMPONENT || e.source?.component === REPORTING_COMPONENT);
}

export interface DeploySuite {
  cp: ControlPlane;
  tmp: string;
  /** The bundle, built in the background while the control plane starts. */
  bundle: Promise<string>;
  stop(): Promise<void>;
}

/** One control plane and one bundled app in a temp dir: what every deploy-style suite starts with. */
export async function startDeploySuite(prefix: string, options: ControlPlaneOptions = {}): Promise<DeploySuite> {
  const tmp = await mkdtemp(path.join(tmpdir(), prefix));
  const bundle = buildApp(path.join(tmp, 'app'));
  bundle.catch(() => {}); // awaited by the tests; a failure shows there
  const cp = await ControlPlane.start(options);
  return { cp, tmp, bundle, stop: async () => { await cp.stop(); await rm(tmp, { recursive: true, force: true }); } };
}

/** `agent --once` as the DaemonSet `name` runs it on `node`, with `identity`'s pod-bound token; resolves once it exited 0. */
export async function agentOnceAsDeployed(suite: DeploySuite, identity: AgentIdentity, local: { hostRoot: string; rulesDir: string }, name = 'node-tuning-advisor'): Promise<AgentProcess> {
  const run = await daemonSetRun(suite.cp, name, { node: identity.node, kubeconfig: identity.kubeconfig, ...local });
  const agent = AgentProcess.start(await suite.bundle, [...run.args, '--once'], run.env);
  const code = await agent.wait();
  if (code !== 0) throw new Error(`agent --once exited ${code}:\n${agent.log}`);
  return agent;
}
