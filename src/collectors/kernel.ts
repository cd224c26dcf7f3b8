// Kernel facts: release, timer tick (CONFIG_HZ), tick mode (NO_HZ) and preemption model, from the
// kernel's build config; without one, HZ is inferred from how fast jiffies advance.
import type { Collector, CollectorContext } from './collector.ts';
import type { TextResult } from '../host/host-root.ts';

export const HZ_VALUES = [100, 250, 300, 1000] as const;
const INFERENCE_INTERVAL_MS = 1100;

export type KernelConfig = Map<string, string>;

/** `CONFIG_X=y` → X: "y"; `# CONFIG_X is not set` → X: "n". Anything else is ignored. */
export function parseKernelConfig(text: string): KernelConfig {
  const config: KernelConfig = new Map();
  for (const line of text.split('\n')) {
    const set = /^CONFIG_([A-Za-z0-9_]+)=(.*)$/.exec(line);
    if (set) {
      config.set(set[1] as string, (set[2] as string).replace(/^"(.*)"$/, '$1'));
      continue;
    }
    const unset = /^# CONFIG_([A-Za-z0-9_]+) is not set$/.exec(line);
    if (unset) config.set(unset[1] as string, 'n');
  }
  return config;
}

export function configCandidates(release: string | undefined): string[] {
  const paths = ['/proc/config.gz'];
  if (release) {
    paths.push(
      `/boot/config-${release}`,
      `/lib/modules/${release}/config`,
      `/usr/lib/modules/${release}/config`,
      `/usr/lib/ostree-boot/config-${release}`,
      `/usr/src/linux-headers-${release}/.config`,
    );
  }
  return paths;
}

export function hzFromConfig(config: KernelConfig): number | undefined {
  const explicit = Number(config.get('HZ'));
  if (HZ_VALUES.includes(explicit as (typeof HZ_VALUES)[number])) return explicit;
  return HZ_VALUES.find((hz) => config.get(`HZ_${hz}`) === 'y');
}

export function noHzFromConfig(config: KernelConfig): string | undefined {
  if (config.get('NO_HZ_FULL') === 'y') return 'full';
  if (config.get('NO_HZ_IDLE') === 'y' || config.get('NO_HZ') === 'y') return 'idle';
  if (config.get('HZ_PERIODIC') === 'y') return 'periodic';
  return undefined;
}

/** The build's preemption model; with PREEMPT_DYNAMIC this is only the boot default. */
export function preemptFromConfig(config: KernelConfig): string | undefined {
  if (config.get('PREEMPT_RT') === 'y') return 'rt';
  if (config.get('PREEMPT_LAZY') === 'y') return 'lazy';
  if (config.get('PREEMPT') === 'y') return 'full';
  if (config.get('PREEMPT_VOLUNTARY') === 'y') return 'voluntary';
  if (config.get('PREEMPT_NONE') === 'y') return 'none';
  return undefined;
}

/** "none voluntary (full) lazy" → "full" (the format of /sys/kernel/debug/sched/preempt). */
export function activePreemptFromDebugfs(text: string): string | undefined {
  return /\(([a-z]+)\)/.exec(text)?.[1];
}

export function preemptFromCmdline(cmdline: string): string | undefined {
  const mode = /(?:^|\s)preempt=([a-z]+)/.exec(cmdline)?.[1];
  return mode && ['none', 'voluntary', 'full', 'lazy'].includes(mode) ? mode : undefined;
}

/** Nearest legal CONFIG_HZ to a measured tick rate, or undefined when it is more than 15 % off. */
export function snapHz(measured: number): number | undefined {
  if (!Number.isFinite(measured) || measured <= 0) return undefined;
  const nearest = HZ_VALUES.reduce((best, hz) => (Math.abs(hz - measured) < Math.abs(best - measured) ? hz : best));
  return Math.abs(nearest - measured) / nearest <= 0.15 ? nearest : undefined;
}

interface JiffySample {
  jiffies: number;
  /** Seconds on the kernel's clock (timer_list) or ours (schedstat). */
  seconds: number;
}

export function parseTimerList(text: string): JiffySample | undefined {
  const now = /^now at (\d+) nsecs$/m.exec(text);
  const jiffies = /^jiffies: (\d+)$/m.exec(text);
  if (!now || !jiffies) return undefined;
  return { jiffies: Number(jiffies[1]), seconds: Number(now[1]) / 1e9 };
}

export function parseSchedstatTimestamp(text: string): number | undefined {
  const match = /^timestamp (\d+)$/m.exec(text);
  return match ? Number(match[1]) : undefined;
}

