// A small cluster on the API stand-in (for views that need a report, not the API's semantics; the
// report's reads are tested on the real control plane): three control-plane nodes and three workers
// whose agents published real annotations (or none, or garbage), Tekton with its feature-flags
// ConfigMap and PipelineRuns in both workspace shapes, and CSI controller workloads whose running
// pods' logs hold throttling lines.
import { renderAnnotations } from '../../src/wire/annotations.ts';
import { FakeApiServer } from './fake-apiserver.ts';
import { finding, report } from './reports.ts';

export interface ClusterShape {
  /** Data of Tekton's feature-flags ConfigMap; undefined: Tekton not installed. */
  tektonFlags?: Record<string, string>;
  templateModes?: string[];
  claimModes?: string[];
  provisionerLog?: string;
  attacherLog?: string;
}

const CP = 'node-role.kubernetes.io/control-plane';
const recent = (minutesAgo: number) => new Date(Date.now() - minutesAgo * 60_000).toISOString();

export const THROTTLE_LINES = [
  `${recent(5)} I1201 10:00:00.000000       1 request.go:601] Waited for 1.19s due to client-side throttling, not priority and fairness, request: POST:https://10.96.0.1:443/api/v1/namespaces/default/events`,
  `${recent(4)} I1201 10:01:00.000000       1 request.go:591] Throttling request took 192.714335ms, request: POST:https://10.96.0.1:443/api/v1/namespaces/default/events`,
  `${recent(3)} I1201 10:02:00.000000       1 request.go:700] "Waited before sending request" delay="2.5s" reason="client-side throttling, not priority and fairness" verb="GET" URL="https://10.96.0.1:443/api/v1/persistentvolumeclaims"`,
].join('\n');

function nodeAnnotations(kind: 'cp' | 'worker'): Record<string, string> {
  if (kind === 'cp') {
    return renderAnnotations(report([
      finding('etcd-fsync-latency', 'fail', { severity: 'critical', category: 'etcd', scoreImpact: 15 }),
      finding('etcd-events-split', 'fail', { severity: 'info', category: 'etcd', scoreImpact: 1 }),
      finding('kernel-tick-rate', 'pass'),
    ]));
  }
  return renderAnnotations(report([finding('kernel-tick-rate', 'fail', { scoreImpact: 5 }), finding('etcd-fsync-latency', 'not-applicable')]));
}

export async function startCluster(shape: ClusterShape = {}): Promise<FakeApiServer> {
  const server = new FakeApiServer();
  await server.start();
  for (const name of ['cp-1', 'cp-2', 'cp-3']) server.addNode(name, nodeAnnotations('cp')).metadata.labels[CP] = '';
  server.addNode('worker-1', nodeAnnotations('worker'));
  server.addNode('worker-2');
  server.addNode('worker-3', { 'node-tuning-advisor.io/report': '{"schemaVersion":1,"score":"high"' });
  addTekton(server, shape);
  addCsi(server, shape);
  return server;
}

