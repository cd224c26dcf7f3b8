// Inventory from systeminformation, for people reading the facts: physical cores and memory size.
// It shells out to host tools by name (lscpu, dmidecode) and misreads VMs and containers (README), so
// it runs only on the real root, with PATH limited to the system directories, and no rule may decide
// on these keys.
import type { Collector } from './collector.ts';
import { withSystemPath } from '../host/exec.ts';

const SOURCE = 'systeminformation';

const inventoryCollector: Collector = {
  name: 'inventory',
  provides: ['inventory.cpuBrand', 'inventory.physicalCores', 'inventory.memoryBytes'],
  async collect({ host, facts }) {
    if (!host.isRealRoot) {
      for (const key of this.provides) facts.unknown(key, `inventory is read only on the real root, not --host-root ${host.root}`, SOURCE);
      return;
    }
    const { default: si } = await import('systeminformation');
    const [cpu, memory] = await withSystemPath(() => Promise.all([si.cpu(), si.mem()]));
    const brand = [cpu.manufacturer, cpu.brand].filter(Boolean).join(' ');
    if (brand) facts.set('inventory.cpuBrand', brand, SOURCE);
    else facts.unknown('inventory.cpuBrand', 'systeminformation returned no CPU brand', SOURCE);
    if (cpu.physicalCores > 0) facts.set('inventory.physicalCores', cpu.physicalCores, SOURCE);
    else facts.unknown('inventory.physicalCores', 'systeminformation returned no core count', SOURCE);
    if (memory.total > 0) facts.set('inventory.memoryBytes', memory.total, SOURCE);
    else facts.unknown('inventory.memoryBytes', 'systeminformation returned no memory size', SOURCE);
  },
};

export default inventoryCollector;
