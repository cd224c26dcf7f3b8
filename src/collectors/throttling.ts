// Evidence of client-side throttling: client-go's "Throttling request took …" / "Waited for …" /
// "Waited before sending request" lines in the last hour of the static pods' logs (/var/log/pods, CRI
// or Docker json-file format) and of the kubelet's journal (journalctl on the real root, log files
// otherwise). Counts and the longest wait per component; every file is read backwards, bounded.
// Any pod can print such a line, so only the control plane's static pods and the kubelet are judged
// (they make the total); other pods are counted apart, as information. No log line is copied out:
// the longest wait is described by its time, delay, verb and path (query and tokens removed).
import type { Collector } from './collector.ts';
import type { FactSet } from '../facts/fact-set.ts';
import type { HostRoot } from '../host/host-root.ts';
import { runHostCommand } from '../host/exec.ts';
import { addHit, DEFAULT_LIMITS, describeHit, mergeTallies, newestLineTime, newTally, scanLogBackwards, type FileScan, type ScanLimits, type ScanWindow, type ThrottleTally } from './log-scan.ts';
import { lineTime, matchThrottle } from './throttle-lines.ts';

export const COMPONENTS = ['kubelet', 'scheduler', 'controllerManager', 'apiserver', 'otherPods'] as const;
type Component = (typeof COMPONENTS)[number];

/** Components whose lines are judged; otherPods is information only. */
const JUDGED: readonly Component[] = ['kubelet', 'scheduler', 'controllerManager', 'apiserver'];
// A static pod's log directory: kube-system_<name>_<uid>, the UID being the kubelet's hash of the
// manifest (32 hex digits), which no pod created through the API has (those get UUIDs).
const STATIC_POD_DIR = /^kube-system_(kube-scheduler|kube-controller-manager|kube-apiserver)-[^_]+_[0-9a-f]{32}$/;
const STATIC_COMPONENTS: Record<string, Component> = {
  'kube-scheduler': 'scheduler', 'kube-controller-manager': 'controllerManager', 'kube-apiserver': 'apiserver',
};
const OTHER_PODS_NOTE = 'information only, not judged: any pod can print a throttling line';
const KUBELET_LOGS = ['/var/log/kubelet.log', '/var/log/k3s.log', '/var/log/rke2.log', '/var/log/syslog', '/var/log/messages'];
const JOURNAL_UNITS = ['kubelet', 'k3s', 'k3s-agent', 'rke2-server', 'rke2-agent'];
const MAX_POD_DIRS = 500;
const MAX_TOTAL_BYTES = 512 * 1024 * 1024;

export interface ThrottlingOptions {
  windowMs?: number;
  limits?: ScanLimits;
  /** Wall clock for the window's end; default: now on the real root, the newest log line on a snapshot. */
  clock?: () => number;
}

interface Evidence {
  tally: ThrottleTally;
  sources: string[];
  scanned: boolean;
  partial: string[];
}

function podComponent(podDir: string): Component {
  const name = STATIC_POD_DIR.exec(podDir)?.[1];
  return name ? (STATIC_COMPONENTS[name] as Component) : 'otherPods';
}

async function podLogFiles(host: HostRoot): Promise<{ path: string; component: Component }[]> {
  const pods = await host.listDir('/var/log/pods');
  const files: { path: string; component: Component }[] = [];
  for (const pod of (pods.ok ? pods.entries : []).slice(0, MAX_POD_DIRS)) {
    const containers = await host.listDir(`/var/log/pods/${pod}`);
    for (const container of containers.ok ? containers.entries : []) {
      const logs = await host.listDir(`/var/log/pods/${pod}/${container}`);
      for (const log of logs.ok ? logs.entries : []) {
        if (/^\d+\.log$/.test(log)) files.push({ path: `/var/log/pods/${pod}/${container}/${log}`, component: podComponent(pod) });
      }
    }
  }
  return files;
}

/** Only kubelet (or k3s/rke2) lines count in a shared syslog file. */
function kubeletLine(path: string): (line: string) => boolean {
  if (!path.endsWith('/syslog') && !path.endsWith('/messages')) return () => true;
  return (line) => /\b(kubelet|k3s|rke2)(\[\d+\])?:/.test(line);
}

async function journalHits(host: HostRoot, window: ScanWindow): Promise<{ tally: ThrottleTally; source: string } | string> {
  const since = `@${Math.floor(window.startMs / 1000)}`;
  const args = [...JOURNAL_UNITS.flatMap((u) => ['-u', u]), `--since=${since}`, '-o', 'short-iso', '--no-pager', '-q', '--grep=Throttling request took|Waited for |Waited before sending request'];
  const result = await runHostCommand(host, 'journalctl', args, { timeoutMs: 20_000, acceptExitCodes: [1] });
  if (!result.ok) return result.reason;
  const tally = newTally();
  for (const line of result.stdout.split('\n')) {
    const match = matchThrottle(line);
    if (match) addHit(tally, { ...match, atMs: lineTime(line, new Date(window.endMs).getUTCFullYear()) }, line);
  }
  return { tally, source: result.source };
}

function coverageNote(scan: FileScan): string | undefined {
  if (scan.error) return scan.error;
  if (!scan.coveredWindow) return `${scan.path}: only the last ${Math.round(scan.scannedBytes / 1048576)} MiB of ${Math.round(scan.sizeBytes / 1048576)} MiB read (budget), the count is a lower bound`;
  return undefined;
}

