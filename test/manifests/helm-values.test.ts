// The chart's operator values beyond the overlays (pull secrets, scheduling, priority, pod annotations,
// the agent's interval and extra flags, extra volumes and mounts, the image tag, rule overrides) and
// its values.schema.json, rendered by the real Helm 4 with --set, --set-string, --set-json and -f.
// Each value changes exactly its fields; a misspelt or mistyped value fails with Helm's own message;
// the overrides ConfigMap the chart writes is read by the agent's own rule loader.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { ruleOverrideSchema } from '../../src/rules/schema.ts';
import { runCli } from '../helpers/cli.ts';
import { CHART, type RenderOptions, helmRenderer, leafDifferences } from '../helpers/helm.ts';
import { type K8sObject, REPO, configMapVolume } from '../helpers/manifests.ts';

const agentPod = (objects: K8sObject[]) => objects.find((o) => o.kind === 'DaemonSet')!.spec.template;

/**
 * The leaf paths under the DaemonSet's pod template where `b` differs from `a`; any other object changed
 * is named too (but the uninstall Job's pull secrets, which follow the agent's: test/manifests/helm-render.test.ts).
 */
function podChanges(a: K8sObject[], b: K8sObject[]): string[] {
  const withoutJobSecrets = (o: K8sObject) => {
    if (o.kind !== 'Job') return o;
    const job = structuredClone(o);
    delete job.spec.template.spec.imagePullSecrets;
    return job;
  };
  const others = (objects: K8sObject[]) => objects.filter((o) => o.kind !== 'DaemonSet').map(withoutJobSecrets);
  const changed = leafDifferences(agentPod(a), agentPod(b));
  return [...changed, ...(isDeepStrictEqual(others(a), others(b)) ? [] : ['(another object)'])].sort();
}

test('pull secrets, scheduling, priority, pod annotations, interval, extra flags: each changes exactly its fields', async (t) => {
  const render = await helmRenderer(t);
  if (!render) return;
  const base = (await render()).objects;
  const changed = async (set: string[]) => {
    const objects = (await render({ set })).objects;
    return { pod: agentPod(objects), paths: podChanges(base, objects) };
  };

  const secrets = await changed(['imagePullSecrets[0].name=regcred,imagePullSecrets[1].name=mirror']);
  assert.deepEqual(secrets.pod.spec.imagePullSecrets, [{ name: 'regcred' }, { name: 'mirror' }]);
  assert.deepEqual(secrets.paths, ['spec.imagePullSecrets']);

  const selector = await changed(['nodeSelector.pool=ci']);
  assert.deepEqual(selector.pod.spec.nodeSelector, { 'kubernetes.io/os': 'linux', pool: 'ci' }, 'maps merge with the default, as Helm coalesces');
  const escaped = await changed(['nodeSelector.kubernetes\\.io/os=null,nodeSelector.node\\.example\\.com/pool=ci']);
  assert.deepEqual(escaped.pod.spec.nodeSelector, { 'node.example.com/pool': 'ci' }, 'null deletes a default key; \\. keeps a dot in a key');

  const tolerations = await changed(['tolerations[0].key=dedicated,tolerations[0].operator=Equal,tolerations[0].value=ci,tolerations[0].effect=NoSchedule']);
  assert.deepEqual(tolerations.pod.spec.tolerations, [{ key: 'dedicated', operator: 'Equal', value: 'ci', effect: 'NoSchedule' }], 'lists replace the default');
  assert.deepEqual(tolerations.paths, ['spec.tolerations.0.effect', 'spec.tolerations.0.key', 'spec.tolerations.0.operator', 'spec.tolerations.0.value']);

  const affinity = 'affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0]';
  const affine = await changed([`${affinity}.key=node-role.kubernetes.io/control-plane,${affinity}.operator=DoesNotExist`]);
  assert.deepEqual(affine.pod.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms,
    [{ matchExpressions: [{ key: 'node-role.kubernetes.io/control-plane', operator: 'DoesNotExist' }] }]);

  const priority = await changed(['priorityClassName=system-node-critical,podAnnotations.team=platform']);
  assert.deepEqual(priority.paths, ['metadata.annotations', 'spec.priorityClassName']);
  assert.equal(priority.pod.spec.priorityClassName, 'system-node-critical');
  assert.deepEqual(priority.pod.metadata.annotations, { team: 'platform' });

  const flags = await changed(['agent.interval=90s', 'agent.startupWindow=2h', 'agent.extraArgs={--kubelet-insecure-tls,--probe-interval=off}']);
  const args = flags.pod.spec.containers[0].args as string[];
  assert.deepEqual(args.filter((a) => !(agentPod(base).spec.containers[0].args as string[]).includes(a)), ['--interval=90s', '--startup-window=2h', '--kubelet-insecure-tls', '--probe-interval=off']);
  assert.ok(!args.includes('--interval=5m') && !args.includes('--startup-window=1h'));
  assert.deepEqual(args.slice(-2), ['--kubelet-insecure-tls', '--probe-interval=off'], 'extra flags after the chart\'s');
  for (const p of flags.paths) assert.match(p, /^spec\.containers\.0\.args\.\d+$/);
});

