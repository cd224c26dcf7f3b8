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

test('--startup-window: 1m to 24h and at least --interval, else exit 2 naming the flag and the fix', async () => {
  const { startupWindow } = await import('../../src/cli/commands/agent.ts');
  assert.equal(startupWindow(undefined, 5 * 60_000), 3_600_000, 'default 1h');
  assert.equal(startupWindow('2m', 15_000), 120_000);
  assert.throws(() => startupWindow('30s', 15_000), /^UsageError: --startup-window 30s is outside 1m to 24h: give the time the pod start-up figures should cover, e\.g\. 1h$/);
  assert.throws(() => startupWindow('25h', 60_000), /--startup-window 25h is outside 1m to 24h/);
  assert.throws(() => startupWindow('5m', 10 * 60_000), /--startup-window 5m is shorter than --interval 10m: pods started between two scans would never be counted; set --startup-window to at least 10m/);
  assert.throws(() => startupWindow(undefined, 2 * 3_600_000), /--startup-window 1h \(the default\) is shorter than --interval 2h/);
  assert.throws(() => startupWindow('an hour', 60_000), /--startup-window "an hour" is not a duration/);
});
