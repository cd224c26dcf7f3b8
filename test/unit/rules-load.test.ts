import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BUNDLED_RULES_DIR, formatRuleError, loadRules } from '../../src/rules/load.ts';
import { tempHost } from '../helpers/fixtures.ts';

const header = 'apiVersion: node-tuning-advisor.io/v1\nkind: RuleSet\nrules:\n';
const goodRule = `  - id: sample-rule
    title: Sample
    category: kernel
    severity: warning
    weight: 1
    params: { minHz: 1000 }
    failsWhen: { fact: kernel.hz, op: Lt, param: minHz }
    observed: "{{kernel.hz}}"
    expected: "{{params.minHz}}"
    message: tick {{kernel.hz}}
    remediation: { summary: fix it, text: fix it }
    references: [{ seed: 000_27ac7eb1e25f66b9.txt }]
`;

async function lintText(t: Parameters<typeof tempHost>[0], text: string) {
  const dir = await tempHost(t, { 'rules/custom.yaml': text });
  const result = await loadRules([`${dir}/rules`]);
  return result.errors.map(formatRuleError).map((line) => line.slice(dir.length + 1));
}

test('the bundled rules load without errors', async () => {
  const result = await loadRules([BUNDLED_RULES_DIR]);
  assert.deepEqual(result.errors, []);
  assert.deepEqual(result.rules.map((rule) => rule.id).sort(), [
    'cgroup-driver-mismatch', 'client-throttling', 'client-throttling-long-waits', 'cluster-events-split', 'containerd-concurrent-downloads',
    'containerd-lazy-pulling', 'controller-manager-api-qps', 'cpu-governor', 'csi-attacher-throttling', 'csi-provisioner-throttling', 'csi-resizer-throttling',
    'etcd-backend-commit', 'etcd-disk-rotational', 'etcd-events-split', 'etcd-fsync-latency', 'etcd-io-priority',
    'etcd-wal-fsync', 'image-pull-serialized', 'kernel-tick-rate', 'kubelet-api-qps', 'kubelet-cgroup-v1', 'kubelet-event-qps', 'kubelet-pod-start-sli', 'kubelet-registry-pull-limit', 'kubelet-restart-pending', 'pod-startup-slo', 'scheduler-api-qps',
    'tekton-attach-workspaces', 'tekton-controller-api-qps', 'tekton-rwo-without-affinity-assistant', 'tuned-profile', 'volume-attach',
  ]);
});

test('a misspelt key is reported at its line and column, with a suggestion', async (t) => {
  const errors = await lintText(t, header + goodRule.replace('    failsWhen:', '    failWhen:'));
  assert.deepEqual(errors, [
    'rules/custom.yaml:4:5: rules.0: missing required key "failsWhen"',
    'rules/custom.yaml:10:5: rules.0.failWhen: unknown key "failWhen" (did you mean "failsWhen"?)',
  ]);
});

test('a wrong enum value names the allowed ones', async (t) => {
  const errors = await lintText(t, header + goodRule.replace('severity: warning', 'severity: warnng'));
  assert.deepEqual(errors, ['rules/custom.yaml:7:15: rules.0.severity: must be one of info, warning, critical']);
});

test('an unknown operator inside a nested condition is located precisely', async (t) => {
  const rule = goodRule.replace(
    '    failsWhen: { fact: kernel.hz, op: Lt, param: minHz }',
    '    failsWhen:\n      any:\n        - { fact: kernel.hz, op: Lt, param: minHz }\n        - { fact: kernel.noHz, op: Equals, value: full }',
  );
  const errors = await lintText(t, header + rule);
  assert.deepEqual(errors, [`rules/custom.yaml:13:${'        - { fact: kernel.noHz, op: '.length + 1}: rules.0.failsWhen.any.1.op: must be one of In, NotIn, Exists, DoesNotExist, Gt, Ge, Lt, Le, GtLt, IsTrue, IsFalse, VersionGt, VersionGe, VersionLt, VersionLe`]);
});

test('YAML syntax errors carry the parser position', async (t) => {
  const errors = await lintText(t, header + goodRule.replace('    title: Sample', '    title: [Sample'));
  assert.ok(errors.length >= 1);
  assert.match(errors[0] as string, /^rules\/custom\.yaml:\d+:\d+: /);
});

