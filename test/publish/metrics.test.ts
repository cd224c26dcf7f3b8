import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { createAgentMetrics } from '../../src/publish/metrics.ts';
import { parseListenAddress, startMetricsServer } from '../../src/agent/metrics-server.ts';
import { FakeApiServer } from '../helpers/fake-apiserver.ts';
import { runAgent } from '../helpers/agent-harness.ts';
import { seedReport } from '../helpers/reports.ts';
import { requireTool } from '../helpers/tools.ts';

function reportWithFacts() {
  const r = seedReport();
  r.facts = {
    ...r.facts,
    'cpu.driver': { value: 'intel_pstate', source: '/sys/devices/system/cpu/cpufreq/policy0/scaling_driver' },
    'tuned.activeProfiles': { value: ['throughput-performance'], source: '/etc/tuned/active_profile' },
    'etcd.fsync.p99Ms': { value: 18.2, source: 'inferred', detail: 'probe' },
    'etcd.walFsync.p99Ms': { value: 12, source: 'api:etcd metrics' },
    'kubelet.kubeAPIQPS': { value: 50, source: 'default' },
    'scheduler.kubeAPIBurst': { value: 100, source: 'flag:--kube-api-burst' },
    'throttling.scheduler.count': { value: 7, source: '/var/log/pods/kube-scheduler.log' },
    'kernel.hz': { value: null, source: 'unknown', unknown: 'no kernel config found' },
    'pods.startup.total.p99Ms': { value: 6412, source: 'api:pods' },
    'pods.startup.creation.p50Ms': { value: 3500, source: 'api:pods' },
    'pods.startup.scheduling.p99Ms': { value: null, source: 'api:pods' },
    'volumes.attachP90Ms': { value: 11020, source: 'inferred' },
  };
  return r;
}

