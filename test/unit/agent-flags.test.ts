// Issue 17 item 16: `--startup-jitter 0s` means "no start-up delay" and is accepted; a zero
// --interval still is not a duration (an agent that scans in a loop is no agent).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseDuration } from '../../src/cli/commands/agent.ts';

test('--startup-jitter takes 0s and 0; --interval does not', () => {
  assert.equal(parseDuration('--startup-jitter', '0s', { allowZero: true }), 0);
  assert.equal(parseDuration('--startup-jitter', '0', { allowZero: true }), 0);
  assert.equal(parseDuration('--startup-jitter', '1m30s', { allowZero: true }), 90_000);
  assert.throws(() => parseDuration('--interval', '0s'), /--interval "0s" is not a duration; use e\.g\. 30s/);
  assert.throws(() => parseDuration('--startup-jitter', '-1s', { allowZero: true }), /--startup-jitter "-1s" is not a duration; use e\.g\. 0s, 30s/);
});
