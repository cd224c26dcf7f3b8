// `report` at fleet scale, proven small on the real control plane: every list is paged (counted by
// the server's audit log), one request at a time; nodes come as PartialObjectMetadataList (what the
// server answered, as it logged it); the paged report is the unpaged one; an expired continue token
// (410, after etcd compaction) restarts the list once and counts every node once; the table lists
// the worst N and groups the rest, JSON streams every node.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { PassThrough } from 'node:stream';
import path from 'node:path';
import { main } from '../../src/cli/main.ts';
import { ClusterApi } from '../../src/cluster/api.ts';
import type { NodeRow } from '../../src/cluster/nodes.ts';
import { runClusterReport, type ClusterReport } from '../../src/cluster/report.ts';
import { TokenBucket } from '../../src/kube/backoff.ts';
import { FIRST_ADAPTIVE_LIMIT, KubeClient } from '../../src/kube/client.ts';
import { CONFIGMAPS } from '../../src/kube/resources.ts';
import { auditArgs, describeRequests, type AuditedRequest, type AuditLog } from '../helpers/audit.ts';
import { runCli } from '../helpers/cli.ts';
import { ControlPlane, realServerTier } from '../helpers/control-plane.ts';
import { buildFleet, inParallel } from '../helpers/fleet-cluster.ts';
import { KubeletLogs } from '../helpers/kubelet-logs.ts';

const REPORTER = 'fleet-reporter';
const TOKEN = 'fleet-report-token-0123456789abcdef';