test('semantic errors: undefined param, operator without its operand, template param', async (t) => {
  const rule = goodRule
    .replace('param: minHz }', 'param: maxHz }')
    .replace('expected: "{{params.minHz}}"', 'expected: "{{params.nope}}"');
  const errors = await lintText(t, header + rule + goodRule.replace('sample-rule', 'other-rule').replace('op: Lt, param: minHz', 'op: In, value: 3'));
  assert.deepEqual(errors, [
    'rules/custom.yaml:10:50: rules.0.failsWhen.param: names param "maxHz", which the rule\'s params do not define',
    'rules/custom.yaml:12:15: rules.0.expected: uses {{params.nope}}, which the rule\'s params do not define',
    'rules/custom.yaml:22:16: rules.1.failsWhen: In needs a list: use values: [...] (or a param holding a list)',
  ]);
});

test('duplicate ids across files and overrides of unknown rules or params are errors', async (t) => {
  const dir = await tempHost(t, {
    'a/one.yaml': header + goodRule,
    'a/two.yaml': header + goodRule,
    'a/three.yaml': 'apiVersion: node-tuning-advisor.io/v1\nkind: RuleOverrides\noverrides:\n  - id: no-such-rule\n    disabled: true\n  - id: sample-rule\n    params: { maxHz: 3 }\n',
  });
  const result = await loadRules([`${dir}/a`]);
  const errors = result.errors.map(formatRuleError).map((line) => line.slice(dir.length + 1));
  assert.deepEqual(errors, [
    `a/two.yaml:4:1: id: rule id "sample-rule" is already defined at ${dir}/a/one.yaml:4; to change a bundled rule use kind: RuleOverrides`,
    'a/three.yaml:4:1: id: no loaded rule has id "no-such-rule"',
    'a/three.yaml:6:1: params.maxHz: rule "sample-rule" has no param "maxHz" (it has: minHz)',
  ]);
});

test('a missing --rules path is an error naming it', async () => {
  const result = await loadRules(['/nonexistent/rules-dir']);
  assert.deepEqual(result.errors.map(formatRuleError), ['/nonexistent/rules-dir:0:0: does not exist; check the --rules path']);
});

test('rules may not decide on enrichment-only inventory facts', async (t) => {
  const errors = await lintText(t, header + goodRule.replace('{ fact: kernel.hz, op: Lt, param: minHz }', '{ fact: inventory.physicalCores, op: Lt, param: minHz }'));
  assert.deepEqual(errors, ['rules/custom.yaml:10:24: rules.0.failsWhen.fact: inventory.physicalCores only enriches the report (systeminformation); decide on the /proc and /sys facts instead']);
});

test('YAML that only fails when converted (an alias before its anchor) is an error, not a crash', async (t) => {
  const errors = await lintText(t, '*!');
  assert.equal(errors.length, 1);
  assert.match(errors[0] as string, /^rules\/custom\.yaml:1:1: Unresolved alias/);
});

test('{{params.name[fact]}} needs at least one param name_<value>', async (t) => {
  const errors = await lintText(t, header + goodRule.replace(/message: .*/, 'message: "see {{params.governedBy[kernel.hz]}}"'));
  assert.equal(errors.length, 1);
  assert.match(errors[0] ?? '', /uses \{\{params\.governedBy\[…\]\}\}, but the rule defines no param named governedBy_<value>/);
});

test('the short fix is required, one line, and must fit a 138-byte finding line with typical values', async (t) => {
  const missing = await lintText(t, header + goodRule.replace('remediation: { summary: fix it, text: fix it }', 'remediation: { text: fix it }'));
  assert.deepEqual(missing, ['rules/custom.yaml:14:18: rules.0.remediation: missing required key "summary"']);
  const twoLines = await lintText(t, header + goodRule.replace('remediation: { summary: fix it, text: fix it }', 'remediation:\n      summary: "fix it\\nthen reboot"\n      text: fix it'));
  assert.deepEqual(twoLines, ['rules/custom.yaml:15:16: rules.0.remediation.summary: must be one line: it is shown where only one line fits (annotations, Events)']);
  const long = `boot a kernel built with CONFIG_HZ_1000=y, or rebuild yours with it, then compare pod start-up on {{kernel.release}} first`;
  const tooLong = await lintText(t, header + goodRule.replace('remediation: { summary: fix it, text: fix it }', `remediation: { summary: "${long}", staticSummary: boot a 1000 Hz kernel, text: fix it }`));
  assert.equal(tooLong.length, 1);
  assert.match(tooLong[0] as string, /^rules\/custom\.yaml:14:\d+: rules\.0\.remediation\.summary: with typical values \(each \{\{fact\}\} as 6 characters\) the finding line is 139 bytes, 1 over the 138 that kubectl describe shows/);
  assert.match(tooLong[0] as string, /"CRIT sample-rule: 123456 — boot a kernel .* on 123456 first"\)$/);
  const oneShorter = await lintText(t, header + goodRule.replace('remediation: { summary: fix it, text: fix it }', `remediation: { summary: "${long.replace('yours', 'your')}", staticSummary: boot a 1000 Hz kernel, text: fix it }`));
  assert.deepEqual(oneShorter, []);
  const unknownParam = await lintText(t, header + goodRule.replace('summary: fix it', 'summary: "set {{params.maxHz}}"'));
  assert.deepEqual(unknownParam, ["rules/custom.yaml:14:29: rules.0.remediation.summary: uses {{params.maxHz}}, which the rule's params do not define"]);
});

