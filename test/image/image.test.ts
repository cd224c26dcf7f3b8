// The image built from the Dockerfile with podman (scripts/image/build.ts; the FROM image assembled
// offline where no registry is reachable) and run as the DaemonSet runs its container: UID 0 without
// capabilities, no privilege escalation, read-only root, /tmp a 16 MiB tmpfs, the 128 MiB memory
// limit, the manifest's NODE_OPTIONS, the host read-only at /host. `scan` reads a fixture host; the
// agent, on the host's network with a pod-bound ServiceAccount token at the in-cluster path,
// publishes on a real control plane through the shipped RBAC and admission policy.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { mustPodman } from '../../scripts/image/podman.ts';
import { ControlPlane, freePort, realServerTier } from '../helpers/control-plane.ts';
import { asDeployedFlags, imageTier, mount, runImage, testImage } from '../helpers/image.ts';
import { createReadyNode } from '../helpers/kube-objects.ts';
import { BASE, REPO } from '../helpers/manifests.ts';
import { AGENT_NAMESPACE, agentIdentity, applyKustomization, daemonSetRun, nodeEvents, ownAnnotations, PREFIX } from '../helpers/shipped.ts';

const PACKAGE = JSON.parse(readFileSync(path.join(REPO, 'package.json'), 'utf8')) as { version: string };
const FIXTURE = path.join(REPO, 'test/fixtures/hosts/mixed-governors');

describe('the image, built with podman from the Dockerfile and run as the DaemonSet runs it', { ...imageTier(), concurrency: true }, () => {
  let deployed: string[];
  before(async () => {
    deployed = await asDeployedFlags();
    const { built } = await testImage();
    if (built) process.stderr.write(`image: built in ${built.seconds.toFixed(1)} s (base ${built.base})\n`);
  });

  test('--version prints the package version; the image is labelled with it, runs as 65534 and holds no node_modules', async () => {
    const version = await runImage([], ['--version']);
    assert.equal(version.code, 0, version.stderr);
    assert.match(version.stdout, new RegExp(`^node-tuning-advisor ${PACKAGE.version.replaceAll('.', '\\.')} \\(Node v24\\.`));
    const { store, name } = await testImage();
    const config = JSON.parse(await mustPodman(store, ['image', 'inspect', name]))[0];
    assert.equal(config.Labels['org.opencontainers.image.version'], PACKAGE.version);
    assert.equal(config.User, '65534:65534');
    const listing = await runImage(['--entrypoint', '/bin/ls'], ['-A', '/app']);
    assert.deepEqual(listing.stdout.trim().split('\n').sort(), ['dist', 'package.json', 'rules']);
  });

  test('scan of a fixture host at /host, with the DaemonSet\'s posture: the bundled rules decide, the fsync worker runs', async () => {
    const scan = await runImage([...deployed, ...mount(FIXTURE, '/host')], ['scan', '--host-root', '/host', '--output', 'json', '--fail-on', 'never']);
    assert.equal(scan.code, 0, scan.stderr);
    const status = Object.fromEntries((JSON.parse(scan.stdout) as { findings: { ruleId: string; status: string }[] }).findings.map((f) => [f.ruleId, f.status]));
    assert.equal(status['kernel-tick-rate'], 'fail', 'CONFIG_HZ=250 fails');
    assert.equal(status['cpu-governor'], 'fail');
    // The probe's worker thread is a file of its own in the bundle, and /tmp the only writable place.
    const probe = await runImage(deployed, ['probe', 'fsync', '--dir', '/tmp', '--size', '256KiB', '--output', 'json']);
    assert.equal(probe.code, 0, probe.stderr);
    const result = JSON.parse(probe.stdout) as { ok: boolean; samples: number };
    assert.equal(result.ok, true);
    assert.ok(result.samples > 100, `${result.samples} fdatasync samples`);
    const written = await runImage(deployed, ['probe', 'fsync', '--dir', '/app', '--size', '256KiB', '--output', 'json']);
    assert.notEqual(written.code, 0, 'the root filesystem is read-only');
  });
});

describe('the image\'s agent on a real control plane (host network, the in-cluster token path)', { ...imageTier(), ...realServerTier() }, () => {
  const NODE = 'image-node-1';
  let cp: ControlPlane;
  let tmp: string;

  before(async () => {
    tmp = await mkdtemp(path.join(tmpdir(), 'nta-image-agent-'));
    [cp] = await Promise.all([ControlPlane.start(), testImage()]);
    const applied = await applyKustomization(cp, BASE);
    assert.equal(applied.code, 0, applied.stderr);
    await createReadyNode(cp, NODE);
  });
  after(async () => {
    await cp?.stop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  test('agent --once, with the DaemonSet\'s args, env and rules ConfigMaps, publishes its Node\'s annotations and Events', async () => {
    const identity = await agentIdentity(cp, NODE, tmp);
    // What the kubelet mounts at the in-cluster path: the pod-bound token, the cluster CA, the namespace.
    const serviceAccount = path.join(tmp, 'serviceaccount');
    await mkdir(serviceAccount);
    await writeFile(path.join(serviceAccount, 'token'), identity.token);
    await writeFile(path.join(serviceAccount, 'ca.crt'), cp.caPem);
    await writeFile(path.join(serviceAccount, 'namespace'), AGENT_NAMESPACE);
    const rules = path.join(tmp, 'rules');
    const local = await daemonSetRun(cp, 'node-tuning-advisor', { node: NODE, hostRoot: '/host', rulesDir: rules, kubeconfig: '-' });
    const ds = await cp.must('GET', `/apis/apps/v1/namespaces/${AGENT_NAMESPACE}/daemonsets/node-tuning-advisor`);
    const metrics = await freePort();
    const args = (ds.spec.template.spec.containers[0].args as string[]).map((a) => (a.startsWith('--metrics-addr=') ? `--metrics-addr=127.0.0.1:${metrics}` : a));
    const port = new URL(cp.url).port;
    const run = await runImage([
      ...await asDeployedFlags(), '--network=host', '--env', `NODE_NAME=${local.env.NODE_NAME}`,
      '--env', 'KUBERNETES_SERVICE_HOST=127.0.0.1', '--env', `KUBERNETES_SERVICE_PORT=${port}`,
      ...mount(serviceAccount, '/var/run/secrets/kubernetes.io/serviceaccount'),
      ...mount(rules, '/etc/node-tuning-advisor/rules'), ...mount(`${rules}-overrides`, '/etc/node-tuning-advisor/overrides'),
      ...mount(FIXTURE, '/host'),
    ], [...args, '--once']);
    assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`);
    const annotations = await ownAnnotations(cp, NODE);
    assert.match(annotations[`${PREFIX}summary`] ?? '', /^\d+\/100 [A-F]\b/, JSON.stringify(annotations));
    assert.match(annotations[`${PREFIX}findings`] ?? '', /kernel-tick-rate/);
    const events = await nodeEvents(cp, NODE);
    assert.ok(events.some((e) => e.reason === 'TuningRecommendation' && e.message.includes('kernel-tick-rate')), JSON.stringify(events.map((e) => e.message)));
  });
});
