// Evidence of client-side throttling: client-go's "Throttling request took …" / "Waited for …" /
// "Waited before sending request" lines in the last hour of the static pods' logs (/var/log/pods, CRI
// or Docker json-file format) and of the kubelet's journal (journalctl on the real root, log files
// otherwise). Counts and the longest wait per component; every file is read backwards, bounded.
// Any pod can print such a line, so only the control plane's static pods and the kubelet are judged
// (they make the total); other pods are counted apart, as information. The judged logs are read
// first, with their own byte budget, and set the window: however many pods and bytes tenants log,
// they can neither push the control plane's logs out of the scan nor move its window. No log line
// is copied out: the longest wait is described by its time, delay, verb and path (query and tokens
// removed).
import type { Collector } from './collector.ts';
import type { FactSet } from '../facts/fact-set.ts';
import type { HostRoot } from '../host/host-root.ts';
import { runHostCommand } from '../host/exec.ts';
import { addHit, DEFAULT_LIMITS, describeHit, mergeTallies, newestLineTime, newTally, scanLogBackwards, type FileScan, type ScanLimits, type ScanWindow, type ThrottleTally } from './log-scan.ts';
import { lineTime, matchThrottle } from './throttle-lines.ts';
import { eachLine } from '../text/lines.ts';

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
const MAX_OTHER_POD_DIRS = 500;
/** journalctl's output is capped (host/exec.ts); a longer line is no client-go message. */
const MAX_JOURNAL_LINE = 64 * 1024;
const MiB = 1024 * 1024;
/** Bytes read per scan: the control plane's static pods and the kubelet, and apart, every other pod. */
export const DEFAULT_BUDGETS = { judgedBytes: 384 * MiB, otherPodsBytes: 128 * MiB };

export interface ThrottlingOptions {
  windowMs?: number;
  limits?: ScanLimits;
  budgets?: typeof DEFAULT_BUDGETS;
  /** Wall clock for the window's end; default: now on the real root, the newest log line on a snapshot. */
  clock?: () => number;
}

interface Evidence {
  tally: ThrottleTally;
  sources: string[];
  scanned: boolean;
  /** Files found and left unread (budget): the component's logs exist, its count is not known. */
  unread: number;
  partial: string[];
}

interface LogFile { path: string; component: Component }

/** What is left of one budget, and what it is called in a reason. */
interface Budget { leftBytes: number; what: string; totalBytes: number }

function podComponent(podDir: string): Component {
  const name = STATIC_POD_DIR.exec(podDir)?.[1];
  return name ? (STATIC_COMPONENTS[name] as Component) : 'otherPods';
}

/**
 * Pod log files, the control plane's static pods apart from the others: those are looked for among
 * every pod directory, whatever sorts before them; other pods are at most MAX_OTHER_POD_DIRS.
 */
async function podLogFiles(host: HostRoot): Promise<{ judged: LogFile[]; others: LogFile[]; othersLeft: number }> {
  const pods = await host.listDir('/var/log/pods');
  const entries = pods.ok ? pods.entries : [];
  const judgedDirs = entries.filter((pod) => podComponent(pod) !== 'otherPods');
  const otherDirs = entries.filter((pod) => podComponent(pod) === 'otherPods');
  return {
    judged: await logsOf(host, judgedDirs),
    others: await logsOf(host, otherDirs.slice(0, MAX_OTHER_POD_DIRS)),
    othersLeft: Math.max(0, otherDirs.length - MAX_OTHER_POD_DIRS),
  };
}

