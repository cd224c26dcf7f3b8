// The shipped DaemonSet with the image built from the Dockerfile, as a pod on a real node: a real
// kubelet v1.36.2 with containerd (test/helpers/real-node.ts), its kube-api-qps/burst set to 7/13, on a
// real control plane with kube-controller-manager. `kubectl apply -k` of a kustomization over
// manifests/ as an operator writes one: the image (imported into the node's containerd, pull policy
// Never), a 10 s interval, and the kubelet's --config file mounted read-only at its place under
// /host (where a distribution overlay would mount it). A host directory the base mounts that this
// machine lacks (/run/systemd/system without systemd) points at an empty test dir instead: the
// kubelet would create it on the machine, and its mere presence tells programs that systemd runs.
// The pod reads the node through its hostPath mounts (the kubelet's process in /host/proc, its
// config), publishes annotations, labels and Events naming the kubelet's QPS/burst, serves /metrics,
// and reads the kubelet's HTTPS /metrics with its token: the real kubelet's webhook authentication
// and authorization (TokenReview, SubjectAccessReview) decide, with the shipped RBAC; without
// get nodes/metrics the kubelet answers 403 and the Node says so.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import { FINDINGS_KEY } from '../../src/wire/annotations.ts';
import { ControlPlane, realServerTier } from '../helpers/control-plane.ts';
import { imageTier, testImage, testImageArchive } from '../helpers/image.ts';
import { BASE, type K8sObject } from '../helpers/manifests.ts';
import { REAL_NODE_APISERVER_ARGS, RealNode, realNodeTier } from '../helpers/real-node.ts';
import { AGENT_NAMESPACE, PREFIX, nodeEvents, ownAnnotations } from '../helpers/shipped.ts';

const NODE = 'real-node-1';
const [QPS, BURST] = [7, 13];
/** A hang guard: scans run every 10 s; a pod starts in seconds on this node. */
const GUARD_MS = 60_000;