/** Helm's line for a duration value the schema's pattern refuses (Helm prints the pattern's backslashes doubled). */
function notDuration(key: 'interval' | 'startupWindow', value: string): string {
  const schema = JSON.parse(readFileSync(path.join(CHART, 'values.schema.json'), 'utf8'));
  const pattern: string = schema.properties.agent.properties[key].pattern;
  return `- at '/agent/${key}': '${value}' does not match pattern '${pattern.replaceAll('\\', '\\\\')}'`;
}

test('values.schema.json: a misspelt or mistyped value fails the render with Helm\'s message, naming the value', async (t) => {
  const render = await helmRenderer(t);
  if (!render) return;
  const refused = async (set: string, ...lines: string[]) => {
    const error = await render({ set: [set] }).then(() => undefined, (e: Error) => e);
    assert.ok(error, `--set ${set} is refused`);
    assert.equal(error.message, ['Error: values don\'t meet the specifications of the schema(s) in the following chart(s):', 'node-tuning-advisor:', ...lines].join('\n'), `--set ${set}`);
  };
  await refused('distrbution=kubeadm', "- at '': additional properties 'distrbution' not allowed");
  await refused('distribution=true', "- at '/distribution': got boolean, want string");
  await refused('image.pullPolicy=Sometimes', "- at '/image/pullPolicy': value must be one of '', 'Always', 'IfNotPresent', 'Never'");
  await refused('image.digest=sha256:short', "- at '/image/digest': 'sha256:short' does not match pattern '^(sha256:[0-9a-f]{64})?$'");
  await refused('agent.interval=5 min', notDuration('interval', '5 min'));
  // Issue 37 item 7: an interval a timer cannot wait (over 576 h) is refused before it reaches the agent.
  for (const interval of ['1000h', '577h', '99999m']) await refused(`agent.interval=${interval}`, notDuration('interval', interval));
  for (const interval of ['90s', '1h30m', '400h', '500ms']) await render({ set: [`agent.interval=${interval}`] });
  await refused('agent.startupWindow=an hour', notDuration('startupWindow', 'an hour'));
  await refused('agent.extraArgs={kubelet-insecure-tls}', "- at '/agent/extraArgs/0': 'kubelet-insecure-tls' does not match pattern '^--[a-z]'");
  await refused('imagePullSecrets[0].nmae=regcred', "- at '/imagePullSecrets/0': missing property 'name'", "- at '/imagePullSecrets/0': additional properties 'nmae' not allowed");
  await refused('ruleOverrides[0].id=kernel-tick-rate,ruleOverrides[0].severity=urgent', "- at '/ruleOverrides/0/severity': value must be one of 'info', 'warning', 'critical'");
  await refused('resources.limit.memory=1Gi', "- at '/resources': additional properties 'limit' not allowed");
  await refused('extraVolumeMounts[0].name=ca', "- at '/extraVolumeMounts/0': missing property 'mountPath'");
  // Helm hands a subchart `global`: the chart stays usable as a dependency.
  await render({ set: ['global.imageRegistry=registry.example.com'] });
});

