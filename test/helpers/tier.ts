// A test tier: what a suite needs (real binaries, packages). Missing, the suite is skipped locally with
// one line on what to install, and is an error under CI=true. node:test counts no test of a skipped
// describe() (a run that met no server would say "skipped 0"), so a skipped test stands for the suite.
import { test } from 'node:test';

export function tier(missing: string | undefined, what: string): { skip?: string } {
  if (!missing) return {};
  if (process.env.CI === 'true') throw new Error(missing);
  test(`${what}: skipped`, { skip: missing }, () => {});
  return { skip: missing };
}