/** Polls `probe` until it returns a value (not undefined); fails after the hang guard with `what` and `explain()`. */
async function until<T>(what: string, probe: () => Promise<T | undefined>, explain: () => Promise<string> = async () => ''): Promise<T> {
  const deadline = Date.now() + GUARD_MS;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${GUARD_MS / 1000} s\n${await explain()}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** The kustomization an operator would write over manifests/ for this node (see the file's head). */
async function kustomization(cp: ControlPlane, dir: string, node: RealNode, image: { name: string; tag: string }): Promise<void> {
  const built = parseAllDocuments((await cp.kubectl(['kustomize', BASE])).stdout).map((d) => d.toJS() as K8sObject).filter(Boolean);
  const ds = built.find((o) => o.kind === 'DaemonSet') as K8sObject;
  const pod = ds.spec.template.spec;
  const args: string[] = pod.containers[0].args;
  const ops: object[] = [
    { op: 'add', path: '/spec/template/spec/containers/0/imagePullPolicy', value: 'Never' },
    { op: 'replace', path: `/spec/template/spec/containers/0/args/${args.findIndex((a) => a.startsWith('--interval='))}`, value: '--interval=10s' },
    { op: 'add', path: '/spec/template/spec/containers/0/args/-', value: '--startup-jitter=0s' },
    { op: 'add', path: '/spec/template/spec/volumes/-', value: { name: 'kubelet-config', hostPath: { path: node.configFile, type: 'File' } } },
    { op: 'add', path: '/spec/template/spec/containers/0/volumeMounts/-', value: { name: 'kubelet-config', mountPath: `/host${node.configFile}`, readOnly: true } },
  ];
  for (const [i, volume] of (pod.volumes as { name: string; hostPath?: { path: string } }[]).entries()) {
    if (!volume.hostPath || existsSync(volume.hostPath.path)) continue;
    const stand = path.join(dir, 'absent', volume.name);
    await mkdir(stand, { recursive: true });
    ops.push({ op: 'replace', path: `/spec/template/spec/volumes/${i}/hostPath/path`, value: stand });
  }
  const from = ds.spec.template.spec.containers[0].image.split(':')[0];
  await writeFile(path.join(dir, 'kustomization.yaml'), stringify({
    apiVersion: 'kustomize.config.k8s.io/v1beta1', kind: 'Kustomization',
    resources: [path.relative(dir, BASE)],
    images: [{ name: from, newName: image.name, newTag: image.tag }],
    patches: [{ target: { kind: 'DaemonSet', name: 'node-tuning-advisor' }, patch: stringify(ops) }],
  }));
}

describe('the image as the shipped DaemonSet\'s pod on a real node (kubelet v1.36.2, containerd)', { ...realServerTier(), ...imageTier(), ...realNodeTier() }, () => {
  let cp: ControlPlane | undefined;
  let node: RealNode | undefined;
  let tmp: string;
  let podIp = '';

  before(async () => {
    tmp = await mkdtemp(path.join(tmpdir(), 'nta-real-node-'));
    const [started, archive] = await Promise.all([ControlPlane.start({ scheduler: true, controllerManager: true, apiserverArgs: REAL_NODE_APISERVER_ARGS }), testImageArchive()]);
    cp = started;
    node = await RealNode.start(cp, NODE, { REAL_NODE_KUBE_API_QPS: String(QPS), REAL_NODE_KUBE_API_BURST: String(BURST) }, [archive]);
    const [name, tag] = (await testImage()).name.split(':') as [string, string];
    const dir = path.join(tmp, 'deploy');
    await mkdir(dir);
    await kustomization(cp, dir, node, { name, tag });
    const applied = await cp.kubectl(['apply', '-k', dir]);
    assert.equal(applied.code, 0, applied.stderr);
  });
  after(async () => {
    await node?.stop();
    await cp?.stop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  /** The agent's /metrics, from the host (which routes the node's pod subnet). */
  const metrics = async () => {
    assert.ok(podIp, 'no agent pod');
    return (await fetch(`http://${podIp}:20263/metrics`)).text();
  };

  test('the DaemonSet controller\'s pod runs the image on the real node and turns Ready', async () => {
    const pod = await until('a Ready agent pod', async () => {
      const pods = (await cp!.must('GET', `/api/v1/namespaces/${AGENT_NAMESPACE}/pods?labelSelector=app.kubernetes.io%2Fname%3Dnode-tuning-advisor`)).items;
      return pods.find((p: any) => p.status?.conditions?.some((c: { type: string; status: string }) => c.type === 'Ready' && c.status === 'True'));
    }, async () => {
      const ds = (await cp!.kubectl(['-n', AGENT_NAMESPACE, 'describe', 'ds,pods'])).stdout;
      const logs = (await cp!.kubectl(['-n', AGENT_NAMESPACE, 'logs', 'ds/node-tuning-advisor', '--tail=30'])).stdout;
      return `${ds}\n--- agent log ---\n${logs}`;
    });
    assert.equal(pod.spec.nodeName, NODE);
    assert.equal(pod.status.containerStatuses[0].image, (await testImage()).name);
    podIp = pod.status.podIP;
  });

  test('its annotations, labels and Events name the real kubelet\'s QPS/burst, read from its process and its --config file', async () => {
    const annotations = await until('the agent\'s annotations', async () => {
      const own = await ownAnnotations(cp!, NODE);
      return own[`${PREFIX}summary`] ? own : undefined;
    });
    assert.match(annotations[`${PREFIX}summary`] ?? '', new RegExp(`\\bkubelet=${QPS}/${BURST}\\b`), 'the summary\'s kubelet limits');
    assert.match(annotations[FINDINGS_KEY] ?? '', new RegExp(`kubelet-api-qps: kubeAPIQPS ${QPS}, kubeAPIBurst ${BURST} \\(kubelet 1\\.36\\.2\\)`), annotations[FINDINGS_KEY]);
    const labels = (await cp!.must('GET', `/api/v1/nodes/${NODE}`)).metadata.labels;
    assert.match(labels[`${PREFIX}grade`] ?? '', /^[A-F]$/);
    // The Events follow the annotations' PATCH.
    const event = await until('its kubelet-api-qps Event', async () => (await nodeEvents(cp!, NODE))
      .find((e) => e.reason === 'TuningRecommendation' && e.message.includes('kubelet-api-qps')));
    assert.match(event.message, new RegExp(`^WARN kubelet-api-qps: kubeAPIQPS ${QPS}, kubeAPIBurst ${BURST} \\(kubelet 1\\.36\\.2\\)`));
  });

  test('/metrics answers; the kubelet\'s HTTPS /metrics is read with the shipped RBAC, its start-up histograms included', async () => {
    const text = await until('a read of the kubelet\'s /metrics', async () => {
      const body = await metrics().catch(() => '');
      return /^node_tuning_advisor_kubelet_metrics_read\{result="ok"\} 1$/m.test(body) ? body : undefined;
    });
    assert.match(text, /^node_tuning_advisor_score \d+/m);
    // A pod started between two reads: the kubelet's own histograms give a p99 for the interval.
    await cp!.must('POST', '/api/v1/namespaces/default/pods', {
      apiVersion: 'v1', kind: 'Pod', metadata: { name: 'sleeper' },
      spec: { nodeName: NODE, containers: [{ name: 'pause', image: 'registry.k8s.io/pause:3.10', imagePullPolicy: 'Never' }] },
    });
    let seen = '';
    await until('a p99 of the kubelet\'s start-up histograms', async () => {
      seen = await metrics().catch((e: Error) => e.message);
      return /^node_tuning_advisor_kubelet_pod_start_p99_seconds\{histogram="pod_start_(sli|total)"\} [\d.]+$/m.test(seen) ? true : undefined;
    }, async () => {
      const sleeper = await cp!.must('GET', '/api/v1/namespaces/default/pods/sleeper');
      const logs = (await cp!.kubectl(['-n', AGENT_NAMESPACE, 'logs', 'ds/node-tuning-advisor', '--tail=8'])).stdout;
      return `sleeper: ${JSON.stringify(sleeper.status)}\n${seen.split('\n').filter((l) => l.includes('kubelet_')).join('\n')}\n${logs}`;
    });
  });

  test('without get nodes/metrics the real kubelet\'s SubjectAccessReview says 403, and the Node\'s findings name the fix', async () => {
    const url = '/apis/rbac.authorization.k8s.io/v1/clusterroles/node-tuning-advisor';
    const role = await cp!.must('GET', url);
    const without = role.rules.filter((r: { resources: string[] }) => !r.resources.includes('nodes/metrics'));
    assert.equal(without.length, role.rules.length - 1, 'the shipped ClusterRole has the nodes/metrics rule');
    await cp!.must('PUT', url, { ...role, rules: without });
    try {
      await until('a 403 from the kubelet', async () => (/^node_tuning_advisor_kubelet_metrics_read\{result="forbidden"\} 1$/m.test(await metrics().catch(() => '')) ? true : undefined));
      const line = await until('the Node\'s findings line', async () => String((await ownAnnotations(cp!, NODE))[FINDINGS_KEY] ?? '').split('\n').find((l) => l.includes('HTTP 403')));
      assert.equal(line, 'UNKN kubelet-pod-start-sli: pods the kubelet timed: HTTP 403: the agent\'s ClusterRole lacks get nodes/metrics');
    } finally {
      const now = await cp!.must('GET', url);
      await cp!.must('PUT', url, { ...now, rules: role.rules });
    }
  });
});