async function windowFor(host: HostRoot, paths: string[], options: ThrottlingOptions): Promise<ScanWindow> {
  const windowMs = options.windowMs ?? 3_600_000;
  let endMs = options.clock?.() ?? (host.isRealRoot ? Date.now() : undefined);
  if (endMs === undefined) {
    const year = new Date().getUTCFullYear();
    for (const path of paths) {
      const t = await newestLineTime(host, path, year);
      if (t !== undefined && (endMs === undefined || t > endMs)) endMs = t;
    }
    endMs ??= Date.now();
  }
  return { startMs: endMs - windowMs, endMs, referenceYear: new Date(endMs).getUTCFullYear() };
}

function setComponentFacts(facts: FactSet, key: string, evidence: Evidence, window: ScanWindow, absent: string): void {
  const minutes = Math.round((window.endMs - window.startMs) / 60_000);
  if (!evidence.scanned) {
    facts.set(`throttling.${key}.count`, null, 'inferred', absent);
    facts.set(`throttling.${key}.maxWaitMs`, null, 'inferred', absent);
    return;
  }
  const source = evidence.sources.slice(0, 5).join(', ') + (evidence.sources.length > 5 ? ` and ${evidence.sources.length - 5} more` : '');
  const { tally } = evidence;
  const detail = [
    `last ${minutes} min up to ${new Date(window.endMs).toISOString()}`,
    tally.worst ? `formats: ${[...tally.formats].join(', ')}; longest: ${describeHit(tally.worst)}` : 'no throttling lines',
    ...evidence.partial,
  ].join('; ');
  facts.set(`throttling.${key}.count`, tally.count, source, detail);
  facts.set(`throttling.${key}.maxWaitMs`, Math.round(tally.maxWaitMs), source, detail);
}

export function createThrottlingCollector(options: ThrottlingOptions = {}): Collector {
  const keys = [...COMPONENTS, 'total'].flatMap((c) => [`throttling.${c}.count`, `throttling.${c}.maxWaitMs`]);
  return {
    name: 'throttling',
    provides: [...keys, 'throttling.windowMinutes'],
    async collect({ host, facts }) {
      const limits = options.limits ?? DEFAULT_LIMITS;
      const podFiles = await podLogFiles(host);
      const kubeletFiles: string[] = [];
      for (const path of KUBELET_LOGS) if (await host.exists(path)) kubeletFiles.push(path);
      const window = await windowFor(host, [...podFiles.map((f) => f.path), ...kubeletFiles], options);
      facts.set('throttling.windowMinutes', Math.round((window.endMs - window.startMs) / 60_000), 'default', `ends ${new Date(window.endMs).toISOString()}`);

      const evidence = new Map<Component, Evidence>(COMPONENTS.map((c) => [c, { tally: newTally(), sources: [], scanned: false, partial: [] }]));
      let totalBytes = 0;
      const record = (component: Component, scan: FileScan): void => {
        const e = evidence.get(component) as Evidence;
        totalBytes += scan.scannedBytes;
        const note = coverageNote(scan);
        if (note) e.partial.push(note);
        if (scan.error) return;
        e.scanned = true;
        e.sources.push(scan.path);
        mergeTallies(e.tally, scan.tally);
      };
      for (const file of podFiles) {
        if (totalBytes >= MAX_TOTAL_BYTES) break;
        record(file.component, await scanLogBackwards(host, file.path, window, limits));
      }
      const kubelet = evidence.get('kubelet') as Evidence;
      const journal = host.isRealRoot ? await journalHits(host, window) : undefined;
      if (journal && typeof journal !== 'string') {
        kubelet.scanned = true;
        kubelet.sources.push(journal.source);
        mergeTallies(kubelet.tally, journal.tally);
      } else {
        if (typeof journal === 'string') kubelet.partial.push(`journal not read: ${journal}`);
        for (const path of kubeletFiles) record('kubelet', await scanLogBackwards(host, path, window, limits, kubeletLine(path)));
      }
      setComponentFacts(facts, 'kubelet', kubelet, window, `no kubelet journal or log file (${KUBELET_LOGS.join(', ')})`);
      for (const c of COMPONENTS.filter((c) => c !== 'kubelet' && c !== 'otherPods')) setComponentFacts(facts, c, evidence.get(c) as Evidence, window, 'no such pod logs under /var/log/pods on this node');
      const other = evidence.get('otherPods') as Evidence;
      other.partial.unshift(OTHER_PODS_NOTE);
      setComponentFacts(facts, 'otherPods', other, window, `no other pod logs under /var/log/pods on this node; ${OTHER_PODS_NOTE}`);
      const all = JUDGED.map((c) => evidence.get(c) as Evidence);
      const totalTally = newTally();
      for (const e of all) mergeTallies(totalTally, e.tally);
      const total: Evidence = { tally: totalTally, sources: all.flatMap((e) => e.sources), scanned: all.some((e) => e.scanned), partial: all.flatMap((e) => e.partial) };
      if (total.scanned) setComponentFacts(facts, 'total', total, window, '');
      else {
        const why = `no logs to read: no control-plane static pod logs under /var/log/pods, no kubelet journal or log file (${KUBELET_LOGS.join(', ')}); other pods' lines are not judged`;
        for (const suffix of ['count', 'maxWaitMs']) facts.unknown(`throttling.total.${suffix}`, `${why}${total.partial.length ? `; ${total.partial.join('; ')}` : ''}`);
      }
    },
  };
}

export default createThrottlingCollector();
