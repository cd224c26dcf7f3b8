// Issue 24: the README's "Deploying" and docs/deploy.md's walk-through, as a new operator follows it,
// on a bare real control plane. The commands are taken from the docs' own ```sh blocks (README
// "Deploying", deploy.md "2. Apply" and "3. Verify"), so the test breaks when the docs drift: the
// first `kubectl apply -k` of each exits 0, the agent runs as that apply deployed it (the DaemonSet's
// args, env and rules as the server holds them, a pod-bound token of its ServiceAccount), and the
// documented verify commands print what the docs say they print; then `report` lists the node.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { AgentProcess } from '../helpers/bundled-agent.ts';
import { realServerTier } from '../helpers/control-plane.ts';
import { createReadyNode } from '../helpers/kube-objects.ts';
import { REPO } from '../helpers/manifests.ts';
import { type DeploySuite, agentIdentity, agentOnceAsDeployed, ownAnnotations, startDeploySuite } from '../helpers/shipped.ts';

const NODE = 'walkthrough-1';
const HOST = path.join(REPO, 'test/fixtures/hosts/kubeadm-1.30');

/** The ```sh blocks of `doc` between `heading` and the next heading of the same or a higher level. */
function shBlocks(doc: string, heading: string): string[] {
  const text = readFileSync(path.join(REPO, doc), 'utf8');
  const start = text.indexOf(`\n${heading}\n`);
  assert.ok(start >= 0, `${doc} has the section "${heading}"`);
  const level = /^#+/.exec(heading)?.[0] ?? '#';
  const rest = text.slice(start + heading.length + 2);
  const end = rest.search(new RegExp(`\\n#{1,${level.length}} `));
  const section = end >= 0 ? rest.slice(0, end) : rest;
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1] as string);
}

/** The commands of a block: one per line, comments and comment-only lines dropped. */
function commands(block: string): string[] {
  return block.split('\n').map((line) => line.replace(/(^|\s+)#.*$/, '').trim()).filter(Boolean);
}

/** Shell words of a documented command (whitespace splits, single quotes as the docs use them), `<node>` filled in. */
function words(command: string): string[] {
  const out: string[] = [];
  for (const m of command.matchAll(/(?:'[^']*'|[^\s'])+/g)) out.push(m[0].replace(/'([^']*)'/g, '$1'));
  return out.map((w) => w.replaceAll('<node>', NODE));
}

/** The first documented command starting with `prefix`, in the blocks given. */
function documented(blocks: string[], prefix: string): string[] {
  const found = blocks.flatMap(commands).find((c) => c.startsWith(prefix));
  assert.ok(found, `the docs give a command starting "${prefix}": ${blocks.join('\n')}`);
  return words(found);
}

/** kubectl's args of a documented command, with repo-relative paths made absolute (kubectl runs elsewhere). */
function kubectlArgs(command: string[]): string[] {
  assert.equal(command[0], 'kubectl');
  return command.slice(1).map((w) => (w.startsWith('manifests/') ? path.join(REPO, w) : w));
}