test('a summary naming facts needs a staticSummary without them: the alerts\' static fix map (issue 24)', async (t) => {
  const named = await lintText(t, header + goodRule.replace('summary: fix it', 'summary: "boot past {{kernel.hz}} Hz"'));
  assert.equal(named.length, 1);
  assert.match(named[0] as string, /rules\.0\.remediation\.summary: names facts, so it differs per node; add remediation\.staticSummary/);
  assert.deepEqual(await lintText(t, header + goodRule.replace('summary: fix it', 'summary: "boot past {{kernel.hz}} Hz", staticSummary: boot a 1000 Hz kernel')), []);
  const templated = await lintText(t, header + goodRule.replace('summary: fix it', 'summary: x, staticSummary: "past {{kernel.hz}}"'));
  assert.match(templated[0] as string, /remediation\.staticSummary: is the fix without node-specific values: no \{\{…\}\} placeholders/);
  assert.deepEqual(await lintText(t, header + goodRule.replace('summary: fix it', 'summary: "set {{params.minHz}} Hz"')), [], 'params are the same on every node');
});

test('a node rule whose observed text would not fit the report annotation line is rejected; cluster rules are not in it', async (t) => {
  const observed = 'governor {{cpu.governor}} on {{cpu.count}} CPUs, driver {{cpu.driver}}, EPP {{cpu.epp}}, boost {{cpu.boost}}';
  const node = await lintText(t, header + goodRule.replace('observed: "{{kernel.hz}}"', `observed: "${observed}"`));
  assert.equal(node.length, 1);
  assert.match(node[0] as string, /rules\.0\.observed: with typical values the observed text does not fit the report annotation's 138-byte line/);
});

test('naming the bundled rules directory again (rules lint rules) loads each file once: no rule is its own duplicate', async (t) => {
  const { relative } = await import('node:path');
  const { symlink } = await import('node:fs/promises');
  const dir = await tempHost(t, {});
  await symlink(BUNDLED_RULES_DIR, `${dir}/linked-rules`);
  for (const again of [BUNDLED_RULES_DIR, relative(process.cwd(), BUNDLED_RULES_DIR) || '.', `${dir}/linked-rules`, `${BUNDLED_RULES_DIR}/host.yaml`]) {
    const result = await loadRules([BUNDLED_RULES_DIR, again]);
    assert.deepEqual(result.errors.map(formatRuleError), [], again);
    assert.equal(result.files.length, (await loadRules([BUNDLED_RULES_DIR])).files.length, again);
  }
});

test('enoughDataWhen needs notEnoughData (the reason people read) and the other way round; its params and templates are checked', async (t) => {
  const withData = (lines: string) => header + goodRule.replace('    failsWhen:', `${lines}    failsWhen:`);
  assert.deepEqual(await lintText(t, withData('    enoughDataWhen: { fact: pods.startup.samples, op: Ge, value: 10 }\n    notEnoughData: "fewer than 10 pods"\n')), []);
  const [missing] = await lintText(t, withData('    enoughDataWhen: { fact: pods.startup.samples, op: Ge, value: 10 }\n'));
  assert.match(missing ?? '', /rules\.0\.enoughDataWhen: needs notEnoughData: the reason people read when there is not enough to judge/);
  const [alone] = await lintText(t, withData('    notEnoughData: "fewer than 10 pods"\n'));
  assert.match(alone ?? '', /rules\.0\.notEnoughData: is the reason shown when enoughDataWhen is false: add enoughDataWhen, or remove it/);
  const errors = await lintText(t, withData('    enoughDataWhen: { fact: pods.startup.samples, op: Ge, param: minSamples }\n    notEnoughData: "fewer than {{params.minSamples}}"\n'));
  assert.deepEqual(errors.map((e) => e.replace(/^rules\/custom\.yaml:\d+:\d+: /, '')), [
    'rules.0.enoughDataWhen.param: names param "minSamples", which the rule\'s params do not define',
    'rules.0.notEnoughData: uses {{params.minSamples}}, which the rule\'s params do not define',
  ]);
});
