// The collectors, in the order they run: later ones may read earlier ones' facts
// (tuned's recommendation needs cpu.virtualized).
import type { Collector } from './collector.ts';
import kernel from './kernel.ts';
import cpu from './cpu.ts';
import tuned from './tuned.ts';
import nodeRole from './node-role.ts';
import inventory from './inventory.ts';
import kubelet from './kubelet.ts';
import controlPlaneLimits from './control-plane-limits.ts';
import throttling from './throttling.ts';

export const COLLECTORS: readonly Collector[] = [kernel, cpu, tuned, nodeRole, inventory, kubelet, controlPlaneLimits, throttling];