describe('report pages every list on a real kube-apiserver', realServerTier(), () => {
  let cp: ControlPlane;
  let audit: AuditLog;
  let tmp: string;
  let kubelet: KubeletLogs;
  let kubeconfig: string;
  let nodes: string[];

  before(async () => {
    tmp = await mkdtemp(path.join(tmpdir(), 'nta-report-paging-'));
    const auditing = await auditArgs(tmp, [REPORTER], ['nodes']);
    audit = auditing.log;
    [cp, kubelet] = await Promise.all([
      ControlPlane.start({ apiserverArgs: auditing.args, extraTokens: [{ token: TOKEN, user: REPORTER, groups: ['system:masters'] }] }),
      KubeletLogs.start(tmp),
    ]);
    kubeconfig = await cp.writeKubeconfig(path.join(tmp, 'reporter.kubeconfig'), REPORTER, TOKEN);
    nodes = await buildFleet(cp, kubelet, { workers: 9, appNamespaces: 2, appsPerNamespace: 2, podsPerApp: 2, daemonSets: true, pipelineRuns: 5, noAgentEvery: 4, unreadableEvery: 9 });
  });
  after(async () => {
    await cp?.stop();
    await kubelet?.stop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  async function report(...args: string[]) {
    const since = Date.now();
    const out = await runCli(['report', '--kubeconfig', kubeconfig, '--fail-on', 'never', ...args]);
    assert.equal(out.code, 0, out.stderr);
    return { out, requests: await audit.requests((r) => r.user === REPORTER && r.at >= since) };
  }
  const lists = (requests: AuditedRequest[], resourcePath: string) => requests.filter((r) => r.verb === 'list' && r.path === resourcePath);
  /** The report without what differs between two runs (time, the heartbeats' age, API use). */
  const content = (json: string) => {
    const { generatedAt: _t, api: _a, ...rest } = JSON.parse(json) as ClusterReport;
    const nodes = rest.nodes.map(({ heartbeat, ...row }) => ({ ...row, ...(heartbeat ? { heartbeat: { state: heartbeat.state, renewedAt: heartbeat.renewedAt } } : {}) }));
    return { ...rest, nodes };
  };

  test('--page-size 2: every list in pages of 2, one at a time, and the same report as one response per list', async () => {
    const paged = await report('--output', 'json', '--page-size', '2');
    const whole = await report('--output', 'json', '--page-size', '0');
    assert.deepEqual(content(paged.out.stdout), content(whole.out.stdout), 'paged and unpaged reports are identical');
    assert.deepEqual((await report('--page-size', '2')).out.stdout, (await report('--page-size', '0')).out.stdout, 'and so are the tables');

    const nodeLists = lists(paged.requests, '/api/v1/nodes');
    assert.equal(nodeLists.length, Math.ceil(nodes.length / 2), describeRequests(nodeLists));
    nodeLists.forEach((r, i) => {
      assert.equal(r.query.get('limit'), '2', r.uri);
      assert.equal(r.query.has('continue'), i > 0, r.uri);
      assert.equal(r.query.has('resourceVersion'), false, 'a consistent read, not resourceVersion=0 (which ignores limit)');
    });
    // Pods are read a few at a time by their own limit (next test); every other list in pages of 2.
    for (const r of paged.requests.filter((x) => x.verb === 'list' && !x.path.endsWith('/pods'))) assert.equal(r.query.get('limit'), '2', r.uri);
    assert.ok(lists(paged.requests, '/apis/apps/v1/deployments').length >= 2, 'deployments come in several pages');
    const listing = paged.requests.filter((r) => r.verb === 'list').sort((a, b) => a.at - b.at);
    for (let i = 1; i < listing.length; i++) {
      const [prev, next] = [listing[i - 1] as AuditedRequest, listing[i] as AuditedRequest];
      assert.ok(next.at >= prev.done, `one list request at a time:\n${describeRequests([prev, next])}`);
    }
    for (const r of lists(whole.requests, '/api/v1/nodes')) assert.equal(r.query.has('limit'), false, r.uri);
  });

  test('nodes are read as metadata: the server answered PartialObjectMetadataList, never a full Node', async () => {
    const { requests } = await report('--output', 'json', '--page-size', '5');
    const nodeReads = requests.filter((r) => r.path.startsWith('/api/v1/nodes'));
    assert.ok(nodeReads.length > 0);
    for (const r of nodeReads) {
      const response = r.response as { kind?: string; items?: { status?: unknown }[] } | undefined;
      assert.equal(response?.kind, 'PartialObjectMetadataList', r.uri);
      assert.ok(response.items?.every((item) => item.status === undefined), 'no status in a metadata item');
    }
  });

  test('pods are never listed across the cluster: only a workload\'s running pods, by its selector, ≤ 5', async () => {
    const { requests } = await report('--output', 'json');
    const pods = requests.filter((r) => r.verb === 'list' && r.path.endsWith('/pods'));
    assert.ok(pods.length > 0);
    for (const r of pods) {
      assert.match(r.path, /^\/api\/v1\/namespaces\/[^/]+\/pods$/, r.uri);
      assert.ok(r.query.get('labelSelector'), r.uri);
      assert.equal(r.query.get('fieldSelector'), 'status.phase=Running', r.uri);
      assert.ok(Number(r.query.get('limit')) <= 5, r.uri);
    }
  });

  test('--limit lists the worst nodes and groups the others; --all lists every one; JSON streams every node', async () => {
    const limited = (await report('--limit', '3')).out.stdout;
    const rows = (text: string) => text.split('\n').filter((l) => /^(cp-\d|worker-\d+) /.test(l));
    assert.equal(rows(limited).length, 3);
    assert.deepEqual(rows(limited).map((l) => l.split(' ')[0]), ['cp-1', 'cp-2', 'cp-3'], 'the control-plane nodes fail the most');
    assert.match(limited, /^Other nodes \(--all lists each one\)$/m);
    const grouped = [...limited.matchAll(/^ {2}(\d+) nodes? (?:grade [A-F],|with|without)/gm)].reduce((n, m) => n + Number(m[1]), 0);
    assert.equal(grouped, nodes.length - 3, 'every other node is in one group');
    assert.match(limited, /^ {2}\d+ nodes? without agent/m);
    assert.match(limited, /^ {2}\d+ nodes? with an unreadable report annotation/m);
    assert.equal(rows((await report('--all')).out.stdout).length, nodes.length);
    const json = JSON.parse((await report('--output', 'json', '--limit', '1')).out.stdout) as ClusterReport;
    assert.deepEqual(json.nodes.map((n) => n.name), [...nodes].sort(), 'every node, in the API\'s (name) order');
    assert.equal(json.summary.nodes, nodes.length);
    assert.equal((json as Partial<ClusterReport>).rest, undefined, 'JSON has every node, no groups');
  });

  test('pages of large objects get fewer items: a page stays near its byte target', async () => {
    await cp.must('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'big-objects' } });
    const names = Array.from({ length: 150 }, (_, i) => `cm-${String(i).padStart(3, '0')}`);
    await inParallel(names, 8, (name) => cp.must('POST', '/api/v1/namespaces/big-objects/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { blob: 'x'.repeat(4000) } }));
    const client = KubeClient.fromKubeconfig(kubeconfig, { limiter: new TokenBucket(100, 100) });
    const since = Date.now();
    const seen: string[] = [];
    try {
      await client.listPages(CONFIGMAPS, { namespace: 'big-objects', limit: 500, pageBytes: 40_000 }, (page) => { seen.push(...page.items.map((i) => i.metadata.name)); });
    } finally {
      await client.stop();
    }
    assert.deepEqual(seen, names, 'each object once, in order');
    const limits = (await audit.requests((r) => r.user === REPORTER && r.at >= since)).map((r) => Number(r.query.get('limit')));
    assert.equal(limits[0], FIRST_ADAPTIVE_LIMIT, 'the first page asks for a few items');
    assert.ok(limits.slice(1).every((l) => l >= 8 && l <= 10), `then as many as fit in 40 000 bytes (~4.2 kB each): ${limits}`);
  });

  test('on a terminal: a progress line while paging, erased before the report, then what the run cost', async () => {
    const stdout = new PassThrough();
    const stderr = Object.assign(new PassThrough(), { isTTY: true, columns: 80 });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    stdout.on('data', (c: Buffer) => out.push(c));
    stderr.on('data', (c: Buffer) => err.push(c));
    const since = Date.now();
    const code = await main(['report', '--kubeconfig', kubeconfig, '--page-size', '4', '--qps', '50', '--fail-on', 'never'], { stdout, stderr, env: {} });
    assert.equal(code, 0);
    const text = Buffer.concat(err).toString('utf8');
    assert.match(text, /\r\u001b\[Kreport: nodes · 4 read, page 1/);
    assert.match(text, /\r\u001b\[Kreport: deployments\.apps · \d+ read, page \d+/);
    const last = /\r\u001b\[K(report: (\d+) requests, [\d.]+ (?:KiB|MiB) received in [\d.]+ s \(pages of 4, ≤ 50 requests\/s\))\n$/.exec(text);
    assert.ok(last, JSON.stringify(text.slice(-300)));
    const requests = await audit.requests((r) => r.user === REPORTER && r.at >= since);
    assert.equal(Number(last[2]), requests.length, 'the count the server saw');
    assert.doesNotMatch(Buffer.concat(out).toString('utf8'), /\r|\u001b/, 'the report itself has no progress in it');
    assert.equal((await runCli(['report', '--kubeconfig', kubeconfig, '--fail-on', 'never'])).stderr, '', 'nothing on stderr when it is not a terminal');
  });

  // Last: it restarts the API server (the watch cache would otherwise serve the old snapshot).
  test('a continue token that expired (410) restarts the node list once; every node is read once', async () => {
    // One report time for both runs: the heartbeats' ages are measured against it.
    const generatedAt = new Date().toISOString();
    const run = async (pageSize: number, betweenPages?: () => Promise<void>) => {
      let hooked = false;
      const api = ClusterApi.fromKubeconfig(kubeconfig, {}, {}, {
        pageSize,
        onPage: async (p) => {
          if (p.resource !== 'nodes' || p.pages !== 2 || hooked || !betweenPages) return;
          hooked = true;
          await betweenPages();
        },
      });
      const rows: NodeRow[] = [];
      try {
        const result = await runClusterReport(api, { limit: 4, generatedAt, onNode: (row) => { rows.push(row); } });
        return { result, rows };
      } finally {
        await api.close();
      }
    };
    const since = Date.now();
    const expired = await run(3, async () => {
      await cp.must('POST', '/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'bump-revision' } });
      await cp.compact();
      await cp.restartApiserver();
    });
    const nodeLists = (await audit.requests((r) => r.user === REPORTER && r.at >= since)).filter((r) => r.verb === 'list' && r.path === '/api/v1/nodes');
    const gone = nodeLists.findIndex((r) => r.code === 410);
    assert.ok(gone > 0, `the server refused a continue token:\n${describeRequests(nodeLists)}`);
    assert.equal(nodeLists[gone]?.query.has('continue'), true);
    assert.equal(nodeLists[gone + 1]?.query.has('continue'), false, 'then the list started again from its first page');
    assert.deepEqual(expired.result.api.restarted, ['nodes']);
    assert.deepEqual(expired.rows.map((r) => r.name), [...nodes].sort(), 'each node once, none lost');

    const plain = await run(0);
    const strip = (r: ClusterReport) => ({ ...r, generatedAt: '', api: undefined });
    assert.deepEqual(strip(expired.result), strip(plain.result), 'the same report as an unpaged run');
    assert.deepEqual(expired.rows, plain.rows);
  });
});
