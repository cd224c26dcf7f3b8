// Issue 17 item 16: `--startup-jitter 0s` means "no start-up delay" and is accepted; a zero
// --interval still is not a duration (an agent that scans in a loop is no agent). Issue 37 item 7:
// nor is one longer than a timer can wait.
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

test('durations stop at 576h (24 days): a Node timer waits at most ~24.8 days, a longer one fires at once (issue 37 item 7)', () => {
  assert.equal(parseDuration('--interval', '576h'), 576 * 3_600_000);
  for (const value of ['1000h', '577h', '34561m', '600h', '596h32m', '2147483648ms']) {
    assert.throws(() => parseDuration('--interval', value), new RegExp(`--interval "${value}" is longer than 576h \\(24 days\\), the longest a timer waits .*use at most 576h, e\\.g\\. 24h`), value);
  }
  assert.throws(() => parseDuration('--timeout', '1000h'), /--timeout "1000h" is longer than 576h/);
});
