// Runs shortReason and findingLine off the test's thread, so a test can cap their time and end a
// run that never returns (a backtracking regex blocks the thread that runs it).
import { parentPort } from 'node:worker_threads';
import { findingLine, shortReason } from '../../src/publish/finding-line.ts';
import type { Finding } from '../../src/report/types.ts';

parentPort?.on('message', (texts: string[]) => {
  const out = texts.map((text) => {
    const finding = { status: 'unknown', ruleId: 'scheduler-api-qps', message: text } as Finding;
    return { reason: shortReason(text, 100), line: findingLine(finding), whole: shortReason(text, Number.MAX_SAFE_INTEGER).length };
  });
  parentPort?.postMessage(out);
});