async function scrape(port: number, path = '/metrics'): Promise<{ status: number; body: string; type: string | null }> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`);
  return { status: res.status, body: await res.text(), type: res.headers.get('content-type') };
}

test('metrics expose score, per-rule status, fact gauges with bounded labels, and API counters', async (t) => {
  const metrics = createAgentMetrics('0.1.0');
  let ready = false;
  const server = await startMetricsServer(metrics, { host: '127.0.0.1', port: 0 }, () => ready);
  t.after(() => server.close());
  assert.equal((await scrape(server.port, '/readyz')).status, 503);
  assert.equal((await scrape(server.port, '/healthz')).status, 200);
  assert.doesNotMatch((await scrape(server.port)).body, /node_tuning_advisor_score/, 'no score before the first scan');
  metrics.setReport(reportWithFacts(), 0.25, 1_764_547_200_000);
  metrics.countApiRequest('patch', '200');
  metrics.countApiRequest('patch', '500');
  ready = true;
  assert.equal((await scrape(server.port, '/readyz')).status, 200);
  const { body, type } = await scrape(server.port);
  assert.match(type ?? '', /^text\/plain; version=0\.0\.4/);
  for (const line of [
    'node_tuning_advisor_score 73',
    'node_tuning_advisor_finding{rule="etcd-fsync-latency",severity="critical",category="etcd"} 1',
    'node_tuning_advisor_finding{rule="kubelet-api-qps",severity="warning",category="api-client"} 0',
    'node_tuning_advisor_finding{rule="tuned-profile",severity="info",category="tuned"} 0',
    // One series per status, 1 for the current one: an unknown rule can alert (issue 24).
    'node_tuning_advisor_finding_status{rule="tuned-profile",severity="info",category="tuned",status="unknown"} 1',
    'node_tuning_advisor_finding_status{rule="tuned-profile",severity="info",category="tuned",status="fail"} 0',
    'node_tuning_advisor_finding_status{rule="tuned-profile",severity="info",category="tuned",status="pass"} 0',
    'node_tuning_advisor_finding_status{rule="tuned-profile",severity="info",category="tuned",status="not-applicable"} 0',
    'node_tuning_advisor_finding_status{rule="etcd-fsync-latency",severity="critical",category="etcd",status="fail"} 1',
    'node_tuning_advisor_finding_status{rule="kubelet-api-qps",severity="warning",category="api-client",status="pass"} 1',
    'node_tuning_advisor_cpu_governor_info{governor="powersave"} 1',
    'node_tuning_advisor_cpu_driver_info{driver="intel_pstate"} 1',
    'node_tuning_advisor_tuned_profile_info{profile="throughput-performance"} 1',
    'node_tuning_advisor_etcd_fsync_p99_seconds{source="probe"} 0.0182',
    'node_tuning_advisor_etcd_fsync_p99_seconds{source="etcd_metrics"} 0.012',
    'node_tuning_advisor_pod_startup_window_seconds{phase="total",percentile="99"} 6.412',
    'node_tuning_advisor_pod_startup_window_seconds{phase="creation",percentile="50"} 3.5',
    'node_tuning_advisor_volume_attach_window_seconds{percentile="90"} 11.02',
    'node_tuning_advisor_client_qps{component="kubelet"} 50',
    'node_tuning_advisor_client_burst{component="kube-scheduler"} 100',
    'node_tuning_advisor_client_throttled_requests{component="kube-scheduler"} 7',
    'node_tuning_advisor_scan_duration_seconds 0.25',
    'node_tuning_advisor_last_scan_success_timestamp_seconds 1764547200',
    'node_tuning_advisor_api_requests_total{verb="patch",code="500"} 1',
  ]) assert.ok(body.includes(`${line}\n`), `missing: ${line}`);
  assert.doesNotMatch(body, /fix="/, 'no free text (the fix) in a label');
  assert.match(body, /^node_tuning_advisor_build_info\{version="0\.1\.0",nodejs="24\.[\d.]+"\} 1$/m);
  assert.match(body, /^process_resident_memory_bytes \d+/m);
  assert.doesNotMatch(body, /^node_tuning_advisor_kernel_hz\{/m, 'an unknown fact exports no sample');
  assert.doesNotMatch(body, /^node_tuning_advisor_pod_startup_window_seconds\{phase="scheduling"/m, 'no sample for a phase without samples');
  assert.doesNotMatch(body, /^node_tuning_advisor_volume_attach_window_seconds\{percentile="50"\}/m);
  metrics.setReport(seedReport(), 0.2, 1_764_547_200_000);
  assert.match((await scrape(server.port)).body, /^node_tuning_advisor_kernel_hz\{source="\/boot\/config-6\.1\.0"\} 250$/m);
});

test('metric names and help pass promtool check metrics', async (t) => {
  const promtool = requireTool(t, 'promtool', 'prometheus');
  if (!promtool) return;
  const metrics = createAgentMetrics('0.1.0');
  metrics.setReport(reportWithFacts(), 0.1, Date.now());
  metrics.countApiRequest('watch', '200');
  metrics.observePodPhase('creation', 17.3);
  metrics.observePodPhase('total', 18.5);
  metrics.setKubeletSli({ sli: { samples: 100, p99Seconds: 4.95 }, total: { samples: 100, p99Seconds: 4.95 }, imagePull: { samples: 0, p99Seconds: null }, sandbox: { samples: 100, p99Seconds: 0.08 } });
  metrics.setKubeletRead('ok');
  metrics.setHeartbeatPeriod(300);
  assert.doesNotMatch(await metrics.registry.metrics(), /heartbeat_last_success/, 'no timestamp before the first renewal (0 would read as 1970)');
  metrics.heartbeatRenewed(1_764_547_200_500);
  const text = await metrics.registry.metrics();
  assert.match(text, /^node_tuning_advisor_heartbeat_interval_seconds 300$/m);
  assert.match(text, /^node_tuning_advisor_heartbeat_last_success_timestamp_seconds 1764547200\.5$/m);
  assert.match(text, /^node_tuning_advisor_kubelet_pod_start_p99_seconds\{histogram="pod_start_sli"\} 4\.95$/m);
  assert.match(text, /^node_tuning_advisor_kubelet_metrics_read\{result="ok"\} 1$/m);
  assert.match(text, /^node_tuning_advisor_kubelet_metrics_read\{result="forbidden"\} 0$/m);
  assert.doesNotMatch(text, /^node_tuning_advisor_kubelet_pod_start_p99_seconds\{histogram="image_pull"\}/m, 'no p99 without samples');
  const child = execFile(promtool, ['check', 'metrics']);
  const done = new Promise<{ code: number | null; out: string }>((resolve) => {
    let out = '';
    child.stdout?.on('data', (d) => { out += d; });
    child.stderr?.on('data', (d) => { out += d; });
    child.on('close', (code) => resolve({ code, out }));
  });
  child.stdin?.end(text);
  const { code, out } = await done;
  assert.equal(out.trim(), '', `promtool complained:\n${out}`);
  assert.equal(code, 0);
});

test('scrapes read the cached report and never trigger a scan', async (t) => {
  const api = new FakeApiServer();
  await api.start();
  t.after(() => api.stop());
  api.addNode('worker-1');
  const metrics = createAgentMetrics('0.1.0');
  const agent = runAgent(api.writeKubeconfig(), () => seedReport(), { metrics, agent: { intervalMs: 60_000 } });
  t.after(async () => { agent.agent.stop(); await agent.result; });
  const server = await startMetricsServer(metrics, { host: '127.0.0.1', port: 0 }, () => agent.agent.ready);
  t.after(() => server.close());
  while (api.count('PATCH') === 0) await new Promise((r) => setTimeout(r, 10));
  for (let i = 0; i < 20; i += 1) assert.match((await scrape(server.port)).body, /node_tuning_advisor_score 73/);
  assert.equal(agent.scans(), 1);
  assert.match((await scrape(server.port)).body, /node_tuning_advisor_api_requests_total\{verb="patch",code="200"\} 1/);
  agent.agent.stop();
  assert.equal(await agent.result, 0);
});

test('metrics and health keep serving while the API server is unreachable', async (t) => {
  const api = new FakeApiServer();
  await api.start();
  const kubeconfig = api.writeKubeconfig();
  await api.stop();
  const metrics = createAgentMetrics('0.1.0');
  const agent = runAgent(kubeconfig, () => seedReport(), { metrics, agent: { intervalMs: 60_000 } });
  t.after(async () => { agent.agent.stop(); await agent.result; });
  const server = await startMetricsServer(metrics, { host: '127.0.0.1', port: 0 }, () => agent.agent.ready);
  t.after(() => server.close());
  while (!/ECONNREFUSED/.test(agent.logs.join('\n'))) await new Promise((r) => setTimeout(r, 10));
  assert.equal((await scrape(server.port, '/healthz')).status, 200);
  // The first scan runs once the watches have failed once; under load that can trail the first error.
  let body = (await scrape(server.port)).body;
  for (let waited = 0; !/^node_tuning_advisor_score /m.test(body) && waited < 10_000; waited += 50) {
    await new Promise((r) => setTimeout(r, 50));
    body = (await scrape(server.port)).body;
  }
  assert.match(body, /^node_tuning_advisor_api_requests_total\{verb="list",code="ECONNREFUSED"\} [1-9]/m);
  assert.match(body, /^node_tuning_advisor_score 73$/m, 'the scan result is exported even before it could be published');
  agent.agent.stop();
  assert.equal(await agent.result, 0);
});

test('--metrics-addr parsing names the flag on bad input', () => {
  assert.deepEqual(parseListenAddress(':20263'), { host: '0.0.0.0', port: 20263 });
  assert.deepEqual(parseListenAddress('127.0.0.1:0'), { host: '127.0.0.1', port: 0 });
  assert.deepEqual(parseListenAddress('[::1]:9000'), { host: '::1', port: 9000 });
  assert.throws(() => parseListenAddress('20263'), /--metrics-addr "20263" is not HOST:PORT/);
  assert.throws(() => parseListenAddress(':70000'), /--metrics-addr/);
});