function addTekton(server: FakeApiServer, shape: ClusterShape): void {
  const c = server.collections;
  c.add('configmaps', { metadata: { name: 'feature-flags', namespace: 'team-a' }, data: { unrelated: 'yes' } });
  if (shape.tektonFlags === undefined) return;
  c.add('configmaps', {
    metadata: { name: 'feature-flags', namespace: 'tekton-pipelines', labels: { 'app.kubernetes.io/part-of': 'tekton-pipelines', 'app.kubernetes.io/instance': 'default' } },
    data: shape.tektonFlags,
  });
  c.add('storageclasses', { metadata: { name: 'longhorn', annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } }, provisioner: 'driver.longhorn.io' });
  c.add('storageclasses', { metadata: { name: 'nfs' }, provisioner: 'nfs.csi.k8s.io' });
  c.add('csidrivers', { metadata: { name: 'driver.longhorn.io' }, spec: {} });
  c.add('csidrivers', { metadata: { name: 'nfs.csi.k8s.io' }, spec: { attachRequired: false } });
  c.add('persistentvolumeclaims', { metadata: { name: 'shared-src', namespace: 'ci' }, spec: { accessModes: shape.claimModes ?? ['ReadWriteOnce'], storageClassName: 'nfs' }, status: { phase: 'Bound' } });
  c.add('pipelineruns', {
    metadata: { name: 'build-41', namespace: 'ci', creationTimestamp: recent(30) },
    spec: { pipelineRef: { name: 'build' }, workspaces: [{ name: 'cache', emptyDir: {} }, { name: 'src', persistentVolumeClaim: { claimName: 'shared-src' } }] },
  });
  c.add('pipelineruns', {
    metadata: { name: 'build-42', namespace: 'ci', creationTimestamp: recent(10) },
    spec: {
      pipelineRef: { name: 'build' },
      workspaces: [{ name: 'source', volumeClaimTemplate: { spec: { accessModes: shape.templateModes ?? ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } } }],
    },
  });
  workloadWithPod(server, 'tekton-pipelines', 'tekton-pipelines-controller', 'tekton-pipelines-controller-7d9',
    [{ name: 'tekton-pipelines-controller', image: 'registry.example/tektoncd/pipeline/controller:v0.65.0', args: ['-kube-api-qps', '5', '-kube-api-burst=10'] }]);
  c.setLog('tekton-pipelines', 'tekton-pipelines-controller-7d9', 'tekton-pipelines-controller', THROTTLE_LINES);
}

/** A Deployment and one Running pod of it (the stand-in has no controllers). */
function workloadWithPod(server: FakeApiServer, namespace: string, name: string, pod: string, containers: Record<string, unknown>[], serviceAccountName = 'default'): void {
  const labels = { 'app.kubernetes.io/name': name };
  server.collections.add('deployments', { metadata: { name, namespace, labels }, spec: { selector: { matchLabels: labels }, template: { metadata: { labels }, spec: { serviceAccountName, containers } } } });
  server.collections.add('pods', { metadata: { name: pod, namespace, labels }, spec: { serviceAccountName, containers }, status: { phase: 'Running' } });
}

function addCsi(server: FakeApiServer, shape: ClusterShape): void {
  const c = server.collections;
  // Longhorn's chart (templates/clusterrolebinding.yaml): its ServiceAccount bound cluster-wide, which is how report trusts it outside kube-system.
  c.add('clusterrolebindings', {
    metadata: { name: 'longhorn-bind' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'longhorn-role' },
    subjects: [{ kind: 'ServiceAccount', name: 'longhorn-service-account', namespace: 'longhorn-system' }],
  });
  workloadWithPod(server, 'longhorn-system', 'longhorn-csi-controller', 'longhorn-csi-controller-0', [
    { name: 'csi-provisioner', image: 'registry.example/sig-storage/csi-provisioner:v3.1.0', args: ['--v=2', '--csi-address=$(ADDRESS)'] },
    { name: 'csi-attacher', image: 'registry.example/sig-storage/csi-attacher:v4.5.0', args: ['--kube-api-qps=20', '--kube-api-burst=40'] },
    { name: 'longhorn-csi-plugin', image: 'registry.example/longhornio/longhorn-manager:v1.6.0' },
  ], 'longhorn-service-account');
  c.add('pods', { metadata: { name: 'web-1', namespace: 'default' }, spec: { containers: [{ name: 'web', image: 'nginx:1.27' }] } });
  c.setLog('longhorn-system', 'longhorn-csi-controller-0', 'csi-provisioner', shape.provisionerLog ?? THROTTLE_LINES);
  c.setLog('longhorn-system', 'longhorn-csi-controller-0', 'csi-attacher', shape.attacherLog ?? `${recent(2)} I1201 10:00:00.000000 1 main.go:99] Attacher started\n`);
}