async function logsOf(host: HostRoot, podDirs: string[]): Promise<LogFile[]> {
  const files: LogFile[] = [];
  for (const pod of podDirs) {
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
  eachLine(result.stdout, { maxLines: Infinity, maxLineChars: MAX_JOURNAL_LINE }, (line) => {
    const match = matchThrottle(line);
    if (match) addHit(tally, { ...match, atMs: lineTime(line, new Date(window.endMs).getUTCFullYear()) }, line);
  });
  return { tally, source: result.source };
}

function coverageNote(scan: FileScan): string | undefined {
  if (scan.error) return scan.error;
  if (!scan.coveredWindow) return `${scan.path}: only the last ${Math.round(scan.scannedBytes / 1048576)} MiB of ${Math.round(scan.sizeBytes / 1048576)} MiB read (budget), the count is a lower bound`;
  return undefined;
}

/** On a snapshot the window ends at the newest line of the first group of files that has a dated line (judged logs first). */
async function windowFor(host: HostRoot, groups: string[][], options: ThrottlingOptions): Promise<ScanWindow> {
  const windowMs = options.windowMs ?? 3_600_000;
  let endMs = options.clock?.() ?? (host.isRealRoot ? Date.now() : undefined);
  const year = new Date().getUTCFullYear();
  for (const paths of groups) {
    if (endMs !== undefined) break;
    for (const path of paths) {
      const t = await newestLineTime(host, path, year);
      if (t !== undefined && (endMs === undefined || t > endMs)) endMs = t;
    }
  }
  endMs ??= Date.now();
  return { startMs: endMs - windowMs, endMs, referenceYear: new Date(endMs).getUTCFullYear() };
}

function setComponentFacts(facts: FactSet, key: string, evidence: Evidence, window: ScanWindow, absent: string): void {
  const minutes = Math.round((window.endMs - window.startMs) / 60_000);
  if (!evidence.scanned && evidence.unread > 0) {
    for (const suffix of ['count', 'maxWaitMs']) facts.unknown(`throttling.${key}.${suffix}`, evidence.partial.join('; '));
    return;
  }
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
      const budgets = options.budgets ?? DEFAULT_BUDGETS;
      const pods = await podLogFiles(host);
      const kubeletFiles: string[] = [];
      for (const path of KUBELET_LOGS) if (await host.exists(path)) kubeletFiles.push(path);
      const window = await windowFor(host, [[...pods.judged.map((f) => f.path), ...kubeletFiles], pods.others.map((f) => f.path)], options);
      facts.set('throttling.windowMinutes', Math.round((window.endMs - window.startMs) / 60_000), 'default', `ends ${new Date(window.endMs).toISOString()}`);

      const evidence = new Map<Component, Evidence>(COMPONENTS.map((c) => [c, { tally: newTally(), sources: [], scanned: false, unread: 0, partial: [] }]));
      const judgedBudget: Budget = { leftBytes: budgets.judgedBytes, totalBytes: budgets.judgedBytes, what: 'control plane and kubelet' };
      const scan = async (file: LogFile, budget: Budget, keep?: (line: string) => boolean): Promise<void> => {
        const e = evidence.get(file.component) as Evidence;
        if (budget.leftBytes <= 0) {
          e.unread += 1;
          e.partial.push(`${file.path} not read: the ${budget.what} log budget (${Math.round(budget.totalBytes / MiB)} MiB per scan) was used up`);
          return;
        }
        const result = await scanLogBackwards(host, file.path, window, { ...limits, budgetBytes: Math.min(limits.budgetBytes, budget.leftBytes) }, keep);
        budget.leftBytes -= result.scannedBytes;
        const note = coverageNote(result);
        if (note) e.partial.push(note);
        if (result.error) return;
        e.scanned = true;
        e.sources.push(result.path);
        mergeTallies(e.tally, result.tally);
      };
      for (const file of pods.judged) await scan(file, judgedBudget);
      const kubelet = evidence.get('kubelet') as Evidence;
      const journal = host.isRealRoot ? await journalHits(host, window) : undefined;
      if (journal && typeof journal !== 'string') {
        kubelet.scanned = true;
        kubelet.sources.push(journal.source);
        mergeTallies(kubelet.tally, journal.tally);
      } else {
        if (typeof journal === 'string') kubelet.partial.push(`journal not read: ${journal}`);
        for (const path of kubeletFiles) await scan({ path, component: 'kubelet' }, judgedBudget, kubeletLine(path));
      }
      const othersBudget: Budget = { leftBytes: budgets.otherPodsBytes, totalBytes: budgets.otherPodsBytes, what: 'other pods\'' };
      for (const file of pods.others) await scan(file, othersBudget);
      if (pods.othersLeft > 0) evidence.get('otherPods')?.partial.push(`${pods.othersLeft} more pod directories not read (at most ${MAX_OTHER_POD_DIRS})`);
      setComponentFacts(facts, 'kubelet', kubelet, window, `no kubelet journal or log file (${KUBELET_LOGS.join(', ')})`);
      for (const c of COMPONENTS.filter((c) => c !== 'kubelet' && c !== 'otherPods')) setComponentFacts(facts, c, evidence.get(c) as Evidence, window, 'no such pod logs under /var/log/pods on this node');
      const other = evidence.get('otherPods') as Evidence;
      other.partial.unshift(OTHER_PODS_NOTE);
      setComponentFacts(facts, 'otherPods', other, window, `no other pod logs under /var/log/pods on this node; ${OTHER_PODS_NOTE}`);
      const all = JUDGED.map((c) => evidence.get(c) as Evidence);
      const totalTally = newTally();
      for (const e of all) mergeTallies(totalTally, e.tally);
      const total: Evidence = { tally: totalTally, sources: all.flatMap((e) => e.sources), scanned: all.some((e) => e.scanned), unread: 0, partial: all.flatMap((e) => e.partial) };
      if (total.scanned) setComponentFacts(facts, 'total', total, window, '');
      else if (all.some((e) => e.unread > 0)) {
        for (const suffix of ['count', 'maxWaitMs']) facts.unknown(`throttling.total.${suffix}`, total.partial.join('; '));
      } else {
        const why = `no logs to read: no control-plane static pod logs under /var/log/pods, no kubelet journal or log file (${KUBELET_LOGS.join(', ')}); other pods' lines are not judged`;
        for (const suffix of ['count', 'maxWaitMs']) facts.unknown(`throttling.total.${suffix}`, `${why}${total.partial.length ? `; ${total.partial.join('; ')}` : ''}`);
      }
    },
  };
}

export default createThrottlingCollector();