const kernelCollector: Collector = {
  name: 'kernel',
  provides: ['kernel.release', 'kernel.cmdline', 'kernel.configSource', 'kernel.hz', 'kernel.noHz', 'kernel.preemptModel'],
  async collect(ctx) {
    const { host, facts } = ctx;
    const release = await host.readValue('/proc/sys/kernel/osrelease');
    if (release.ok && release.text !== '') facts.set('kernel.release', release.text, release.path);
    else facts.unknown('kernel.release', release.ok ? '/proc/sys/kernel/osrelease is empty' : release.reason);

    const cmdline = await host.readValue('/proc/cmdline');
    if (cmdline.ok) facts.set('kernel.cmdline', cmdline.text, cmdline.path);
    else facts.unknown('kernel.cmdline', cmdline.reason);

    const tried: string[] = [];
    let found: { config: KernelConfig; path: string } | undefined;
    for (const candidate of configCandidates(release.ok ? release.text : undefined)) {
      const read: TextResult = candidate.endsWith('.gz')
        ? await host.readGzipText(candidate)
        : await host.readText(candidate, { maxBytes: 16 * 1024 * 1024 });
      if (!read.ok) {
        tried.push(read.reason);
        continue;
      }
      const config = parseKernelConfig(read.text);
      if (config.size === 0) {
        tried.push(`${candidate} has no CONFIG_ lines`);
        continue;
      }
      found = { config, path: candidate };
      break;
    }

    if (found) {
      facts.set('kernel.configSource', found.path, found.path);
      recordConfigFacts(ctx, found.config, found.path, cmdline.ok ? cmdline.text : '');
    } else {
      const reason = `no kernel config readable (tried: ${tried.join('; ')})`;
      facts.unknown('kernel.configSource', reason);
      facts.unknown('kernel.noHz', reason);
      facts.unknown('kernel.preemptModel', reason);
    }
    if (!facts.has('kernel.hz')) await inferHz(ctx, tried);
  },
};

function recordConfigFacts(ctx: CollectorContext, config: KernelConfig, path: string, cmdline: string): void {
  const { facts } = ctx;
  const hz = hzFromConfig(config);
  if (hz !== undefined) facts.set('kernel.hz', hz, path);

  const noHz = noHzFromConfig(config);
  if (noHz === undefined) facts.unknown('kernel.noHz', `${path} sets none of NO_HZ_FULL, NO_HZ_IDLE, HZ_PERIODIC`, path);
  else if (/(?:^|\s)nohz=off(?:\s|$)/.test(cmdline)) facts.set('kernel.noHz', 'periodic', '/proc/cmdline', 'nohz=off');
  else facts.set('kernel.noHz', noHz, path);

  const built = preemptFromConfig(config);
  if (built === undefined) {
    facts.unknown('kernel.preemptModel', `${path} sets no PREEMPT_* model`, path);
  } else if (config.get('PREEMPT_DYNAMIC') === 'y' && preemptFromCmdline(cmdline)) {
    facts.set('kernel.preemptModel', preemptFromCmdline(cmdline) as string, '/proc/cmdline', `preempt= overrides the build default ${built}`);
  } else {
    const dynamic = config.get('PREEMPT_DYNAMIC') === 'y' ? 'PREEMPT_DYNAMIC: boot default, switchable at run time' : undefined;
    facts.set('kernel.preemptModel', built, path, dynamic);
  }
}

/** Two samples of jiffies at least a second apart; /proc/timer_list first (root only), then /proc/schedstat. */
async function inferHz(ctx: CollectorContext, tried: string[]): Promise<void> {
  const { facts } = ctx;
  if (!(await ctx.liveProc())) {
    const reason = `/proc under ${ctx.host.root} is not a live procfs (a snapshot): the tick rate cannot be measured there`;
    facts.unknown('kernel.hz', `no kernel config readable (tried: ${tried.join('; ')}); ${reason}`);
    return;
  }
  const sources: { path: string; sample: (text: string, wallSeconds: number) => JiffySample | undefined }[] = [
    { path: '/proc/timer_list', sample: (text) => parseTimerList(text) },
    {
      path: '/proc/schedstat',
      sample: (text, wallSeconds) => {
        const jiffies = parseSchedstatTimestamp(text);
        return jiffies === undefined ? undefined : { jiffies, seconds: wallSeconds };
      },
    },
  ];
  for (const source of sources) {
    const first = await readSample(ctx, source.path, source.sample);
    if (!first.ok) {
      tried.push(first.reason);
      continue;
    }
    await ctx.sleep(INFERENCE_INTERVAL_MS);
    const second = await readSample(ctx, source.path, source.sample);
    if (!second.ok) {
      tried.push(second.reason);
      continue;
    }
    const elapsed = second.sample.seconds - first.sample.seconds;
    const measured = (second.sample.jiffies - first.sample.jiffies) / elapsed;
    const hz = elapsed >= 0.9 ? snapHz(measured) : undefined;
    if (hz === undefined) {
      tried.push(`${source.path}: jiffies advanced ${(measured || 0).toFixed(1)}/s, not near a legal CONFIG_HZ`);
      continue;
    }
    facts.set('kernel.hz', hz, 'inferred', `from ${source.path}: ${measured.toFixed(1)} ticks/s over ${elapsed.toFixed(2)} s`);
    return;
  }
  facts.unknown('kernel.hz', `no kernel config and no tick counter readable (tried: ${tried.join('; ')})`);
}

async function readSample(
  ctx: CollectorContext,
  path: string,
  parse: (text: string, wallSeconds: number) => JiffySample | undefined,
): Promise<{ ok: true; sample: JiffySample } | { ok: false; reason: string }> {
  const read = await ctx.host.readText(path, { maxBytes: 4 * 1024 * 1024 });
  if (!read.ok) return read;
  const sample = parse(read.text, ctx.now() / 1000);
  return sample ? { ok: true, sample } : { ok: false, reason: `${path} has no jiffies counter` };
}

export default kernelCollector;