describe('README / docs/deploy.md walk-through on a bare control plane', realServerTier(), () => {
  const readme = shBlocks('README.md', '## Deploying');
  const apply = shBlocks('docs/deploy.md', '## 2. Apply');
  const verify = shBlocks('docs/deploy.md', '## 3. Verify');
  let suite: DeploySuite;

  before(async () => { suite = await startDeploySuite('nta-walkthrough-'); });
  after(async () => { await suite?.stop(); });

  test('README and deploy.md give the same first command, and it applies on a bare cluster', async () => {
    const first = documented(readme, 'kubectl apply -k');
    assert.deepEqual(documented(apply, 'kubectl apply -k'), first, 'deploy.md "2. Apply" starts as the README does');
    assert.deepEqual(first, ['kubectl', 'apply', '-k', 'manifests/']);
    const applied = await suite.cp.kubectl(kubectlArgs(first));
    assert.equal(applied.code, 0, applied.stderr);
    assert.match(applied.stdout, /daemonset\.apps\/node-tuning-advisor created/);
    // What else apply prints is the Pod Security warning deploy.md explains, and nothing more.
    const warning = /^Warning: would violate PodSecurity "baseline:latest": hostPath volumes \(/;
    const printed = applied.stderr.split('\n').filter(Boolean);
    assert.ok(printed.length > 0 && printed.every((line) => warning.test(line)), applied.stderr);
    assert.match(readFileSync(path.join(REPO, 'docs/deploy.md'), 'utf8').replaceAll('\n', ' '), /`Warning: would violate PodSecurity "baseline:latest": hostPath volumes \(…\)`[^.]*\. That is expected/);
  });

  test('the agent as deployed, then the documented verify commands print what the docs say', async () => {
    const { cp, tmp } = suite;
    await createReadyNode(cp, NODE, { kubeletVersion: 'v1.30.2' });
    await agentOnceAsDeployed(suite, await agentIdentity(cp, NODE, tmp), { hostRoot: HOST, rulesDir: path.join(tmp, 'rules') });
    const published = await ownAnnotations(cp, NODE);
    const summary = published['node-tuning-advisor.io/summary'] ?? '';
    const [, score, grade] = /^(\d+)\/100 ([A-F])\b/.exec(summary) ?? [];
    assert.ok(grade, `a summary on the Node: ${JSON.stringify(published)}`);

    // `kubectl describe node <node>`: "Annotations: node-tuning-advisor.io/summary, findings, report"
    // and "Events: TuningRecommendation / TuningResolved", as the comments of the block say.
    const describeCmd = documented(verify, 'kubectl describe node');
    const described = await cp.kubectl(kubectlArgs(describeCmd));
    assert.equal(described.code, 0, described.stderr);
    // What the docs say it shows, read from the block's comments.
    const said = verify.join('\n');
    const annotations = /Annotations: node-tuning-advisor\.io\/([\w, ]+)/.exec(said)?.[1]?.split(/,\s*/) ?? [];
    assert.deepEqual(annotations, ['summary', 'findings', 'report'], said);
    for (const key of annotations) assert.match(described.stdout, new RegExp(`node-tuning-advisor\\.io/${key}:`), `describe shows the ${key} annotation:\n${described.stdout}`);
    const reasons = /Events: (\w+) \/ (\w+)/.exec(said)?.slice(1) ?? [];
    assert.deepEqual(reasons, ['TuningRecommendation', 'TuningResolved'], said);
    // A first scan of a node failing rules recommends; nothing is resolved yet.
    assert.match(described.stdout, new RegExp(`\\b${reasons[0]}\\b`), `describe shows the agent's Events:\n${described.stdout}`);

    // The report annotation by jsonpath: the JSON the agent wrote.
    const jsonpath = await cp.kubectl(kubectlArgs(documented(verify, 'kubectl get node <node> -o jsonpath')));
    assert.equal(jsonpath.code, 0, jsonpath.stderr);
    assert.equal(jsonpath.stdout, published['node-tuning-advisor.io/report']);
    JSON.parse(jsonpath.stdout);

    // `kubectl get nodes -L grade -L critical-failing`: the two columns, with the summary's grade.
    const labelled = await cp.kubectl(kubectlArgs(documented(verify, 'kubectl get nodes -L')));
    assert.equal(labelled.code, 0, labelled.stderr);
    const [header, row] = labelled.stdout.split('\n').filter((l) => l.includes('NAME') || l.startsWith(NODE));
    assert.match(header ?? '', /\bGRADE\s+CRITICAL-FAILING\s*$/, labelled.stdout);
    assert.match(row ?? '', new RegExp(`\\s${grade}\\s+\\d+\\s*$`), labelled.stdout);

    // `kubectl get nodes -l …grade=F`: "the nodes to look at first" — this node iff its grade is F.
    const worst = await cp.kubectl(kubectlArgs(documented(verify, 'kubectl get nodes -l')));
    assert.equal(worst.code, 0, worst.stderr);
    assert.equal(worst.stdout.includes(NODE), grade === 'F', `${grade}: ${worst.stdout}${worst.stderr}`);

    // `report` (README "Cluster view") with the operator's credentials: the node, its score and grade.
    const reported = AgentProcess.start(await suite.bundle, ['report', `--kubeconfig=${cp.kubeconfig}`, '--fail-on=never'], {});
    assert.equal(await reported.wait(), 0, reported.log);
    const line = reported.log.split('\n').find((l) => l.includes(NODE));
    assert.ok(line, reported.log);
    assert.match(line, new RegExp(`\\b${score}\\b.*\\b${grade}\\b`), reported.log);
  });
});
