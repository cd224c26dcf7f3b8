// Tests that need a real tool (etcd, fio, promtool, kubectl, tuned-adm) call requireTool. Under
// CI=true a missing tool fails the test; locally the test is skipped with a message saying what to install.
import { execFileSync } from 'node:child_process';
import type { TestContext } from 'node:test';

export function toolPath(binary: string): string | undefined {
  try {
    return execFileSync('sh', ['-c', `command -v ${binary}`], { encoding: 'utf8' }).trim() || undefined;
  } catch {
    return undefined;
  }
}

/** Returns the tool's path, or undefined after skipping the test (locally) / throws (in CI). */
export function requireTool(t: TestContext, binary: string, debianPackage: string): string | undefined {
  const found = toolPath(binary);
  if (found) return found;
  const message = `${binary} not found: install it with "apt-get install ${debianPackage}" (.ci/run does this)`;
  if (process.env.CI === 'true') throw new Error(message);
  t.skip(message);
  return undefined;
}
