// Renders the pictures in README.md and docs/ from real runs, and the saved runs the page tests
// reuse (test/fixtures/measurements/). A real control plane (envtest) with a hollow kubelet
// (`kubemark --morph=kubelet`: the kubelet's own status manager and client rate limiter) at the old
// default client limits 5/10, run in its own PID namespace so the agent there reads its flags from
// the running process; four more Nodes whose agents scan fixture hosts (one Node without an agent).
// Then the seeds' before/after: `measure pod-startup` of 100 pods, the kubelet restarted at 50/100,
// the agent again, `measure` again with --compare; `report --output html` over the nodes. Each page
// is checked in headless Chromium (no console error, no request, nothing cut, 1 280 px) and
// photographed there.
// Needs root (unshare), KUBEBUILDER_ASSETS (the envtest assets with kubemark) and
// chromium-headless-shell. Run: npm run docs:pictures (a few minutes: the 5/10 run alone takes ~1).
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PageBrowser, type PageCheck } from '../test/helpers/browser.ts';
import { ControlPlane, freePort } from '../test/helpers/control-plane.ts';
import { HollowNode } from '../test/helpers/hollow-node.ts';
import { createReadyNode, ensureNamespace } from '../test/helpers/kube-objects.ts';
import { runArgv, type Run as Ran } from '../test/helpers/measure-cli.ts';
import { SOURCE_NODE_FLAGS } from '../test/helpers/source-node.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CLI = path.join(ROOT, 'bin/node-tuning-advisor.js');
const PODS = 100;
const KUBELET_NODE = 'worker-1';
const CP_LABEL = 'node-role.kubernetes.io/control-plane';
/** Nodes beside the hollow kubelet's, and the fixture host each one's agent scans (null: no agent). */
export const FLEET: Record<string, string | null> = {
  'cp-1': 'etcd-lvm-chain', 'cp-2': 'rke2-server', 'worker-2': 'intel-pstate-epp-power', 'worker-3': 'seed-000-before', 'worker-4': null,
};

/** The saved runs (measure --save): the 5/10 kubelet, then the same node at 50/100. */
export const RUNS = {
  before: 'test/fixtures/measurements/hollow-5-10.json',
  after: 'test/fixtures/measurements/hollow-50-100.json',
} as const;

/** Each picture: the page it shows and what of it (its top, or one element). */
export const PICTURES = {
  'docs/pictures/measure-before-after.png': { page: 'compare.html', part: { height: 1500 } },
  'docs/pictures/measure-waterfall-5-10.png': { page: 'compare.html', part: { selector: '[data-run="before"]' } },
  'docs/pictures/measure-waterfall-50-100.png': { page: 'compare.html', part: { selector: '[data-run="after"]' } },
  'docs/pictures/report.png': { page: 'report.html', part: { height: 1400 } },
} as const;

async function cli(args: string[], home: string, wrap: (argv: string[]) => string[] = (a) => a): Promise<Ran> {
  return runArgv(wrap([process.execPath, ...SOURCE_NODE_FLAGS, CLI, ...args]), home);
}

function must(what: string, ran: Ran, ok: (code: number | null) => boolean = (code) => code === 0): Ran {
  if (!ok(ran.code)) throw new Error(`${what}: exit ${ran.code}\n${ran.stderr}${ran.stdout.slice(0, 2000)}`);
  return ran;
}

/** One agent cycle on `node`: over a fixture host, or (the hollow kubelet's node) in its PID namespace with host root /. */
async function agentOnce(cp: ControlPlane, node: string, home: string, host: string | HollowNode): Promise<void> {
  const args = ['agent', '--once', '--kubeconfig', cp.kubeconfig, '--node-name', node, '--startup-jitter', '0s', '--probe-interval', 'off',
    '--metrics-addr', `127.0.0.1:${await freePort()}`];
  if (typeof host === 'string') must(`agent on ${node}`, await cli([...args, '--host-root', path.join(ROOT, 'test/fixtures/hosts', host)], home));
  else must(`agent on ${node}`, await cli(args, home, (argv) => host.inNamespace(argv)));
}