test('the schema\'s ruleOverrides items are the rule loader\'s own schema of an override', () => {
  const schema = JSON.parse(readFileSync(path.join(CHART, 'values.schema.json'), 'utf8'));
  assert.deepEqual(schema.properties.ruleOverrides.items, ruleOverrideSchema);
  const values = readFileSync(path.join(CHART, 'values.yaml'), 'utf8');
  const top = [...values.matchAll(/^([A-Za-z]+):/gm)].map((m) => m[1]);
  assert.deepEqual(Object.keys(schema.properties).filter((k) => k !== 'global').sort(), [...top].sort(), 'every top-level value has a schema, and nothing else');
});

test('ruleOverrides: the chart writes node-tuning-advisor-overrides, which the agent\'s rule loader takes as the docs say', async (t) => {
  const render = await helmRenderer(t);
  if (!render) return;
  assert.ok(!(await render()).objects.some((o) => o.kind === 'ConfigMap' && o.metadata.name === 'node-tuning-advisor-overrides'), 'no value, no ConfigMap');
  const dir = await mkdtemp(path.join(tmpdir(), 'nta-helm-values-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const valuesFile = path.join(dir, 'values.yaml');
  const overrides = (ids: string[]) => [
    'ruleOverrides:', `  - id: ${ids[0]}`, '    disabled: true', `  - id: ${ids[1]}`, '    params: { minQPS: 100 }', '',
  ].join('\n');
  await writeFile(valuesFile, overrides(['image-pull-serialized', 'kubelet-api-qps']));
  const { objects } = await render({ namespace: 'ops', values: [valuesFile] });
  const cm = objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name === 'node-tuning-advisor-overrides') as K8sObject;
  assert.equal(cm.metadata.namespace, 'ops');
  const ds = objects.find((o) => o.kind === 'DaemonSet') as K8sObject;
  assert.ok(ds.spec.template.spec.volumes.some((v: { configMap?: { name: string } }) => v.configMap?.name === cm.metadata.name), 'the volume the DaemonSet mounts');

  const mounted = await configMapVolume(t, cm.data);
  const list = await runCli(['rules', 'list', '-o', 'json', '--rules', mounted]);
  assert.equal(list.code, 0, list.stderr);
  const ids = (JSON.parse(list.stdout) as { id: string }[]).map((r) => r.id);
  assert.ok(ids.includes('kernel-tick-rate') && !ids.includes('image-pull-serialized'), 'disabled: true takes the rule out');
  const explained = await runCli(['explain', 'kubelet-api-qps', '-o', 'json', '--rules', mounted]);
  assert.equal(JSON.parse(explained.stdout).rule.params.minQPS, 100);

  await writeFile(valuesFile, overrides(['image-pull-serialised', 'kubelet-api-qps']));
  const misspelt = (await render({ values: [valuesFile] })).objects.find((o) => o.metadata.name === 'node-tuning-advisor-overrides') as K8sObject;
  const refused = await runCli(['rules', 'list', '--rules', await configMapVolume(t, misspelt.data)]);
  assert.equal(refused.code, 2);
  assert.match(refused.stderr, /helm-values\.yaml:\d+:\d+: id: no loaded rule has id "image-pull-serialised"/);
});

test('every `--set` example in values.yaml renders', async (t) => {
  const render = await helmRenderer(t);
  if (!render) return;
  const values = readFileSync(path.join(CHART, 'values.yaml'), 'utf8');
  const examples = [...values.matchAll(/\(--set ([^)\s]+)/g)].map((m) => m[1] as string);
  assert.ok(examples.length >= 3, examples.join(' '));
  for (const set of examples) await render({ set: [set] });
});

test('Chart.yaml kubeVersion: a cluster before 1.30 is refused as helm refuses it; vendor builds of 1.30 and later install', async (t) => {
  const render = await helmRenderer(t);
  if (!render) return;
  await assert.rejects(render({ kubeVersion: 'v1.29.9' }), /Error: chart requires kubeVersion: >=1\.30\.0-0 which is incompatible with Kubernetes v1\.29\.9$/m);
  for (const kubeVersion of ['v1.30.0', 'v1.30.2-eks-a1b2c3', 'v1.31.4+k3s1', 'v1.36.2']) await render({ kubeVersion });
  assert.match(readFileSync(path.join(REPO, 'docs/deploy.md'), 'utf8'), /The policy needs Kubernetes 1\.30 or later/, 'the floor the docs give');
});

test('image.tag: text and --set integers are kept; a number from a values file or --set-json is refused, naming image.tag', async (t) => {
  const render = await helmRenderer(t);
  if (!render) return;
  const image = async (options: RenderOptions) => agentPod((await render(options)).objects).spec.containers[0].image as string;
  const repository = 'ghcr.io/node-tuning-advisor/node-tuning-advisor';
  assert.equal(await image({ set: ['image.tag=1.10'] }), `${repository}:1.10`, '--set keeps 1.10 as text');
  assert.equal(await image({ set: ['image.tag=2'] }), `${repository}:2`, 'an integer --set keeps what was typed');
  assert.equal(await image({ setString: ['image.tag=1.10'] }), `${repository}:1.10`);
  assert.equal(await image({ setJson: ['image.tag="1.10"'] }), `${repository}:1.10`);
  const dir = await mkdtemp(path.join(tmpdir(), 'nta-helm-tag-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'values.yaml');
  await writeFile(file, 'image:\n  tag: "1.10"\n');
  assert.equal(await image({ values: [file] }), `${repository}:1.10`, 'a quoted tag in a values file');
  await writeFile(file, 'image:\n  tag: 1.10\n');
  const message = /Error: execution error at \(node-tuning-advisor\/templates\/[a-z-]+\.(yaml|txt):\d+:\d+\): image\.tag is the number 1\.1, not the text you wrote \(YAML reads tag: 1\.10 as 1\.1\): quote it \(tag: "1\.10"\) or use --set-string image\.tag=\.\.\./;
  await assert.rejects(render({ values: [file] }), message, 'never the image :1.1');
  await assert.rejects(render({ setJson: ['image={"tag":1.10}'] }), message);
});

test('extraVolumes and extraVolumeMounts (--set-json): appended after the chart\'s and the distribution\'s, nothing else changes', async (t) => {
  const render = await helmRenderer(t);
  if (!render) return;
  const base = (await render({ set: ['distribution=eks'] })).objects;
  const volume = { name: 'kubelet-ca', hostPath: { path: '/etc/kubernetes/pki/kubelet-ca.crt', type: 'File' } };
  const mount = { name: 'kubelet-ca', mountPath: '/etc/kubelet-ca.crt', readOnly: true };
  const objects = (await render({ set: ['distribution=eks'], setJson: [`extraVolumes=${JSON.stringify([volume])}`, `extraVolumeMounts=${JSON.stringify([mount])}`] })).objects;
  const pod = agentPod(objects).spec;
  assert.deepEqual(pod.volumes.at(-1), volume);
  assert.deepEqual(pod.containers[0].volumeMounts.at(-1), mount);
  assert.equal(pod.volumes.at(-2).name, 'host-etc-kubernetes-kubelet', 'after the eks overlay\'s mount');
  assert.deepEqual(podChanges(base, objects), [`spec.containers.0.volumeMounts.${pod.containers[0].volumeMounts.length - 1}`, `spec.volumes.${pod.volumes.length - 1}`]);
});

test('the docs quote what Helm prints: the schema\'s refusal of a misspelt value, and the kubeVersion refusal', async (t) => {
  const render = await helmRenderer(t);
  if (!render) return;
  const printed = await render({ set: ['distrbution=kubeadm'] }).then(() => '', (e: Error) => e.message);
  const tooOld = await render({ kubeVersion: 'v1.29.9' }).then(() => '', (e: Error) => e.message.split('\n')[0] as string);
  for (const doc of ['docs/deploy.md', 'charts/node-tuning-advisor/README.md']) {
    const text = readFileSync(path.join(REPO, doc), 'utf8');
    const quoted = /e\.g\. `--set distrbution=kubeadm`:\n\n```\n([\s\S]*?)\n```/.exec(text)?.[1];
    assert.equal(quoted, printed, `${doc} quotes helm's refusal`);
  }
  assert.ok(readFileSync(path.join(REPO, 'docs/deploy.md'), 'utf8').includes(`(\`${tooOld}\`)`), `docs/deploy.md quotes "${tooOld}"`);
});