async function measure(cp: ControlPlane, dir: string, args: string[]): Promise<void> {
  // Exit 1 is a missed SLO: the 5/10 run misses it.
  must('measure pod-startup', await cli(['measure', 'pod-startup', '--kubeconfig', cp.kubeconfig, '--node', KUBELET_NODE, '--pods', String(PODS),
    '--cleanup-wait', '0s', ...args], dir), (code) => code === 0 || code === 1);
}

/** The runs and pages, made in `dir`. */
async function makePages(dir: string): Promise<void> {
  const cp = await ControlPlane.start({ scheduler: true, controllerManager: true });
  let kubelet: HollowNode | undefined;
  try {
    kubelet = await HollowNode.start(cp, KUBELET_NODE, { qps: 5, burst: 10, ownPidNamespace: true });
    // The agents' own namespace, where each renews its heartbeat Lease: report calls a node without one stale.
    await ensureNamespace(cp, 'node-tuning-advisor');
    for (const [node, host] of Object.entries(FLEET)) {
      await createReadyNode(cp, node, node.startsWith('cp-') ? { labels: { [CP_LABEL]: '' } } : {});
      if (host) await agentOnce(cp, node, dir, host);
    }
    await agentOnce(cp, KUBELET_NODE, dir, kubelet);
    await measure(cp, dir, ['--save', path.join(dir, 'before.json')]);
    await kubelet.restart({ qps: 50, burst: 100 });
    await agentOnce(cp, KUBELET_NODE, dir, kubelet);
    await measure(cp, dir, ['--save', path.join(dir, 'after.json')]);
    must('measure show', await cli(['measure', 'show', path.join(dir, 'before.json'), '--compare', path.join(dir, 'after.json'), '--html', path.join(dir, 'compare.html')], dir));
    const report = must('report', await cli(['report', '--output', 'html', '--kubeconfig', cp.kubeconfig, '--fail-on', 'never'], dir));
    await writeFile(path.join(dir, 'report.html'), report.stdout);
  } finally {
    await kubelet?.stop();
    await cp.stop();
  }
}

function problems(page: string, check: PageCheck): string[] {
  return [
    ...check.consoleErrors.map((e) => `${page}: console error ${e}`), ...check.requests.map((r) => `${page}: requested ${r}`),
    ...check.cut.map((c) => `${page}: cut ${c}`), ...(check.scrollWidth > 1280 ? [`${page}: ${check.scrollWidth} px wide`] : []),
  ];
}

export async function main(): Promise<void> {
  if (process.getuid?.() !== 0) throw new Error('run as root: the hollow kubelet runs in its own PID namespace (unshare) so the agent reads its limits');
  const dir = await mkdtemp(path.join(tmpdir(), 'nta-pictures-'));
  try {
    await makePages(dir);
    await mkdir(path.join(ROOT, 'docs/pictures'), { recursive: true });
    const browser = await PageBrowser.launch();
    const found: string[] = [];
    try {
      for (const [picture, { page, part }] of Object.entries(PICTURES)) {
        found.push(...problems(page, await browser.screenshot(path.join(dir, page), path.join(ROOT, picture), part)));
        process.stdout.write(`${picture} from ${page}\n`);
      }
    } finally {
      await browser.stop();
    }
    if (found.length > 0) throw new Error(`the pages fail their checks:\n${[...new Set(found)].join('\n')}`);
    await copyFile(path.join(dir, 'before.json'), path.join(ROOT, RUNS.before));
    await copyFile(path.join(dir, 'after.json'), path.join(ROOT, RUNS.after));
    process.stdout.write(`${RUNS.before}, ${RUNS.after}: the saved runs\n`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
